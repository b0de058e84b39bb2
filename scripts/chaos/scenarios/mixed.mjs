// Mixed load on every receiver at once: new deliveries, redeliveries of
// earlier ones, tampered, stale and badly signed requests; a third of the way in
// redis-server is killed (SIGKILL) and restarted on the same port. The
// service's retries go on throughout. Nothing may be answered 200 without
// being recorded, nothing may run twice, every genuine delivery must end up
// handled once Redis is back, and nothing forged may be accepted.
import { createTestWebhook } from 'payhook/testing';
import { deliver, send, sign, startReceiver } from '../harness.mjs';
import { sleep } from '../net.mjs';

async function forged(receiver, ledger, kind) {
  const body = createTestWebhook();
  ledger.sent(body.id, 'refuse');
  if (kind === 'stale') {
    const signed = await sign(receiver, body, { timestamp: Date.now() - 10 * 60_000 });
    return send(receiver, ledger, body.id, signed);
  }
  const signed = await sign(receiver, body);
  if (kind === 'tampered') {
    return send(receiver, ledger, body.id, signed, { body: JSON.stringify({ ...body, amount: body.amount + 1 }) });
  }
  const headers = { ...signed.headers, signature: signed.headers.signature.split('').reverse().join('') };
  return send(receiver, ledger, body.id, signed, { headers });
}

export const mixed = {
  id: '8',
  name: 'mixed+redis-kill',
  title: 'mixed load on all receivers at once; redis-server killed with SIGKILL and restarted mid-way',
  async runAll(ctx, pairs, ledgers) {
    const loadMs = ctx.quick ? 5_000 : 12_000;
    const tickMs = ctx.quick ? 60 : 40;
    const downMs = 700;
    const drainMs = 10_000;
    // Only storeTimeoutMs is shortened (from 5 s), so requests caught by the
    // outage fail fast and are retried, as the service would.
    const receivers = await Promise.all(
      pairs.map((pair, i) =>
        startReceiver({ ...pair, clients: ctx.clients, ledger: ledgers[i], options: { storeTimeoutMs: 1_000 } }),
      ),
    );
    try {
      const start = Date.now();
      const stopAt = start + loadMs;
      const retry = { attempts: 1_000, delayMs: 150, stopAt: stopAt + drainMs };
      const work = [];
      const outage = (async () => {
        await sleep(loadMs / 3);
        ctx.log('killing redis-server (SIGKILL)');
        await ctx.redis.kill();
        await sleep(downMs);
        await ctx.redis.restart();
        ctx.log('redis-server restarted');
      })();
      await Promise.all(
        receivers.map(async (receiver, i) => {
          const ledger = ledgers[i];
          const genuine = [];
          const inFlight = new Set();
          const track = (promise) => {
            inFlight.add(promise);
            work.push(promise);
            void promise.finally(() => inFlight.delete(promise));
          };
          for (let tick = 0; Date.now() < stopAt; tick++) {
            if (inFlight.size < 48) {
              const body = createTestWebhook();
              genuine.push(body);
              track(deliver(receiver, ledger, body, retry));
              if (tick % 3 === 2) {
                const earlier = genuine[Math.floor(Math.random() * genuine.length)];
                track(deliver(receiver, ledger, earlier, retry));
              }
              if (tick % 4 === 3)
                track(forged(receiver, ledger, ['tampered', 'stale', 'bad-signature'][(tick >> 2) % 3]));
            }
            await sleep(tickMs);
          }
        }),
      );
      await outage;
      await Promise.all(work);
      for (const ledger of ledgers) {
        const stuck = [...ledger.entries.values()].filter((e) => e.expect === 'handle' && e.handled + e.recorded === 0);
        if (stuck.length === 0) continue;
        const last = new Map();
        for (const entry of stuck) last.set(entry.answers.at(-1), (last.get(entry.answers.at(-1)) ?? 0) + 1);
        const answers = [...last].map(([status, count]) => `${count}x ${status}`).join(', ');
        ledger.fail(
          `${stuck.length} genuine deliveries still unprocessed after ${drainMs} ms of retries (last answers: ${answers})`,
        );
      }
    } finally {
      await Promise.all(receivers.map((receiver) => receiver.close()));
    }
  },
};
