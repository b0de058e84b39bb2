// What docs/testing.md promises of Vitest's DOM environments: a webhook test runs
// in them as it does in the node environment (Web Crypto, TextEncoder, Request).
import { expect } from 'vitest';
import { createTestWebhook, signWebhook, TEST_KEY_PAIR, toRequest } from '../../src/testing/index.js';
import { verifyWebhook } from '../../src/verify-webhook.js';
import { createWebhookHandler } from '../../src/web/index.js';

const webhookUrl = 'https://shop.example.kg/webhooks/payments';

export async function roundTrip(): Promise<void> {
  // The environment is the DOM one the file names, not node's with a window left out.
  expect(typeof (globalThis as { window?: unknown }).window).toBe('object');
  const body = createTestWebhook({ status: 'FAILED' });
  const signed = await signWebhook(body, { privateKey: TEST_KEY_PAIR.privateKey, url: webhookUrl });
  const verified = await verifyWebhook(signed, { publicKeys: TEST_KEY_PAIR.publicKey, webhookUrl });
  expect(verified.ok && verified.webhook.id).toBe(body.id);

  const handled: string[] = [];
  const handler = createWebhookHandler({
    publicKeys: TEST_KEY_PAIR.publicKey,
    webhookUrl,
    logger: false,
    onPayment: (webhook) => void handled.push(webhook.status),
  });
  const response = await handler(toRequest(signed));
  expect(response.status).toBe(200);
  expect(handled).toEqual(['FAILED']);
  const forged = toRequest({ ...signed, body: signed.body.replace('FAILED', 'SUCCEEDED') });
  expect((await handler(forged)).status).toBe(401);
}
