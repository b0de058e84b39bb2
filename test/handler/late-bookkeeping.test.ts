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

// A handler that misses its deadline is answered 500; its claim is settled after. When that fails, retries get 409
// until the lease expires and onPayment then runs again: a merchant watching onError (logger off) was told nothing.
describe('a late handler whose claim cannot be settled', () => {
  const outcomes: [string, 'complete' | 'release', () => void][] = [
    ['finishes', 'complete', () => undefined],
    [
      'throws',
      'release',
      () => {
        throw new Error('not now');
      },
    ],
  ];
  it.each(outcomes)('that %s reaches onError when the %s fails', async (_l, failing, outcome) => {
    const memory = createMemoryStore();
    const lost = () => Promise.reject(new Error('connection lost'));
    const store: DedupStore = {
      claim: (key, options) => memory.claim(key, options),
      complete: failing === 'complete' ? lost : (key, token, options) => memory.complete(key, token, options),
      release: failing === 'release' ? lost : (key, token) => memory.release(key, token),
    };
    const errors: { code: string; status: number | undefined; message: string }[] = [];
    const pending: Promise<unknown>[] = [];
    const handler = createWebhookHandler({
      ...base,
      store,
      handlerTimeoutMs: 50,
      logger: false,
      onError: ({ code, status, message }) => void errors.push({ code, status, message }),
      onPayment: async () => {
        await new Promise((resolve) => setTimeout(resolve, 150));
        outcome();
      },
    });
    const response = await handler(toRequest(signDelivery(webhookBody())), {
      waitUntil: (promise) => void pending.push(promise),
    });
    expect(response.status).toBe(500);
    await Promise.all(pending);
    expect(errors).toEqual([
      expect.objectContaining({ code: 'HANDLER_FAILED', status: 500 }),
      expect.objectContaining({
        code: 'STORE_UNAVAILABLE',
        status: 500,
        message: expect.stringContaining('Could not settle the claim after a late handler'),
      }),
    ]);
  });
});
