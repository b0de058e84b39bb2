// The README's "Testing your endpoint" example, run as written.
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/verify-webhook.js';
import { createWebhookHandler } from '../../src/web/index.js';
import {
  createTestWebhook,
  generateTestKeyPair,
  signWebhook,
  TEST_KEY_PAIR,
  toRequest,
} from '../../src/testing/index.js';

describe('README: testing a Web handler with payhook/testing', () => {
  const paid: string[] = [];
  const handler = createWebhookHandler({
    publicKeys: TEST_KEY_PAIR.publicKey,
    webhookUrl: 'https://shop.example.kg/webhooks/payments',
    onPayment: (webhook) => void paid.push(webhook.transactionId),
  });

  it('a paid order is recorded once', async () => {
    const body = createTestWebhook({ status: 'SUCCEEDED', amount: 250 });
    const signed = await signWebhook(body, { url: 'https://shop.example.kg/webhooks/payments' });
    expect((await handler(toRequest(signed))).status).toBe(200);
    expect((await handler(toRequest(signed))).status).toBe(200);
    expect(paid).toEqual([body.transactionId]);
  });

  it('every variant verifies through the Web handler and verifyWebhook; stale and forged ones are refused', async () => {
    for (const variant of ['base', 'card', 'extended', 'signed-body', 'web', 'credit'] as const) {
      const signed = await signWebhook(createTestWebhook({ variant }), {
        url: 'https://shop.example.kg/webhooks/payments',
      });
      expect((await handler(toRequest(signed))).status, variant).toBe(200);
      expect((await verifyWebhook(signed, { publicKeys: TEST_KEY_PAIR.publicKey })).ok, variant).toBe(true);
    }
    const stale = await signWebhook(createTestWebhook(), {
      url: 'https://shop.example.kg/webhooks/payments',
      timestamp: Date.now() - 10 * 60_000,
    });
    expect((await handler(toRequest(stale))).status).toBe(401);
    const forged = await signWebhook(createTestWebhook(), {
      url: 'https://shop.example.kg/webhooks/payments',
      privateKey: (await generateTestKeyPair()).privateKey,
    });
    expect((await handler(toRequest(forged))).status).toBe(401);
  });
});
