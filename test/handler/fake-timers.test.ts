// A merchant's test of a hung onPayment under fake timers: one move past handlerTimeoutMs answers 500, also with
// fake timers that leave performance.now alone (node:test's mock.timers; Jest's legacy ones work the same way).
import { mock } from 'node:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createWebhookHandler } from '../../src/web/index.js';
import { PUBLIC_KEY, signDelivery, webhookBody } from '../helpers/sign.js';

const WEBHOOK_URL = 'https://shop.example.kg/webhooks/payments';

/** A handler whose onPayment never ends, and a promise of its first call. */
function hungHandler(slowStore: boolean) {
  let started!: () => void;
  const onPaymentStarted = new Promise<void>((resolve) => (started = resolve));
  const handler = createWebhookHandler({
    publicKeys: PUBLIC_KEY,
    webhookUrl: WEBHOOK_URL,
    logger: false,
    onPayment: () => {
      started();
      return new Promise<never>(() => {});
    },
    // Real time passing between the stages (a store that answers after a few real milliseconds).
    ...(slowStore && {
      store: {
        claim: async () => {
          await Promise.resolve();
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5); // 5 real milliseconds, no fake ones
          return { status: 'claimed' as const, token: 't' };
        },
        complete: async () => {},
        release: async () => {},
      },
    }),
  });
  const delivery = signDelivery(webhookBody());
  const request = new Request(WEBHOOK_URL, { method: 'POST', headers: delivery.headers, body: delivery.body });
  return { answer: handler(request), onPaymentStarted };
}

describe('a hung onPayment under fake timers', () => {
  afterEach(() => {
    mock.timers.reset();
    vi.useRealTimers();
  });

  it.each([false, true])(
    "is answered 500 after one move of node:test's mock timers past handlerTimeoutMs (real time between stages: %s)",
    async (slowStore) => {
      mock.timers.enable({ apis: ['setTimeout'] });
      const { answer, onPaymentStarted } = hungHandler(slowStore);
      await onPaymentStarted;
      mock.timers.tick(10_001); // the default handlerTimeoutMs, 10 s, and a millisecond
      const response = await Promise.race([answer, new Promise((resolve) => setImmediate(resolve, 'pending'))]);
      expect(response).toBeInstanceOf(Response);
      expect((response as Response).status).toBe(500);
    },
  );

  it("is not answered before handlerTimeoutMs under node:test's mock timers", async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    const { answer, onPaymentStarted } = hungHandler(true);
    await onPaymentStarted;
    mock.timers.tick(9_999);
    const response = await Promise.race([answer, new Promise((resolve) => setImmediate(resolve, 'pending'))]);
    expect(response).toBe('pending');
    mock.timers.tick(1);
    expect((await answer).status).toBe(500);
  });

  it("is answered 500 after one move of Vitest's fake timers past handlerTimeoutMs", async () => {
    vi.useFakeTimers();
    const { answer, onPaymentStarted } = hungHandler(true);
    await onPaymentStarted;
    await vi.advanceTimersByTimeAsync(10_001);
    expect((await answer).status).toBe(500);
  });
});
