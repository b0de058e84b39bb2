// Misuse at creation: the message names the function the merchant called,
// and every duration option is refused the same way.
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/dedup/memory.js';
import type { WebhookHandlerOptions } from '../../src/handler/options.js';
import { createNodeWebhookHandler } from '../../src/node/index.js';
import { createWebhookHandler } from '../../src/web/index.js';
import { PUBLIC_KEY, signDelivery, webhookBody } from '../helpers/sign.js';

const factories = [
  ['createWebhookHandler', createWebhookHandler],
  ['createNodeWebhookHandler', createNodeWebhookHandler],
] as const;

const valid: WebhookHandlerOptions = {
  publicKeys: PUBLIC_KEY,
  webhookUrl: 'https://shop.example.kg/webhooks/payments',
  onPayment: () => {},
};

function thrown(make: () => unknown): { code?: string; message?: string } {
  try {
    make();
  } catch (error) {
    return error as { code?: string; message?: string };
  }
  throw new Error('expected a throw');
}

describe.each(factories)('%s refuses misuse naming itself', (name, create) => {
  const misuses: Array<[string, unknown]> = [
    ['no options', undefined],
    ['no key', { webhookUrl: valid.webhookUrl, onPayment: () => {} }],
    ['no onPayment', { publicKeys: PUBLIC_KEY, webhookUrl: valid.webhookUrl }],
    ['no webhookUrl', { publicKeys: PUBLIC_KEY, onPayment: () => {} }],
    ['a logger that is not a function', { ...valid, logger: 'console' }],
    ['a deadLetter that is not a function', { ...valid, deadLetter: true }],
    ['an empty list of keys', { ...valid, publicKeys: [] }],
    // PUBLIC_KEY is payhook's published test key: never beside the production key.
    ['the published test key beside the production key', { ...valid, environment: 'production' }],
    // The sandbox signs a SUCCEEDED for any URL a sandbox account names.
    ['the beta key beside the production key', { ...valid, publicKeys: [], environment: ['production', 'beta'] }],
    ['an unbounded body', { ...valid, maxBodyBytes: Number.POSITIVE_INFINITY }],
    ['a fraction of a byte', { ...valid, maxBodyBytes: 0.5 }],
  ];
  for (const [what, options] of misuses) {
    it(what, () => {
      const error = thrown(() => create(options as WebhookHandlerOptions));
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.message).toContain(name);
      expect(error.message).not.toContain('verifyWebhook');
    });
  }
});

describe('durations', () => {
  it('are refused with one message form, whichever option and whichever limit', () => {
    const cases: Array<[keyof WebhookHandlerOptions, unknown, string]> = [
      [
        'handlerTimeoutMs',
        0,
        'handlerTimeoutMs must be a number of milliseconds greater than 0 and at most 2147483647',
      ],
      [
        'storeTimeoutMs',
        2 ** 31,
        'storeTimeoutMs must be a number of milliseconds greater than 0 and at most 2147483647',
      ],
      [
        'bodyTimeoutMs',
        Number.NaN,
        'bodyTimeoutMs must be a number of milliseconds greater than 0 and at most 2147483647',
      ],
      [
        'leaseMs',
        Infinity,
        'leaseMs must be a number of milliseconds greater than 0 and at most Number.MAX_SAFE_INTEGER',
      ],
      [
        'retentionMs',
        -1,
        'retentionMs must be a number of milliseconds greater than 0 and at most Number.MAX_SAFE_INTEGER',
      ],
    ];
    for (const [option, value, message] of cases) {
      const error = thrown(() => createWebhookHandler({ ...valid, [option]: value }));
      expect([option, error.code, error.message]).toEqual([
        option,
        'INVALID_ARGUMENT',
        expect.stringContaining(message),
      ]);
    }
    expect(() => createWebhookHandler({ ...valid, retentionMs: Infinity })).not.toThrow();
  });

  it('the memory store refuses a lease or retention the same way', async () => {
    const store = createMemoryStore();
    await expect(store.claim('k', { leaseMs: 0 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('leaseMs must be a number of milliseconds greater than 0 and at most'),
    });
    const claim = await store.claim('k', { leaseMs: 1000 });
    if (claim.status !== 'claimed') throw new Error('unreachable');
    await expect(store.complete('k', claim.token, { retentionMs: -5 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('retentionMs must be a number of milliseconds greater than 0 and at most'),
    });
  });
});

describe("the default store keeps the handler's clock", () => {
  // A test that gives the handler `now` and moves it past the retention sees the delivery forgotten, as the
  // handler's time window already does.
  it('forgets a delivery once the handler clock passes its retention, and not before', async () => {
    let clock = 1_763_712_000_000;
    let calls = 0;
    const handler = createWebhookHandler({
      ...valid,
      now: () => clock,
      retentionMs: 600_000,
      onPayment: () => void calls++,
    });
    const body = webhookBody();
    const send = async (): Promise<number> => {
      const delivery = signDelivery(body, { timestamp: clock });
      const request = new Request(`https://shop.example.kg${delivery.target}`, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
      });
      return (await handler(request)).status;
    };
    expect(await send()).toBe(200);
    clock += 599_999;
    expect(await send()).toBe(200);
    expect(calls).toBe(1); // a duplicate within the retention
    clock += 2;
    expect(await send()).toBe(200);
    expect(calls).toBe(2); // forgotten past it, by the handler's clock
  });
});
