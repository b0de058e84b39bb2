// Deliveries per second through the Node handler with each store, in one
// run: the memory store; the PostgreSQL store beside the minimal SQL with the
// same guarantees (a claim that inserts or takes over an expired row, then an
// update: two round trips); the inbox behind the memory store (the inbox's own
// unique key deduplicates: one round trip) and behind the PostgreSQL store
// (three), beside the minimal store + inbox SQL (the claim, then the insert
// and the completion in one statement: two round trips). autocannon in this
// process, the receiver in a child process, a durable (fsync on) PostgreSQL
// cluster started here; loopback only.
//
//   npm run build && node bench/stores.mjs
//
// Environment: BENCH_S (seconds per store, default 10), BENCH_ROUNDS (turns the stores take, default 5), BENCH_CONNECTIONS
// (requests in flight, default 32), BENCH_POOL (distinct signed deliveries,
// default 20000: every request of a turn is a new payment until the pool wraps).
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
  const table = `bench_dedup_${mode.replaceAll('-', '_')}`;
  if (mode !== 'memory') {
    const { default: pg } = await import('pg');
    pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 16 });
    pool.on('error', () => {});
    store = createPostgresStore({ client: pool, table });
    await store.migrate();
  }
  if (mode === 'memory-inbox' || mode === 'postgres-inbox') {
    const inbox = createPostgresInbox({ client: pool, table: `bench_inbox_${mode.replace('-', '_')}` });
    await inbox.migrate();
    if (mode === 'memory-inbox') store = createMemoryStore({ maxEntries: 1_000_000 });
    onPayment = async (webhook) => {
      await inbox.enqueue(webhook);
      handled++;
    };
  }
  if (mode === 'minimal-store' || mode === 'minimal-inbox') {
    ({ store, onPayment } = minimal(pool, table, mode === 'minimal-inbox', () => handled++));
    const inbox = createPostgresInbox({ client: pool, table: 'bench_inbox_minimal' });
    await inbox.migrate();
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

/**
 * The least SQL with the store's guarantees: a claim that inserts the key or
 * takes over an expired row, then an UPDATE of the caller's own claim; with
 * `inbox`, onPayment's insert and the completion in one statement.
 */
function minimal(pool, table, inbox, count) {
  const tokens = new Map();
  const store = {
    async claim(key, { leaseMs }) {
      const token = crypto.randomUUID();
      const { rows } = await pool.query(
        `INSERT INTO ${table} AS t (key, state, token, expires_at)
VALUES ($1, 'claimed', $2, clock_timestamp() + $3::float8 * interval '1 millisecond')
ON CONFLICT (key) DO UPDATE SET state = 'claimed', token = excluded.token, expires_at = excluded.expires_at
WHERE t.expires_at <= clock_timestamp() RETURNING t.token`,
        [key, token, leaseMs],
      );
      if (rows.length === 0) return { status: 'completed' };
      tokens.set(key, token);
      return { status: 'claimed', token };
    },
    async complete(key, token, { retentionMs }) {
      if (inbox) return; // done by onPayment's statement
      await pool.query(
        `UPDATE ${table} SET state = 'completed', token = NULL,
  expires_at = clock_timestamp() + $3::float8 * interval '1 millisecond'
WHERE key = $1 AND state = 'claimed' AND token = $2`,
        [key, token, retentionMs],
      );
    },
    async release() {},
  };
  const onPayment = inbox
    ? async (webhook) => {
        const key = `${webhook.id}:${webhook.status}`; // the handler's default dedupKey
        await pool.query(
          `WITH stored AS (
  INSERT INTO bench_inbox_minimal (delivery_id, status, body) VALUES ($1, $2, $3::json)
  ON CONFLICT (delivery_id, status) DO NOTHING)
UPDATE ${table} SET state = 'completed', token = NULL, expires_at = clock_timestamp() + interval '7 days'
WHERE key = $4 AND state = 'claimed' AND token = $5`,
          [webhook.id, webhook.status, JSON.stringify(webhook.raw), key, tokens.get(key)],
        );
        tokens.delete(key);
        count();
      }
    : count;
  return { store, onPayment };
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
  const { startPostgresServer } = await import('../scripts/lib/postgres-server.mjs');
  const durationS = Number(process.env.BENCH_S ?? 10);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
  const poolSize = Number(process.env.BENCH_POOL ?? 20_000);

  const postgres = await startPostgresServer({ durable: true });
  try {
    process.stdout.write(`signing ${poolSize} distinct deliveries… `);
    const all = await makeDeliveries(poolSize + 500);
    const warmup = all.slice(0, 500);
    const deliveries = all.slice(500);
    console.log('done');
    const modes = ['memory', 'minimal-store', 'postgres-store', 'minimal-inbox', 'memory-inbox', 'postgres-inbox'];
    // The modes take turns, round after round: a machine whose load changes meanwhile weighs on all alike.
    const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
    const byMode = new Map(
      modes.map((mode) => [
        mode,
        {
          mode,
          requests: 0,
          seconds: 0,
          rates: [],
          p50: [],
          p99: [],
          handled: 0,
          statuses: {},
          errors: 0,
          wrapped: false,
        },
      ]),
    );
    const { default: pg } = await import('pg');
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    for (let round = 0; round < rounds; round++) {
      // Every other round the other way round, and each turn from a checkpointed cluster: with fsync on,
      // the writes of one set-up are flushed during the next one's turn, which would weigh on whichever
      // always came second.
      for (const mode of round % 2 === 0 ? modes : [...modes].reverse()) {
        // Every turn from empty tables (the memory store starts empty with its process): otherwise a set-up's
        // later turns would meet deliveries its earlier ones stored, and a redelivery costs each set-up differently.
        const { rows: tables } = await admin.query(`SELECT tablename FROM pg_tables WHERE tablename LIKE 'bench\\_%'`);
        if (tables.length > 0) await admin.query(`TRUNCATE ${tables.map((table) => table.tablename).join(', ')}`);
        await admin.query('CHECKPOINT');
        const server = child(mode, { DATABASE_URL: postgres.url, PUBLIC_KEY: PUBLIC_KEY_PEM });
        const { port } = await server.next();
        await load(autocannon, port, warmup, connections, 1);
        server.send('start');
        const { result, sent } = await load(autocannon, port, deliveries, connections, durationS / rounds);
        server.send('stats');
        const { handled } = await server.next();
        await server.stop();
        const row = byMode.get(mode);
        row.requests += result.requests.total;
        row.seconds += durationS / rounds;
        row.rates.push(result.requests.total / (durationS / rounds));
        row.p50.push(result.latency.p50);
        row.p99.push(result.latency.p99);
        row.handled += handled;
        row.errors += result.errors + result.timeouts;
        row.wrapped ||= sent > deliveries.length;
        for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) {
          row.statuses[code] = (row.statuses[code] ?? 0) + count;
        }
        console.log(
          `  round ${round + 1} ${mode}: ${(result.requests.total / (durationS / rounds)).toFixed(0)}/s; load average ${loadavg()[0].toFixed(2)}`,
        );
      }
    }
    await admin.end();
    const median = (values) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
    const rows = modes.map((mode) => {
      const row = byMode.get(mode);
      return { ...row, perSecond: row.requests / row.seconds, p50: median(row.p50), p99: median(row.p99) };
    });
    const base = rows[0].perSecond;
    console.log(
      `\n${durationS} s per store in ${rounds} turns, ${connections} requests in flight, every request a new signed delivery`,
    );
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
    // Each ratio is the median of the rounds' own ratios: the two set-ups compared ran next to each other in every
    // round, so a round in which the machine was busier weighs on both.
    const ratio = (mode, base) => {
      const perRound = byMode.get(mode).rates.map((value, round) => value / byMode.get(base).rates[round]);
      return `${median(perRound).toFixed(2)}× (rounds: ${perRound.map((value) => value.toFixed(2)).join(', ')})`;
    };
    console.log(`\nPostgreSQL store / minimal store SQL: ${ratio('postgres-store', 'minimal-store')} (target ≥ 0.95×)`);
    console.log(
      `inbox behind the memory store / minimal store + inbox SQL: ${ratio('memory-inbox', 'minimal-inbox')} (target ≥ 0.9×)`,
    );
    console.log(
      `inbox behind the PostgreSQL store / minimal store + inbox SQL: ${ratio('postgres-inbox', 'minimal-inbox')}`,
    );
  } finally {
    await postgres.destroy();
  }
}
