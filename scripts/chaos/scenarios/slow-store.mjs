// Issue 12 defect 3: with Redis slower than storeTimeoutMs the delivery is
// answered 503, then the claim lands anyway and holds for a whole lease, so
// every redelivery meanwhile is answered 409 and wasted.
import { createTestWebhook } from 'payhook/testing';
import { deliver, startReceiver } from '../harness.mjs';
import { sleep } from '../net.mjs';

export const slowStore = {
  id: '3',
  name: 'slow-store',
  title: 'Redis blocked by DEBUG SLEEP beyond storeTimeoutMs, then the service retries',
  stores: ['ioredis', 'node-redis'],
  async run(ctx, pair, ledger) {
    const storeTimeoutMs = 250;
    const sleepSeconds = 1;
    const retryForMs = ctx.quick ? 2_000 : 4_000;
    // Only storeTimeoutMs is shortened (from 5 s), to keep the run short.
    const receiver = await startReceiver({ ...pair, clients: ctx.clients, ledger, options: { storeTimeoutMs } });
    try {
      await deliver(receiver, ledger, createTestWebhook(), { attempts: 3 }); // warm: key import, connection
      const body = createTestWebhook();
      const sleeping = ctx.redis.debugSleep(sleepSeconds);
      await sleep(50);
      const [first] = await deliver(receiver, ledger, body, { attempts: 1 });
      ledger.note(`first attempt, Redis asleep: answered ${first.status}`);
      if (first.status === 200)
        ledger.fail('the Redis store answered 200 while Redis was blocked: the scenario did not slow it');
      await sleeping;
      // The late claim's release is one more round trip once Redis wakes; the
      // service's first retry comes minutes later, so a retry sent within the
      // same millisecond would measure that race, not the release.
      await sleep(100);
      const answers = await deliver(receiver, ledger, body, {
        attempts: 1_000,
        delayMs: 200,
        stopAt: Date.now() + retryForMs,
      });
      const wasted = answers.filter((answer) => answer.status === 409).length;
      ledger.metric('retriesAnswered409', wasted);
      ledger.wrong('409 to a retry of a delivery nobody is handling (its claim landed after the timeout)', wasted);
      if (answers.at(-1).status !== 200) {
        ledger.fail(
          `the delivery was still not processed ${retryForMs} ms after Redis woke up (last answer ${answers.at(-1).status})`,
        );
      }
    } finally {
      await receiver.close();
    }
  },
};
