// Issue 12 defect 1: a full memory store forgot claims still being handled
// (onPayment ran twice at once) and completed deliveries replayed after
// `maxEntries` others. Every store gets the same load; only the memory store
// has the small bound.
import { createTestWebhook } from 'payhook/testing';
import { deliver, gate, pool, startReceiver, waitFor } from '../harness.mjs';
import { sleep } from '../net.mjs';

export const eviction = {
  id: '1',
  name: 'eviction',
  title: 'memory store maxEntries 100, slow handlers, redeliveries and replays after many others',
  async run(ctx, pair, ledger) {
    const maxEntries = 100;
    const slowCount = 5;
    const others = ctx.quick ? 2 * maxEntries + 50 : 4 * maxEntries;
    const held = gate();
    const slow = new Set();
    const starts = new Map();
    const receiver = await startReceiver({
      ...pair,
      clients: ctx.clients,
      ledger,
      memory: { maxEntries },
      work(webhook) {
        starts.set(webhook.id, (starts.get(webhook.id) ?? 0) + 1);
        return slow.has(webhook.id) ? held.promise : undefined;
      },
    });
    try {
      const retry = { attempts: 30, delayMs: 100 };
      const slowBodies = Array.from({ length: slowCount }, () => createTestWebhook());
      for (const body of slowBodies) slow.add(body.id);
      // First attempts of the slow ones: claimed, then held in onPayment.
      const first = slowBodies.map((body) => deliver(receiver, ledger, body, { attempts: 1 }));
      await waitFor(() => slowBodies.every((body) => starts.has(body.id)), 5_000);
      const early = Array.from({ length: slowCount }, () => createTestWebhook());
      const rest = Array.from({ length: others }, () => createTestWebhook());
      // Once the small memory store is full of remembered deliveries it
      // answers 503 until their retention passes (days): a few tries show
      // that, and more would only spend the run's time bound.
      await pool([...early, ...rest], 16, (body) => deliver(receiver, ledger, body, { ...retry, attempts: 3 }));
      // The service retries the slow ones while their handlers still run.
      // A second onPayment for one of them would wait on the same gate: give
      // the redeliveries a moment to answer (409 expected), then let go.
      const again = Promise.all(slowBodies.map((body) => deliver(receiver, ledger, body, { attempts: 1 })));
      await Promise.race([again, sleep(1_000)]);
      const twice = slowBodies.filter((body) => starts.get(body.id) > 1).length;
      held.open();
      await Promise.all([...first, again]);
      // Whatever was not answered 200 is retried, as the service would.
      await pool(slowBodies, slowCount, (body) => deliver(receiver, ledger, body, retry));
      // Replays of deliveries answered 200 long ago (after `others` more).
      const replays = await pool(early, 8, (body) => deliver(receiver, ledger, body, retry));
      ledger.note(`held deliveries whose redelivery started onPayment again: ${twice}/${slowCount}`);
      const replayed = early.filter((body) => ledger.entries.get(body.id).handled > 1).length;
      const statuses = [...new Set(replays.map((answers) => answers.at(-1).status))].join('/');
      ledger.note(
        `replays after ${others} others: answered ${statuses}, ${replayed}/${early.length} ran onPayment again`,
      );
    } finally {
      held.open();
      await receiver.close();
    }
  },
};
