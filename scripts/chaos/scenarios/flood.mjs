// Issue 12 defect 2: an unsigned body of the largest size the handler takes
// by default, made of as many tiny keys as fit, was parsed and sorted before
// the signature check and blocked the event loop for about half a second.
// Measured here: the event-loop time one such request costs (alone), and the
// p99 of genuine deliveries while two clients flood such requests.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { DEFAULT_MAX_BODY_BYTES } from 'payhook';
import { createTestWebhook } from 'payhook/testing';
import { judgeTiming, percentile, round, TARGETS } from '../report.mjs';
import { deliver, sign, startReceiver, validUnderLoad } from '../harness.mjs';
import { post } from '../net.mjs';

/** `{"0":0,"1":0,…}` with base-36 names, padded to exactly `bytes`: the most keys that size holds. */
export function maximalBody(bytes) {
  const parts = [];
  let size = 2 + 7; // the braces and the filler entry `,"~":""`
  for (let i = 0; ; i++) {
    const entry = `"${i.toString(36)}":0`;
    if (size + entry.length + 1 > bytes) break;
    parts.push(entry);
    size += entry.length + 1;
  }
  const head = `{${parts.join(',')}`;
  return Buffer.from(`${head},"~":"${'x'.repeat(bytes - head.length - 8)}"}`);
}

/** Headers of a request that cannot verify: a random signature of a real one's length. */
function unsignedHeaders(receiver, signatureBytes) {
  return {
    host: receiver.host,
    'content-type': 'application/json',
    'x-api-timestamp': String(Date.now()),
    signature: randomBytes(signatureBytes).toString('base64'),
  };
}

export const flood = {
  id: '2',
  name: 'flood',
  title: 'unsigned maximal bodies of tiny keys (default maxBodyBytes), two flooding clients vs valid deliveries',
  // The unsigned requests never reach the store; three receivers cover both
  // servers and every store while keeping the run within its bound when a
  // request costs a second, as it does before the fix.
  pairs: ['node/memory', 'web/ioredis', 'node/node-redis'],
  quickPairs: ['node/memory'],
  async run(ctx, pair, ledger) {
    const alone = ctx.quick ? 3 : 6;
    const floodMs = ctx.quick ? 3_000 : 5_000;
    const intervalMs = 20;
    // A valid delivery unanswered this long counts at this latency (far over
    // the target anyway) and is retried after the flood: it keeps a stalled
    // receiver from stretching the run.
    const validTimeoutMs = 5_000;
    const receiver = await startReceiver({ ...pair, clients: ctx.clients, ledger });
    try {
      const body = maximalBody(DEFAULT_MAX_BODY_BYTES);
      const probe = await sign(receiver, createTestWebhook());
      const signatureBytes = Buffer.from(probe.headers.signature, 'base64').length;
      ledger.metric('maxBodyBytes', DEFAULT_MAX_BODY_BYTES);
      let unsigned = 0;
      const sendUnsigned = async () => {
        const id = `unsigned-${++unsigned}`;
        ledger.sent(id, 'refuse');
        const answer = await post({
          port: receiver.port,
          path: '/hook',
          headers: unsignedHeaders(receiver, signatureBytes),
          body,
          agent: receiver.agent,
        });
        ledger.answer(id, answer.status);
        return answer;
      };
      // Warm up: the first delivery imports the key, and the first unsigned
      // ones run before the engine has compiled the body path.
      await deliver(receiver, ledger, createTestWebhook(), { attempts: 3 });
      for (let i = 0; i < 3; i++) await sendUnsigned();

      // 1. One unsigned request at a time: the event-loop time each costs.
      const costs = [];
      const statuses = new Set();
      const delay = monitorEventLoopDelay({ resolution: 1 });
      delay.enable();
      for (let i = 0; i < alone; i++) {
        const before = performance.eventLoopUtilization();
        const answer = await sendUnsigned();
        costs.push(performance.eventLoopUtilization(before).active);
        statuses.add(answer.status);
      }
      delay.disable();
      const cost = percentile(costs, 0.5);
      ledger.metric('unsignedMedianMs', round(cost));
      ledger.metric('unsignedMaxMs', round(Math.max(...costs)));
      ledger.metric('longestStallMs', round(delay.max / 1e6));
      ledger.note(`unsigned maximal bodies answered ${[...statuses].join('/')}`);
      if (!(cost <= TARGETS.unsignedStallMs)) {
        judgeTiming(
          ctx,
          ledger,
          `an unsigned maximal body costs ${round(cost)} ms of event loop (median), over ${TARGETS.unsignedStallMs} ms`,
        );
      }

      // 2. Valid deliveries every `intervalMs`, timed from when each was due
      // (a stalled loop delays the send too), while two clients flood.
      await validUnderLoad(ctx, receiver, ledger, {
        count: Math.floor(floodMs / intervalMs),
        intervalMs,
        timeoutMs: validTimeoutMs,
        during: 'two clients flood',
        load() {
          let flooding = true;
          const flooder = async () => {
            while (flooding) await sendUnsigned();
          };
          const flooders = [flooder(), flooder()];
          return async () => {
            flooding = false;
            await Promise.all(flooders);
            ledger.metric('floodRequests', unsigned);
          };
        },
      });
    } finally {
      await receiver.close();
    }
  },
};
