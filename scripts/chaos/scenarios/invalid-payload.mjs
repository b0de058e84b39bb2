// Issue 12 defect 7: an authentic delivery that fails validation (here
// `amount` sent as a string) was answered 400: the service retries it daily
// without end, it is never processed, and nothing tells the merchant.
// Checked twice: with default options (it must not be answered 200 unless
// recorded, and onPayment must not see it), and with a dead-letter hook
// (CHAOS_INVALID_HOOK, default `deadLetter`) that, once it resolves,
// lets the delivery be answered 200.
import { createTestWebhook } from 'payhook/testing';
import { send, sign, startReceiver, verdictOf } from '../harness.mjs';

const HOOK = process.env.CHAOS_INVALID_HOOK ?? 'deadLetter';

export const invalidPayload = {
  id: '7',
  name: 'invalid-payload',
  title: `a signed delivery whose amount is a string, with default options and with ${HOOK}`,
  async run(ctx, pair, ledger) {
    const fired = [];
    const spy = (name) => () => void fired.push(name);
    // With the default options: which answer, which hooks.
    const plain = await startReceiver({
      ...pair,
      clients: ctx.clients,
      ledger,
      options: { onError: (error) => void fired.push(`onError(${error.code})`), onDuplicate: spy('onDuplicate') },
    });
    let current;
    try {
      const body = createTestWebhook({ amount: '100.00' });
      ledger.sent(body.id, 'either');
      const answer = await send(plain, ledger, body.id, await sign(plain, body));
      ledger.note(
        `default options: ${verdictOf(answer)} (HTTP ${answer.status}), hooks: ${fired.join(', ') || 'none'}`,
      );
      if (ledger.entries.get(body.id).handled > 0) ledger.wrong('onPayment received a payload that fails validation');
    } finally {
      await plain.close();
    }
    // With a dead-letter hand-off.
    const dead = await startReceiver({
      ...pair,
      clients: ctx.clients,
      ledger,
      options: {
        [HOOK]: async () => {
          if (current !== undefined) ledger.recorded(current);
        },
      },
    });
    try {
      const body = createTestWebhook({ amount: '100.00' });
      current = body.id;
      ledger.sent(body.id, 'either');
      const answer = await send(dead, ledger, body.id, await sign(dead, body));
      const recorded = ledger.entries.get(body.id).recorded;
      ledger.note(`with ${HOOK}: ${verdictOf(answer)} (HTTP ${answer.status}), hook called ${recorded} time(s)`);
      if (ledger.entries.get(body.id).handled > 0) ledger.wrong('onPayment received a payload that fails validation');
      if (answer.status !== 200 || recorded === 0) {
        ledger.fail(
          `a signed invalid payload is never handed off (${HOOK} not called, answered ${answer.status}): the service retries it forever`,
        );
      }
    } finally {
      await dead.close();
    }
  },
};
