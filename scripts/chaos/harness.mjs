// The receivers under test and the sender that plays the payment service.
// Everything comes from the built package's public entries, so the run keeps
// working whatever the internals become.
import { createServer } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { createMemoryStore } from 'payhook';
import { createNodeWebhookHandler } from 'payhook/node';
import { createRedisStore } from 'payhook/redis';
import { createTestWebhook, signWebhook, TEST_KEY_PAIR } from 'payhook/testing';
import { createWebhookHandler } from 'payhook/web';
import { performance } from 'node:perf_hooks';
import { judgeTiming, percentile, round, TARGETS } from './report.mjs';
import { createAgent, HOST, post, sleep } from './net.mjs';

export const SERVERS = ['node', 'web'];
export const STORES = ['memory', 'ioredis', 'node-redis'];
export const PATH = '/hook';

let prefixes = 0;

function makeStore(kind, clients, memoryOptions) {
  if (kind === 'memory') return createMemoryStore(memoryOptions);
  // A fresh prefix per receiver: scenarios share one redis-server.
  return createRedisStore({ client: clients[kind], prefix: `chaos:${process.pid}:${++prefixes}:` });
}

/**
 * Starts one receiver on a free loopback port: `server` is `node`
 * (node:http + createNodeWebhookHandler) or `web` (@hono/node-server +
 * createWebhookHandler); `store` is `memory`, `ioredis` or `node-redis`.
 *
 * onPayment waits for `work(webhook, context)` (when given), then records
 * the delivery in the ledger: only a resolved onPayment counts as handled.
 * `options` are spread last, so a scenario can replace any default, and
 * `defaults: true` leaves out the run's own logger.
 */
export async function startReceiver({ server, store, clients, ledger, work, options = {}, memory, defaults = false }) {
  const logs = [];
  let handler;
  let listener;
  if (server === 'node') {
    listener = createServer((req, res) => handler(req, res));
  } else {
    listener = createAdaptorServer({ fetch: (request) => handler(request), overrideGlobalObjects: false });
  }
  await new Promise((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(0, HOST, resolve);
  });
  const port = listener.address().port;
  const url = `http://${HOST}:${port}${PATH}`;
  const full = {
    publicKeys: TEST_KEY_PAIR.publicKey,
    webhookUrl: url,
    store: makeStore(store, clients, memory),
    ...(defaults ? {} : { logger: (record) => logs.push(record) }),
    async onPayment(webhook, context) {
      if (work !== undefined) await work(webhook, context);
      ledger.handled(webhook.id);
    },
    ...options,
  };
  if (full.allowAnyHost === true) delete full.webhookUrl;
  handler = server === 'node' ? createNodeWebhookHandler(full) : createWebhookHandler(full);
  const agent = createAgent();
  return {
    server,
    store,
    name: `${server}/${store}`,
    port,
    url,
    host: `${HOST}:${port}`,
    agent,
    logs,
    async close() {
      agent.destroy();
      listener.closeAllConnections?.();
      await new Promise((resolve) => listener.close(() => resolve()));
    },
  };
}

/** Signs `body` as the service would for `receiver` (`signedPath` may hold a query). */
export function sign(receiver, body, { signedPath = PATH, timestamp } = {}) {
  return signWebhook(body, {
    url: `http://${receiver.host}${signedPath}`,
    ...(timestamp === undefined ? {} : { timestamp }),
  });
}

/** Sends an already signed delivery, to `path` (the signed one by default); records the answer. */
export async function send(receiver, ledger, id, signed, { path, body, headers, timeoutMs } = {}) {
  const target = path ?? new URL(signed.url).pathname + new URL(signed.url).search;
  const answer = await post({
    port: receiver.port,
    path: target,
    headers: headers ?? signed.headers,
    body: body ?? signed.body,
    agent: receiver.agent,
    timeoutMs,
  });
  ledger.answer(id, answer.status);
  return answer;
}

/**
 * Delivers `body` as the service does: signs each attempt when it starts and
 * retries every answer but 200, after `delayMs`, up to `attempts` in all or
 * until `stopAt` (a time). Resolves with the answers, in order.
 */
export async function deliver(
  receiver,
  ledger,
  body,
  { attempts = 1, delayMs = 100, stopAt = Infinity, expect = 'handle' } = {},
) {
  ledger.sent(body.id, expect);
  const answers = [];
  for (let attempt = 1; ; attempt++) {
    const signed = await sign(receiver, body);
    const answer = await send(receiver, ledger, body.id, signed);
    answers.push(answer);
    if (answer.status === 200 || attempt >= attempts || Date.now() + delayMs > stopAt) return answers;
    await sleep(delayMs);
  }
}

/** Runs `task(item)` over `items` with at most `limit` at once. */
export async function pool(items, limit, task) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** A promise with its resolve, to hold handlers until the scenario lets them go. */
export function gate() {
  let open;
  const promise = new Promise((resolve) => (open = resolve));
  return { promise, open };
}

/** The code of a JSON error answer, else its status. */
export function verdictOf(answer) {
  if (answer.status === 200) return 'ok';
  try {
    const code = JSON.parse(answer.text).code;
    if (typeof code === 'string') return code;
  } catch {
    // not JSON: fall through to the status
  }
  return `HTTP ${answer.status}`;
}

/** Resolves when `condition()` holds, or after `timeoutMs` (with false). */
export async function waitFor(condition, timeoutMs, stepMs = 10) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await sleep(stepMs);
  }
  return true;
}

/**
 * Sends `count` new valid deliveries to `receiver`, one every `intervalMs`,
 * while `load` (started first, stopped by the function it returns) keeps it
 * busy. Each answer is timed from when its delivery was due (a stalled loop
 * delays the send too; an answer that never came counts as `timeoutMs`);
 * the p99 is held to TARGETS.validP99Ms, and the deliveries not answered 200
 * are delivered again once the load stops, as the service retries them.
 */
export async function validUnderLoad(ctx, receiver, ledger, { count, intervalMs, timeoutMs, load, during }) {
  const bodies = Array.from({ length: count }, () => createTestWebhook());
  const signed = await pool(bodies, 8, (webhook) => sign(receiver, webhook));
  const stopLoad = load();
  await sleep(200);
  const latencies = [];
  const refused = [];
  const start = performance.now();
  const inFlight = [];
  for (let k = 0; k < count; k++) {
    const due = start + k * intervalMs;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    ledger.sent(bodies[k].id, 'handle');
    inFlight.push(
      send(receiver, ledger, bodies[k].id, signed[k], { timeoutMs }).then((answer) => {
        latencies.push(answer.status === 0 ? Math.max(timeoutMs, performance.now() - due) : performance.now() - due);
        if (answer.status !== 200) refused.push(bodies[k]);
      }),
    );
  }
  await Promise.all(inFlight);
  await stopLoad();
  const p99 = percentile(latencies, 0.99);
  ledger.metric('validP99Ms', round(p99));
  ledger.metric('validP50Ms', round(percentile(latencies, 0.5)));
  if (!(p99 <= TARGETS.validP99Ms)) {
    judgeTiming(ctx, ledger, `valid deliveries p99 ${round(p99)} ms while ${during}, over ${TARGETS.validP99Ms} ms`);
  }
  if (refused.length > 0) ledger.note(`${refused.length} valid deliveries not answered 200 while ${during}; retried`);
  await pool(refused, 4, (webhook) => deliver(receiver, ledger, webhook, { attempts: 10 }));
}
