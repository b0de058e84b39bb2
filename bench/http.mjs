// HTTP figures: autocannon in this process against a server in a child process (bench/http-server.mjs), over
// loopback only.
import { fork } from 'node:child_process';
import { request as httpRequest } from 'node:http';
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
 * Runs one load: `connections` requests in flight for `durationS` seconds, or until `amount` requests were answered
 * when it is given. Every request is the next of `pool` ({ url, headers, body }), from a counter shared by all
 * connections. When the pool runs out the load stops (within autocannon's 100 ms sampling tick; the few requests sent
 * meanwhile wrap around to the pool's start and are redeliveries). `latencies`, when given, receives every answer's
 * time in ms, so that the percentiles of several loads can be taken together.
 */
async function load(port, pool, connections, durationS, amount, latencies) {
  let next = 0;
  let exhausted = false;
  const started = performance.now();
  // Timed to the last answer: autocannon settles only at its next 100 ms sampling tick, which would round a short
  // load's time up to a tenth of a second.
  let answeredAt = started;
  const instance = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    pipelining: 1,
    ...(amount ? { amount } : { duration: durationS }),
    sampleInt: 100,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        setupRequest(request) {
          if (next === pool.length && !exhausted) {
            exhausted = true;
            instance.stop();
          }
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
  instance.on('response', (_client, _status, _bytes, responseTime) => {
    answeredAt = performance.now();
    latencies?.push(responseTime);
  });
  const result = await instance;
  return { result, seconds: (answeredAt - started) / 1000, exhausted, sent: Math.min(next, pool.length) };
}

/** One request outside the load, answered with its status (node:http: fetch would replace the Host header). */
function send(port, request) {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      { host: '127.0.0.1', port, method: 'POST', path: request.url, headers: request.headers },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}

/** The value at fraction `q` (0–1) of `values` sorted, nearest rank. */
function percentile(values, q) {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/**
 * Starts one server and makes it ready to be measured: checks that it accepts one valid delivery and refuses one
 * whose body no longer matches its signature (so a server that skips the check cannot be measured), then warms it
 * up with `warmupRequests` other deliveries (a count, not a time: every server gets the same warm-up however loaded
 * the machine is; its first `coldRequests` are timed on their own, as the figure of a server that has just started).
 *
 * The returned `measure(durationS)` loads it with the next deliveries of `pool` for that long; a run is made of
 * several such slices, alternating with the other servers of its group (see `runGroup`). `result(slices)` adds the
 * slices up into one run: requests and seconds summed, CPU summed over the requests answered, percentiles over every
 * answer of every slice.
 */
export async function startHttp(mode, options) {
  const { setup, pool, warmup, valid, forged, connections, warmupRequests, coldRequests = 0 } = options;
  const server = startServer(mode, setup);
  try {
    const port = await server.port();
    const accepted = await send(port, valid);
    if (accepted !== 200) throw new Error(`${mode} server answered ${accepted} to a valid delivery`);
    const refused = await send(port, forged);
    if (refused < 400 || refused > 499) throw new Error(`${mode} server answered ${refused} to a forged delivery`);
    let coldRequestsPerSecond;
    if (coldRequests > 0) {
      const cold = await load(
        port,
        warmup.slice(0, coldRequests),
        Math.min(connections, coldRequests),
        0,
        coldRequests,
      );
      coldRequestsPerSecond = cold.result['2xx'] / cold.seconds;
    }
    const rest = warmupRequests - coldRequests;
    if (rest > 0) await load(port, warmup.slice(coldRequests), Math.min(connections, rest), 0, rest);
    let offset = 0;
    const latencies = [];
    return {
      mode,
      stop: () => server.stop(),
      async measure(durationS) {
        server.start();
        const { result, seconds, exhausted, sent } = await load(
          port,
          pool.slice(offset),
          connections,
          durationS,
          0,
          latencies,
        );
        offset = Math.min(pool.length - 1, offset + sent);
        const stats = await server.stats();
        const statusCodes = {};
        for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = count;
        return { result, seconds, exhausted, stats, statusCodes };
      },
      result(slices) {
        const sum = (pick) => slices.reduce((total, slice) => total + pick(slice), 0);
        const answered = sum((s) => s.stats.answered);
        const seconds = sum((s) => s.seconds);
        const statusCodes = {};
        for (const slice of slices) {
          for (const [code, count] of Object.entries(slice.statusCodes)) {
            statusCodes[code] = (statusCodes[code] ?? 0) + count;
          }
        }
        return {
          mode,
          requestsPerSecond: sum((s) => s.result['2xx']) / seconds,
          coldRequestsPerSecond,
          seconds,
          slices: slices.length,
          p50Ms: Math.round(percentile(latencies, 0.5)),
          p99Ms: Math.round(percentile(latencies, 0.99)),
          total: sum((s) => s.result.requests.total),
          non2xx: sum((s) => s.result.non2xx),
          errors: sum((s) => s.result.errors),
          timeouts: sum((s) => s.result.timeouts),
          statusCodes,
          exhausted: slices.some((s) => s.exhausted),
          handled: sum((s) => s.stats.handled),
          answered,
          cpuPerRequest: sum((s) => s.stats.cpuMicros) / answered,
          systemPerRequest: sum((s) => s.stats.systemMicros) / answered,
        };
      },
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/**
 * Measures the servers of one group in turn, `slices` times each for `durationS / slices` seconds, the order
 * reversed every slice (A B B A A B …): the machine's speed changes from one second to the next, and a ratio taken
 * between short alternating slices sees both servers in the same moments, where two back-to-back runs of seconds
 * each can fall in a fast and a slow one. Servers are started and warmed first, one after the other, and all stay
 * up (idle but for their turn) until the group is done.
 */
export async function runGroup(modes, options, durationS, slices) {
  const started = [];
  try {
    for (const { mode, setup } of modes) started.push(await startHttp(mode, { ...options, setup }));
    const measured = started.map(() => []);
    for (let slice = 0; slice < slices; slice++) {
      const order = started.map((_, i) => i);
      if (slice % 2 === 1) order.reverse();
      for (const i of order) measured[i].push(await started[i].measure(durationS / slices));
    }
    return started.map((server, i) => server.result(measured[i]));
  } finally {
    for (const server of started) await server.stop();
  }
}
