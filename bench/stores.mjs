// Deliveries per second through the Node handler with each store, in one
// run: the memory store, the PostgreSQL store, and the PostgreSQL store with
// the inbox as onPayment (the recommended PostgreSQL set-up). autocannon in
// this process, the receiver in a child process, a durable (fsync on)
// PostgreSQL cluster started here; loopback only.
//
//   npm run build && node --import tsx bench/stores.mjs
//
// tsx is only needed to load the test helper that starts the cluster.
// Environment: BENCH_S (seconds per store, default 4), BENCH_CONNECTIONS
// (requests in flight, default 32), BENCH_POOL (distinct signed deliveries,
// default 12000: every request is a new payment until the pool wraps).
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);

if (process.argv[2] === 'server') await serve(process.argv[3]);
else await main();

async function serve(mode) {
  const { createNodeWebhookHandler } = await import('payhook/node');
  const { createMemoryStore } = await import('payhook');
  const { createPostgresInbox, createPostgresStore } = await import('payhook/postgres');
  let pool;
  let handled = 0;
  const count = () => {
    handled++;
  };
  let store = createMemoryStore({ maxEntries: 1_000_000 });
  let onPayment = count;
  if (mode !== 'memory') {
    const { default: pg } = await import('pg');
    pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 16 });
    pool.on('error', () => {});
    store = createPostgresStore({ client: pool, table: `bench_dedup_${mode.replace('-', '_')}` });
    await store.migrate();
  }
  if (mode === 'postgres-inbox') {
    const inbox = createPostgresInbox({ client: pool, table: 'bench_inbox' });
    await inbox.migrate();
    onPayment = async (webhook) => {
      await inbox.enqueue(webhook);
      handled++;
    };
  }
  const handler = createNodeWebhookHandler({
    publicKeys: process.env.PUBLIC_KEY,
    allowAnyHost: true, // the deliveries are signed for one Host; pinning it would cost the same
    store,
    onPayment,
    logger: false,
  });
  const server = createServer(handler);
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', (message) => {
    if (message === 'start') handled = 0;
    if (message === 'stats') process.send({ handled });
    if (message === 'exit') {
      server.closeAllConnections();
      server.close(() => Promise.resolve(pool?.end()).then(() => process.exit(0)));
    }
  });
}

function child(mode, env) {
  const proc = fork(SELF, ['server', mode], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const inbox = [];
  const waiting = [];
  proc.on('message', (message) => (waiting.length > 0 ? waiting.shift()(message) : inbox.push(message)));
  const next = () => new Promise((resolve) => (inbox.length > 0 ? resolve(inbox.shift()) : waiting.push(resolve)));
  return {
    next,
    send: (message) => proc.send(message),
    stop: () => new Promise((resolve) => (proc.once('exit', resolve), proc.send('exit'))),
  };
}

async function load(autocannon, port, deliveries, connections, durationS) {
  let next = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration: durationS,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        setupRequest(request) {
          const delivery = deliveries[next++ % deliveries.length];
          return {
            ...request,
            method: 'POST',
            path: delivery.url,
            headers: { ...delivery.headers },
            body: delivery.body,
          };
        },
      },
    ],
  });
  return { result, sent: next };
}

async function main() {
  const { default: autocannon } = await import('autocannon');
  const { makeDeliveries, PUBLIC_KEY_PEM } = await import('./deliveries.mjs');
  const { startPostgresServer } = await import('../test/helpers/postgres-server.ts');
  const durationS = Number(process.env.BENCH_S ?? 4);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
  const poolSize = Number(process.env.BENCH_POOL ?? 12_000);

  const postgres = await startPostgresServer({ durable: true });
  try {
    process.stdout.write(`signing ${poolSize} distinct deliveries… `);
    const all = await makeDeliveries(poolSize + 500);
    const warmup = all.slice(0, 500);
    const deliveries = all.slice(500);
    console.log('done');
    const rows = [];
    for (const mode of ['memory', 'postgres-store', 'postgres-inbox']) {
      const server = child(mode, { DATABASE_URL: postgres.url, PUBLIC_KEY: PUBLIC_KEY_PEM });
      const { port } = await server.next();
      await load(autocannon, port, warmup, connections, 1);
      server.send('start');
      const { result, sent } = await load(autocannon, port, deliveries, connections, durationS);
      server.send('stats');
      const { handled } = await server.next();
      await server.stop();
      const statuses = Object.fromEntries(
        Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count]),
      );
      rows.push({
        mode,
        perSecond: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        handled,
        wrapped: sent > deliveries.length,
        statuses,
        errors: result.errors + result.timeouts,
      });
      console.log(`  ${mode}: ${JSON.stringify(rows.at(-1))}; load average ${loadavg()[0].toFixed(2)}`);
    }
    const base = rows[0].perSecond;
    console.log(`\n${durationS} s per store, ${connections} requests in flight, every request a new signed delivery`);
    console.log('| store | deliveries/s | × memory | p50 ms | p99 ms | handled | answers |');
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | --- |');
    for (const row of rows) {
      const answers = Object.entries(row.statuses)
        .map(([code, n]) => `${n}× ${code}`)
        .join(', ');
      console.log(
        `| ${row.mode} | ${Math.round(row.perSecond).toLocaleString('en-US')} | ${(row.perSecond / base).toFixed(2)}× | ${row.p50} | ${row.p99} | ${row.handled} | ${answers}${row.wrapped ? ' (pool wrapped: some were redeliveries)' : ''}${row.errors > 0 ? `, ${row.errors} errors` : ''} |`,
      );
    }
  } finally {
    await postgres.destroy();
  }
}
