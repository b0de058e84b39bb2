// What a dead-letter hook keeps of a delivery, through the Web handler: the recipe's
// captureDelivery(delivery.request) survives JSON with every header and the body as text.
import { describe, expect, it } from 'vitest';
import { captureDelivery } from '../../src/capture.js';
import type { DeadLetterDelivery } from '../../src/handler/hooks.js';
import { park } from '../../src/park.js';
import { verifyWebhook } from '../../src/verify-webhook.js';
import { createWebhookHandler } from '../../src/web/index.js';
import { PUBLIC_KEY, signDelivery, webhookBody } from '../helpers/sign.js';

const webhookUrl = 'https://shop.example.kg/webhooks/payments';

describe('deadLetter, stored as the recipe does', () => {
  it.each([
    ['a parked delivery', webhookBody()],
    ['a payload not understood', { hello: 'world' }],
  ])('keeps %s as JSON a reviewer can verify again', async (_, body) => {
    const rows: string[] = [];
    const raw: DeadLetterDelivery[] = [];
    const handler = createWebhookHandler({
      publicKeys: PUBLIC_KEY,
      webhookUrl,
      logger: false,
      onPayment: () => park('unknown order'),
      deadLetter: async (delivery) => {
        raw.push(delivery);
        rows.push(JSON.stringify(await captureDelivery(delivery.request, { webhookUrl })));
      },
    });
    const delivery = signDelivery(body);
    const request = new Request(`https://shop.example.kg${delivery.target}`, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
    });
    expect((await handler(request)).status).toBe(200);
    // The request as handed over does not survive JSON on the Web: why the recipe captures it.
    expect(JSON.parse(JSON.stringify(raw[0]?.request)).headers).toEqual({});
    const stored = JSON.parse(rows[0] ?? 'null') as { headers: Record<string, string>; body: string; url: string };
    expect(stored.body).toBe(delivery.body);
    expect(stored.headers['signature']).toBe(delivery.headers['signature']);
    expect(stored.headers['x-api-timestamp']).toBe(delivery.headers['x-api-timestamp']);
    const again = await verifyWebhook(
      { method: 'POST', url: stored.url, headers: stored.headers, body: stored.body },
      { publicKeys: PUBLIC_KEY, webhookUrl },
    );
    // Signature and timestamp check again (verifyWebhook's window is wide enough for a test run).
    expect(again.ok ? 'verified' : again.error.code).toBe('id' in body ? 'verified' : 'INVALID_PAYLOAD');
  });
});
