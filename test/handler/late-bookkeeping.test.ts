// Bookkeeping after the answer that never lands (a store that stops answering) is waited for one lease at
// most: what waitUntil is handed settles, so a Worker is not held until the platform's own limit.
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/dedup/memory.js';
import type { DedupStore } from '../../src/dedup/store.js';
import type { WebhookHandlerOptions } from '../../src/handler/options.js';
import { createWebhookHandler } from '../../src/web/index.js';
import { PUBLIC_KEY, signDelivery, webhookBody, type SignedDelivery } from '../helpers/sign.js';

function toRequest(delivery: SignedDelivery): Request {
  return new Request(`https://shop.example.kg${delivery.target}`, {
    method: delivery.method,
    headers: delivery.headers,
    body: delivery.body,
  });
}
const base = {
  publicKeys: PUBLIC_KEY,
  webhookUrl: 'https://shop.example.kg/webhooks/payments',
  onPayment: () => {},
} satisfies WebhookHandlerOptions;

describe('store calls that never land', () => {
  it.each([
    ['a completion', 200, () => undefined],
    [
      'a release',
      500,
      () => {
        throw new Error('not now');
      },
    ],
  ])(
    'waits one lease at most for %s that never lands, so waitUntil is not held for ever',
    async (_l, status, onPayment) => {
      const memory = createMemoryStore();
      const store: DedupStore = {
        claim: (key, options) => memory.claim(key, options),
        complete: () => new Promise(() => {}),
        release: () => new Promise(() => {}),
      };
      const pending: Promise<unknown>[] = [];
      const handler = createWebhookHandler({
        ...base,
        store,
        onPayment,
        storeTimeoutMs: 50,
        handlerTimeoutMs: 100,
        leaseMs: 300,
        logger: false,
      });
      const response = await handler(toRequest(signDelivery(webhookBody())), {
        waitUntil: (promise) => void pending.push(promise),
      });
      expect(response.status).toBe(status);
      expect(pending).toHaveLength(1);
      const outcome = await Promise.race([
        pending[0]!.then(() => 'settled'),
        new Promise((resolve) => setTimeout(() => resolve('still held'), 2_000)),
      ]);
      expect(outcome).toBe('settled');
    },
  );
});
