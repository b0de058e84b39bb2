// HTTP figures: autocannon in this process against a server in a child
// process (bench/http-server.mjs), over loopback only.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const SERVER = fileURLToPath(new URL('./http-server.mjs', import.meta.url));

function startServer(mode, setup) {
  // BENCH_SERVER_ARGS passes Node flags to the server, e.g. '--cpu-prof --cpu-prof-dir=/tmp/prof'.
  const execArgv = (process.env.BENCH_SERVER_ARGS ?? '').split(' ').filter(Boolean);
  const child = fork(SERVER, [mode], {
    execArgv,
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const messages = [];
  const waiters = [];
  child.on('message', (message) => {
    const waiter = waiters.shift();
    if (waiter) waiter.resolve(message);
    else messages.push(message);
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.once('exit', (code) => {
    for (const waiter of waiters.splice(0)) waiter.reject(new Error(`${mode} server exited (code ${code})`));
  });
  const next = (timeoutMs = 30_000) =>
    new Promise((resolve, reject) => {
      if (messages.length > 0) return resolve(messages.shift());
      const timer = setTimeout(() => reject(new Error(`${mode} server did not answer in ${timeoutMs} ms`)), timeoutMs);
      waiters.push({
        resolve: (m) => (clearTimeout(timer), resolve(m)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
    });
  child.send(setup);
  return {
    async port() {
      const message = await next();
      if (message.error) throw new Error(`${mode} server failed to start:\n${message.error}`);
      return message.port;
    },
    start() {
      child.send('start');
    },
    async stats() {
      child.send('stats');
      return (await next()).stats;
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.send('exit');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Runs one load test: `connections` requests in flight for `durationS`
 * seconds. Every request is one of the pre-signed `pool` deliveries, taken in
 * turn from a counter shared by all connections, so no two requests in flight
 * carry the same delivery until the pool wraps around.
 */
function load(port, pool, connections, durationS) {
  let next = 0;
  const run = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    pipelining: 1,
    duration: durationS,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        setupRequest(request) {
          const delivery = pool[next++ % pool.length];
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
  return run.then((result) => ({ result, sent: Math.max(0, next - 1) }));
}

export async function runHttp(mode, { pool, warmup, pem, connections, durationS, storeOptions, packageDir }) {
  const setup = { pem, storeOptions, packageDir };
  if (mode === 'bare') setup.canonicalByBody = new Map([...warmup, ...pool].map((d) => [d.body, d.canonicalBytes]));
  const server = startServer(mode, setup);
  try {
    const port = await server.port();
    // One second on other deliveries first, so that both servers are measured warm (JIT, sockets).
    await load(port, warmup, connections, 1);
    server.start();
    const { result, sent } = await load(port, pool, connections, durationS);
    const stats = await server.stats();
    const statusCodes = {};
    for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = count;
    return {
      mode,
      requestsPerSecond: result.requests.average,
      p99Ms: result.latency.p99,
      p50Ms: result.latency.p50,
      total: result.requests.total,
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      statusCodes,
      handled: stats.handled,
      answered: stats.answered,
      cpuPerRequest: stats.cpuPerRequest,
      systemPerRequest: stats.systemPerRequest,
      sent,
    };
  } finally {
    await server.stop();
  }
}
