// Issue 12 defect 4: without webhookUrl, query parts outside the signature
// verified: signed for `?shop=7`, the request `??shop=7` or `?shop=8&shop=7`
// was accepted while the app read another `shop`.
import { createTestWebhook } from 'payhook/testing';
import { send, sign, startReceiver, verdictOf } from '../harness.mjs';

export const VARIANTS = ['/hook??shop=7', '/hook?shop=8&shop=7', '/hook?shop=7&shop=8'];

export const query = {
  id: '4',
  name: 'query',
  title: 'deliveries signed for ?shop=7 sent as ??shop=7, ?shop=8&shop=7, ?shop=7&shop=8 (allowAnyHost)',
  async run(ctx, pair, ledger) {
    const receiver = await startReceiver({ ...pair, clients: ctx.clients, ledger, options: { allowAnyHost: true } });
    try {
      const control = createTestWebhook();
      ledger.sent(control.id, 'handle');
      const answer = await send(
        receiver,
        ledger,
        control.id,
        await sign(receiver, control, { signedPath: '/hook?shop=7' }),
      );
      if (answer.status !== 200) ledger.fail(`the control delivery to ?shop=7 was answered ${answer.status}`);
      const verdicts = [];
      for (const path of VARIANTS) {
        const body = createTestWebhook();
        ledger.sent(body.id, 'refuse');
        const signed = await sign(receiver, body, { signedPath: '/hook?shop=7' });
        verdicts.push(`${path.slice(5)} → ${verdictOf(await send(receiver, ledger, body.id, signed, { path }))}`);
      }
      ledger.note(verdicts.join(', '));
    } finally {
      await receiver.close();
    }
  },
};
