// What the reporter waits for and prints: the log line of a hook that fails after the answer reaches
// waitUntil too, and a record bound to a verified transaction has the verified budget.
import { describe, expect, it } from 'vitest';
import type { WebhookLogRecord } from '../../src/handler/hooks.js';
import type { WebhookHandlerOptions } from '../../src/handler/options.js';
import { createDefaultLogger } from '../../src/handler/report.js';
import { createWebhookHandler } from '../../src/web/index.js';
import { PUBLIC_KEY, signDelivery, webhookBody } from '../helpers/sign.js';

const base = {
  publicKeys: PUBLIC_KEY,
  webhookUrl: 'https://shop.example.kg/webhooks/payments',
  onPayment: () => {},
} satisfies WebhookHandlerOptions;

describe('reporter', () => {
  it('hands waitUntil the log line of a hook that fails after the answer, not only the hook', async () => {
    const logged: string[] = [];
    const handler = createWebhookHandler({
      ...base,
      onError: async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Error('Sentry is down');
      },
      // eslint-disable-next-line @typescript-eslint/no-misused-promises -- an async logger, as a merchant may pass
      logger: async (record: WebhookLogRecord) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        logged.push(record.event);
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 60)); // the test key's warning at creation
    logged.length = 0;
    const delivery = signDelivery(webhookBody());
    const tampered = { ...delivery, body: delivery.body.replace('SUCCEEDED', 'FAILED') };
    const pending: Promise<unknown>[] = [];
    const response = await handler(
      new Request(`https://shop.example.kg${tampered.target}`, {
        method: 'POST',
        headers: tampered.headers,
        body: tampered.body,
      }),
      { waitUntil: (promise) => void pending.push(promise) },
    );
    expect(response.status).toBe(401);
    expect(pending).toHaveLength(1);
    await Promise.all(pending);
    // The onError failure is logged while waitUntil's promise is already waiting: it must still be waited for.
    expect(logged).toEqual(['rejected', 'hook-failed']);
  });

  it("gives a verified delivery's record (a transaction id, no key) its own budget in the default logger", () => {
    const printed: string[] = [];
    const print = { warn: (line: string) => printed.push(line), error: (line: string) => printed.push(line) };
    const log = createDefaultLogger(print, () => 0);
    for (let i = 0; i < 20; i++) log({ level: 'warn', event: 'rejected', message: `bad request ${i}` });
    // onInvalidPayload threw for a signed payload not understood: bound to its transaction, never claimed.
    log({ level: 'warn', event: 'hook-failed', message: 'onInvalidPayload threw: x', transactionId: 'tx-1' });
    expect(printed.some((line) => line.includes('onInvalidPayload threw'))).toBe(true);
  });
});
