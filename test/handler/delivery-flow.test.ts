// The delivery flow's options, hooks and edge answers, through the Web handler
// called with Request objects.
import { createPublicKey } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { createMemoryStore } from '../../src/dedup/memory.js';
import type { ClaimResult, DedupStore } from '../../src/dedup/store.js';
import type { WebhookHandlerError, WebhookLogRecord } from '../../src/handler/hooks.js';
import type { WebhookHandlerOptions } from '../../src/handler/options.js';
import { createNodeWebhookHandler } from '../../src/node/index.js';
import { PayhookError, type PayhookErrorCode } from '../../src/lib/errors.js';
import { park } from '../../src/park.js';
import type { RsaJsonWebKey } from '../../src/lib/key-types.js';
import type { WebhookUrlOption } from '../../src/verify-webhook.js';
import { createWebhookHandler } from '../../src/web/index.js';
import { PUBLIC_KEY, signDelivery, STRANGER_PUBLIC_KEY, webhookBody, type SignedDelivery } from '../helpers/sign.js';
import { collectInto } from '../helpers/logs.js';

function toRequest(delivery: SignedDelivery): Request {
  return new Request(`https://shop.example.kg${delivery.target}`, {
    method: delivery.method,
    headers: delivery.headers,
    body: delivery.body,
  });
}

const WEBHOOK_URL = 'https://shop.example.kg/webhooks/payments';
const base = { publicKeys: PUBLIC_KEY, webhookUrl: WEBHOOK_URL, onPayment: () => {} } satisfies WebhookHandlerOptions;

describe('createWebhookHandler options', () => {
  it('refuses misuse at creation', () => {
    const bad: Array<Partial<WebhookHandlerOptions>> = [
      { onPayment: undefined as never },
      { publicKeys: undefined as never },
      { leaseMs: 5_000, handlerTimeoutMs: 5_000 },
      { handlerTimeoutMs: 0 },
      { storeTimeoutMs: Number.NaN },
      // Timers longer than 2³¹ − 1 ms fire at once in every runtime.
      { handlerTimeoutMs: 2 ** 31, leaseMs: 2 ** 33 },
      { storeTimeoutMs: 2 ** 31, leaseMs: 2 ** 33 },
      { bodyTimeoutMs: 2 ** 31 },
      { retentionMs: 599_999 },
      { retentionMs: 1e21 },
      { leaseMs: 1e21 },
      { store: {} as DedupStore },
      { maxBodyBytes: -1 },
    ];
    for (const options of bad) {
      expect(() => createWebhookHandler({ ...base, ...options }), JSON.stringify(options)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
    }
    expect(() => createWebhookHandler({ ...base, retentionMs: 20_000, toleranceMs: 10_000 })).not.toThrow();
    // The longest timer is allowed, and says so when exceeded.
    expect(() =>
      createWebhookHandler({ ...base, bodyTimeoutMs: 2 ** 31 - 1, handlerTimeoutMs: 2 ** 31 - 1, leaseMs: 2 ** 33 }),
    ).not.toThrow();
    expect(() => createWebhookHandler({ ...base, bodyTimeoutMs: 2 ** 31 })).toThrow(
      /at most 2147483647 \(about 24\.8 days/,
    );
  });

  it('requires leaseMs > handlerTimeoutMs + 2 × storeTimeoutMs, so a claim outlives its handler and the store calls around it', () => {
    // Longer than the handler alone, but not than handler + claim + complete.
    for (const options of [
      { leaseMs: 20_000, handlerTimeoutMs: 10_000, storeTimeoutMs: 5_000 },
      { leaseMs: 15_000, handlerTimeoutMs: 10_000 },
      { leaseMs: 12_000, handlerTimeoutMs: 1_000, storeTimeoutMs: 6_000 },
    ]) {
      expect(() => createWebhookHandler({ ...base, ...options }), JSON.stringify(options)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('storeTimeoutMs') }),
      );
    }
    expect(() =>
      createWebhookHandler({ ...base, leaseMs: 20_001, handlerTimeoutMs: 10_000, storeTimeoutMs: 5_000 }),
    ).not.toThrow();
    // The defaults (60 s > 10 s + 2 × 5 s) pass.
    expect(() => createWebhookHandler(base)).not.toThrow();
  });

  it('with deadLetter, requires leaseMs > 2 × handlerTimeoutMs + 2 × storeTimeoutMs: a parked delivery runs both handlers', () => {
    const deadLetter = () => {};
    const timeouts = { handlerTimeoutMs: 10_000, storeTimeoutMs: 5_000 };
    expect(() => createWebhookHandler({ ...base, ...timeouts, leaseMs: 30_000, deadLetter })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('2 × handlerTimeoutMs') }),
    );
    expect(() => createWebhookHandler({ ...base, ...timeouts, leaseMs: 30_001, deadLetter })).not.toThrow();
    expect(() => createWebhookHandler({ ...base, ...timeouts, leaseMs: 20_001 })).not.toThrow();
    // The defaults (60 s > 2 × 10 s + 2 × 5 s) pass.
    expect(() => createWebhookHandler({ ...base, deadLetter })).not.toThrow();
  });

  it('refuses to be created without webhookUrl unless allowAnyHost: true says the Host is guaranteed', async () => {
    const { webhookUrl: _pinned, ...unpinned } = base;
    for (const create of [createWebhookHandler, createNodeWebhookHandler] as const) {
      for (const options of [
        unpinned,
        { ...unpinned, allowAnyHost: false },
        { ...unpinned, trustForwardedHeaders: true },
      ]) {
        let thrown: unknown;
        try {
          // The compiler refuses these options; a JavaScript caller meets the same rule at run time.
          create(options as WebhookHandlerOptions);
        } catch (error) {
          thrown = error;
        }
        expect(thrown, JSON.stringify(options)).toMatchObject({
          name: 'PayhookError',
          code: 'INVALID_ARGUMENT',
          message: expect.stringMatching(/webhookUrl[\s\S]*allowAnyHost: true/),
        });
      }
      expect(() => create({ ...unpinned, allowAnyHost: true })).not.toThrow();
      expect(() => create({ ...unpinned, allowAnyHost: true, trustForwardedHeaders: true })).not.toThrow();
      expect(() => create(base)).not.toThrow();
    }
    // Opted in, the Host is taken as received.
    const open = createWebhookHandler({ ...unpinned, allowAnyHost: true });
    expect((await open(toRequest(signDelivery(webhookBody(), { host: 'elsewhere.example.kg' })))).status).toBe(200);
  });

  it('answers 500 with the code when the configured key is unusable', async () => {
    const logs: WebhookLogRecord[] = [];
    const handler = createWebhookHandler({ ...base, publicKeys: 'not a pem', logger: collectInto(logs) });
    const response = await handler(toRequest(signDelivery(webhookBody())));
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ ok: false, code: 'INVALID_KEY' });
    expect(logs.some((record) => record.event === 'misconfigured' && record.level === 'error')).toBe(true);
  });

  it('logs an unusable key once at creation, before any delivery, and again as the 500 of each delivery', async () => {
    const logs: WebhookLogRecord[] = [];
    const handler = createWebhookHandler({ ...base, publicKeys: 'not a pem', logger: collectInto(logs) });
    await vi.waitFor(() => expect(logs).toHaveLength(1));
    expect(logs[0]).toMatchObject({ level: 'error', event: 'misconfigured' });
    expect(logs[0]?.status).toBeUndefined();
    expect(logs[0]?.message).toMatch(/^The public key cannot be used: /);
    expect((await handler(toRequest(signDelivery(webhookBody())))).status).toBe(500);
    expect(logs.slice(1)).toEqual([
      expect.objectContaining({ level: 'error', event: 'misconfigured', status: 500, code: 'INVALID_KEY' }),
    ]);
    expect(logs[1]?.message).toMatch(/^The webhook handler is misconfigured: /);
  });

  it("warns once at creation when publicKeys holds payhook's published test key, as PEM or JWK", async () => {
    const { TEST_KEY_PAIR } = await import('../../src/testing/index.js');
    const jwk = createPublicKey(TEST_KEY_PAIR.publicKey).export({ format: 'jwk' }) as RsaJsonWebKey;
    for (const publicKeys of [TEST_KEY_PAIR.publicKey, [STRANGER_PUBLIC_KEY, jwk]]) {
      for (const create of [createWebhookHandler, createNodeWebhookHandler]) {
        const logs: WebhookLogRecord[] = [];
        create({ ...base, publicKeys, logger: (record) => logs.push(record) });
        await vi.waitFor(() => expect(logs).toHaveLength(1));
        expect(logs[0]).toMatchObject({ level: 'warn', event: 'misconfigured' });
        expect(logs[0]?.message).toContain("payhook's published test key");
      }
    }
    // Another key: nothing to say.
    const logs: WebhookLogRecord[] = [];
    const handler = createWebhookHandler({
      ...base,
      publicKeys: STRANGER_PUBLIC_KEY,
      logger: (record) => logs.push(record),
    });
    await handler(toRequest(signDelivery(webhookBody())));
    expect(logs.filter((record) => record.event === 'misconfigured')).toEqual([]);
  });
});

describe('now: a fixed value or a clock read per delivery', () => {
  const T = 1_763_712_000_000;

  it('a function is called for every delivery, so the handler keeps accepting fresh deliveries as time goes on', async () => {
    let clock = T;
    let reads = 0;
    const handler = createWebhookHandler({
      ...base,
      now: () => {
        reads++;
        return clock;
      },
    });
    expect((await handler(toRequest(signDelivery(webhookBody(), { timestamp: T })))).status).toBe(200);
    clock = T + 3_600_000; // an hour later
    expect((await handler(toRequest(signDelivery(webhookBody(), { timestamp: clock })))).status).toBe(200);
    const old = await handler(toRequest(signDelivery(webhookBody(), { timestamp: T })));
    expect([old.status, ((await old.json()) as { code?: string }).code]).toEqual([401, 'TIMESTAMP_OUT_OF_WINDOW']);
    // Read for each delivery's timestamp (3), and by the default store, which keeps this clock, at the claim and the
    // completion of the two handled ones (4).
    expect(reads).toBe(7);
    const dated = createWebhookHandler({ ...base, now: () => new Date(clock) });
    expect((await dated(toRequest(signDelivery(webhookBody(), { timestamp: clock })))).status).toBe(200);
  });

  it('a fixed value stays fixed (for tests): a delivery signed at the real time is out of its window', async () => {
    const handler = createWebhookHandler({ ...base, now: T });
    expect((await handler(toRequest(signDelivery(webhookBody(), { timestamp: T + 1_000 })))).status).toBe(200);
    const real = await handler(toRequest(signDelivery(webhookBody())));
    expect([real.status, ((await real.json()) as { code?: string }).code]).toEqual([401, 'TIMESTAMP_OUT_OF_WINDOW']);
    const dated = createWebhookHandler({ ...base, now: new Date(T) });
    expect((await dated(toRequest(signDelivery(webhookBody(), { timestamp: T })))).status).toBe(200);
  });

  it('a clock that returns no time answers 500 as a misconfiguration', async () => {
    const logs: WebhookLogRecord[] = [];
    const handler = createWebhookHandler({ ...base, now: () => Number.NaN, logger: collectInto(logs) });
    const response = await handler(toRequest(signDelivery(webhookBody())));
    expect([response.status, ((await response.json()) as { code?: string }).code]).toEqual([500, 'INVALID_ARGUMENT']);
    expect(logs.map((record) => record.event)).toContain('misconfigured');
  });

  it('a clock that throws answers 500 INVALID_ARGUMENT as a misconfiguration, without calling onPayment', async () => {
    const errors: Array<[string, number]> = [];
    let calls = 0;
    const handler = createWebhookHandler({
      ...base,
      now: () => {
        throw new Error('clock source unreachable');
      },
      onError: (error) => {
        errors.push([error.code, error.status]);
      },
      onPayment: () => {
        calls++;
      },
    });
    const response = await handler(toRequest(signDelivery(webhookBody())));
    expect([response.status, ((await response.json()) as { code?: string }).code]).toEqual([500, 'INVALID_ARGUMENT']);
    expect(errors).toEqual([['INVALID_ARGUMENT', 500]]);
    expect(calls).toBe(0);
  });

  it("answers a PayhookError of a request's code thrown by a clock or webhookUrl function 500 INVALID_ARGUMENT, its text only in the log", async () => {
    const thrown = (code: PayhookErrorCode) => () => {
      throw new PayhookError(code, 'tenant db at 10.0.0.5 refused user shop_rw');
    };
    const cases: Array<[Partial<WebhookHandlerOptions>, PayhookErrorCode]> = [
      [{ webhookUrl: thrown('INVALID_BODY') }, 'INVALID_ARGUMENT'],
      [{ webhookUrl: thrown('URL_MISMATCH') }, 'INVALID_ARGUMENT'],
      [{ now: thrown('TIMESTAMP_OUT_OF_WINDOW') }, 'INVALID_ARGUMENT'],
      [{ now: thrown('DELIVERY_IN_PROGRESS') }, 'INVALID_ARGUMENT'],
      // A misconfiguration's own code stays.
      [{ webhookUrl: thrown('WEAK_KEY') }, 'WEAK_KEY'],
      [{ now: thrown('INVALID_KEY') }, 'INVALID_KEY'],
    ];
    for (const [options, code] of cases) {
      const errors: WebhookHandlerError[] = [];
      const logs: WebhookLogRecord[] = [];
      const handler = createWebhookHandler({
        ...base,
        ...options,
        onError: (error) => void errors.push(error),
        logger: collectInto(logs),
      });
      const response = await handler(toRequest(signDelivery(webhookBody())));
      expect([response.status, await response.json()], code).toEqual([
        500,
        {
          ok: false,
          code,
          message: 'The webhook handler is misconfigured; the delivery was not processed. Retry later.',
        },
      ]);
      const told = 'The webhook handler is misconfigured: tenant db at 10.0.0.5 refused user shop_rw';
      expect(errors).toEqual([expect.objectContaining({ code, status: 500, message: told })]);
      expect(logs.map((record) => [record.event, record.level, record.status, record.code])).toEqual([
        ['misconfigured', 'error', 500, code],
      ]);
    }
  });
});

/**
 * One signed delivery through a Web handler with `options`: its answer, its log records, and `settled()`, which
 * waits for what the handler handed to waitUntil (the work it left running after answering).
 */
async function deliverWithWaitUntil(options: {
  store: DedupStore;
  storeTimeoutMs?: number;
  handlerTimeoutMs?: number;
  leaseMs?: number;
  onPayment?: WebhookHandlerOptions['onPayment'];
}) {
  const logs: WebhookLogRecord[] = [];
  const pending: Promise<unknown>[] = [];
  const handler = createWebhookHandler({ ...base, ...options, logger: collectInto(logs) });
  const response = await handler(toRequest(signDelivery(webhookBody())), {
    waitUntil: (promise) => void pending.push(promise),
  });
  return { response, logs, settled: () => Promise.all(pending) };
}

describe('hooks and logger', () => {
  it('reports refusals to onError, onSignatureMismatch and the logger', async () => {
    const errors: Array<[string, number]> = [];
    const mismatches: string[] = [];
    const logs: WebhookLogRecord[] = [];
    const handler = createWebhookHandler({
      ...base,
      onError: (error) => {
        errors.push([error.code, error.status]);
      },
      onSignatureMismatch: (request) => {
        mismatches.push(request.url);
      },
      logger: collectInto(logs),
    });
    const delivery = signDelivery(webhookBody());
    const tampered = { ...delivery, body: delivery.body.replace('SUCCEEDED', 'FAILED') };
    expect((await handler(toRequest(tampered))).status).toBe(401);
    expect((await handler(toRequest(signDelivery(webhookBody(), { timestamp: 5 })))).status).toBe(401);
    expect(errors).toEqual([
      ['SIGNATURE_MISMATCH', 401],
      ['TIMESTAMP_OUT_OF_WINDOW', 401],
    ]);
    expect(mismatches).toEqual(['https://shop.example.kg/webhooks/payments']);
    expect(logs.map((record) => [record.event, record.code])).toEqual([
      ['rejected', 'SIGNATURE_MISMATCH'],
      ['rejected', 'TIMESTAMP_OUT_OF_WINDOW'],
    ]);
  });

  // Workers cancels what a request left running once it is answered, unless it was handed to waitUntil: an async
  // hook (onError reporting to Sentry, onSignatureMismatch saving its capture) or logger would be cut off.
  it('hands what async hooks and the logger still run to waitUntil with the answer', async () => {
    const finished: string[] = [];
    const slow = (name: string) => async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      finished.push(name);
    };
    const handler = createWebhookHandler({
      ...base,
      onError: slow('onError'),
      onSignatureMismatch: slow('onSignatureMismatch'),
      onDuplicate: slow('onDuplicate'),
      // eslint-disable-next-line @typescript-eslint/no-misused-promises -- an async one, as a merchant may pass despite the type
      logger: slow('logger'),
    });
    // What the handler logs once made (the test key's warning) is not a delivery's: let it finish first.
    await new Promise((resolve) => setTimeout(resolve, 60));
    const delivery = signDelivery(webhookBody());
    const tampered = { ...delivery, body: delivery.body.replace('SUCCEEDED', 'FAILED') };
    for (const [request, status, names] of [
      [tampered, 401, ['logger', 'onError', 'onSignatureMismatch']],
      [delivery, 200, ['logger']],
      [delivery, 200, ['logger', 'onDuplicate']],
    ] as const) {
      const pending: Promise<unknown>[] = [];
      finished.length = 0;
      expect((await handler(toRequest(request), { waitUntil: (promise) => void pending.push(promise) })).status).toBe(
        status,
      );
      expect(finished).toEqual([]);
      expect(pending).toHaveLength(1);
      await Promise.all(pending);
      expect(finished.sort()).toEqual(names);
    }
    // Nothing async to wait for: waitUntil is not called.
    const plain = createWebhookHandler({ ...base, logger: false });
    const pending: Promise<unknown>[] = [];
    const answered = await plain(toRequest(signDelivery(webhookBody())), { waitUntil: (p) => void pending.push(p) });
    expect(answered.status).toBe(200);
    expect(pending).toEqual([]);
  });

  it("gives onError the delivery's key and the error behind a failure, and a 5xx body that says only to retry", async () => {
    const failure = new Error('db down');
    const errors: WebhookHandlerError[] = [];
    const handler = createWebhookHandler({
      ...base,
      onError: (error) => void errors.push(error),
      onPayment: () => {
        throw failure;
      },
    });
    const body = webhookBody();
    const delivery = signDelivery(body);
    const response = await handler(toRequest(delivery));
    expect(await response.json()).toEqual({
      ok: false,
      code: 'HANDLER_FAILED',
      message: 'The webhook handler failed; the delivery was not processed. Retry later.',
    });
    // Refused before a key was known: neither key nor cause.
    expect((await handler(toRequest({ ...delivery, body: delivery.body.replace('SUCCEEDED', 'FAILED') }))).status).toBe(
      401,
    );
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatchObject({ code: 'HANDLER_FAILED', status: 500, key: `${String(body['id'])}:SUCCEEDED` });
    expect(errors[0]?.cause).toBe(failure);
    expect(Object.keys(errors[1] ?? {}).sort()).toEqual(['code', 'message', 'status']);
  });

  it('times each log record from the start of its delivery', async () => {
    const logs: WebhookLogRecord[] = [];
    const handler = createWebhookHandler({
      ...base,
      handlerTimeoutMs: 1_000,
      logger: collectInto(logs),
      onPayment: () => new Promise<void>((resolve) => setTimeout(resolve, 50)),
    });
    const started = Date.now();
    expect((await handler(toRequest(signDelivery(webhookBody())))).status).toBe(200);
    const elapsed = Date.now() - started;
    expect(logs).toHaveLength(1);
    expect(logs[0]?.durationMs).toBeGreaterThanOrEqual(45);
    expect(logs[0]?.durationMs).toBeLessThanOrEqual(elapsed);
  });

  it('records in the mismatch capture the registered URL a webhookUrl function or list chose for the request', async () => {
    const choices: WebhookUrlOption[] = [() => WEBHOOK_URL, ['https://other.example.kg/hooks', WEBHOOK_URL]];
    for (const webhookUrl of choices) {
      const captured: Array<string | undefined> = [];
      const handler = createWebhookHandler({
        ...base,
        webhookUrl,
        onSignatureMismatch: (_request, { capture }) => void captured.push(capture.webhookUrl),
      });
      const delivery = signDelivery(webhookBody());
      const tampered = { ...delivery, body: delivery.body.replace('SUCCEEDED', 'FAILED') };
      expect((await handler(toRequest(tampered))).status).toBe(401);
      await vi.waitFor(() => expect(captured).toEqual([WEBHOOK_URL]));
    }
  });

  it('logs a hook that throws or rejects as hook-failed (warn), naming the hook, what it did and the delivery', async () => {
    const logs: WebhookLogRecord[] = [];
    const handler = createWebhookHandler({
      ...base,
      logger: collectInto(logs),
      onDuplicate: () => {
        throw new Error('metrics down');
      },
      onError: () => Promise.reject(new Error('pager down')),
    });
    const delivery = signDelivery(webhookBody());
    await handler(toRequest(delivery));
    await handler(toRequest(delivery));
    await handler(toRequest({ ...delivery, body: delivery.body.replace('SUCCEEDED', 'FAILED') }));
    await vi.waitFor(() => expect(logs.filter((record) => record.event === 'hook-failed')).toHaveLength(2));
    expect(
      logs
        .filter((record) => record.event === 'hook-failed')
        .map((record) => [record.level, record.message, record.key]),
    ).toEqual([
      ['warn', 'onDuplicate threw: metrics down', `${delivery.id}:SUCCEEDED`],
      ['warn', 'onError rejected: pager down', undefined], // a tampered delivery: no key
    ]);
  });

  it('reports duplicates and logs handled deliveries with their key', async () => {
    const duplicates: string[] = [];
    const logs: WebhookLogRecord[] = [];
    const handler = createWebhookHandler({
      ...base,
      onDuplicate: (duplicate) => {
        duplicates.push(`${duplicate.state}:${duplicate.key}`);
      },
      logger: collectInto(logs),
    });
    const body = webhookBody();
    await handler(toRequest(signDelivery(body)));
    await handler(toRequest(signDelivery(body)));
    expect(duplicates).toEqual([`completed:${String(body['id'])}:SUCCEEDED`]);
    expect(logs.map((record) => record.event)).toEqual(['handled', 'duplicate']);
    expect(logs[0]).toMatchObject({
      level: 'info',
      status: 200,
      key: `${String(body['id'])}:SUCCEEDED`,
      transactionId: body['transactionId'],
    });
  });

  it('keeps answering when hooks and the logger throw or reject', async () => {
    const handler = createWebhookHandler({
      ...base,
      onError: () => {
        // A reason without a prototype, which has no text.
        throw Object.create(null);
      },
      onSignatureMismatch: () => Promise.reject(new Error('async hook')),
      logger: () => {
        throw new Error('logger');
      },
    });
    const delivery = signDelivery(webhookBody());
    expect(
      (await handler(toRequest({ ...delivery, headers: { ...delivery.headers, signature: 'AAAA' } }))).status,
    ).toBe(401);
    expect((await handler(toRequest(delivery))).status).toBe(200);
  });

  it('an async logger or hook that rejects neither changes the answer nor leaves a rejection unhandled', async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      const logged: string[] = [];
      const handler = createWebhookHandler({
        ...base,
        onError: () => Promise.reject(new Error('async onError')),
        // A reason without a prototype has no text: logging the failed hook must not fail in turn.
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- what a careless hook may do
        onSignatureMismatch: () => Promise.reject(Object.create(null)),
        // eslint-disable-next-line @typescript-eslint/no-misused-promises -- an async one, as a merchant may pass despite the type
        logger: (record) => {
          logged.push(record.event);
          return Promise.reject(new Error('log sink unreachable'));
        },
      });
      // An unsigned request is enough to reach the logger.
      const delivery = signDelivery(webhookBody());
      const forged = await handler(toRequest({ ...delivery, headers: { ...delivery.headers, signature: 'AAAA' } }));
      expect(forged.status).toBe(401);
      expect((await handler(toRequest(delivery))).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(logged).toContain('rejected');
      expect(logged).toContain('hook-failed');
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', listener);
    }
  });
});

describe('deduplication key and handler context', () => {
  it('keys by id and status by default: a status change reaches onPayment, a same-state redelivery (any case) is a duplicate', async () => {
    for (const [first, second] of [
      ['PROCESSING', 'SUCCEEDED'],
      ['FAILED', 'SUCCEEDED'],
    ] as const) {
      const seen: string[] = [];
      const handler = createWebhookHandler({
        ...base,
        onPayment: (webhook) => {
          seen.push(webhook.status);
        },
      });
      const body = webhookBody({ status: first });
      expect(await (await handler(toRequest(signDelivery(body)))).json()).toEqual({ ok: true });
      const update = await handler(toRequest(signDelivery({ ...body, status: second })));
      expect(await update.json()).toEqual({ ok: true });
      const sameState = await handler(toRequest(signDelivery({ ...body, status: second.toLowerCase() })));
      expect(await sameState.json()).toEqual({ ok: true, duplicate: true });
      expect(seen).toEqual([first, second]);
    }
  });

  it('keys by webhook.id by default, so a CREDIT of a payment is not a duplicate of its DEBIT', async () => {
    const calls: string[] = [];
    const handler = createWebhookHandler({
      ...base,
      onPayment: (webhook) => {
        calls.push(webhook.id);
      },
    });
    const debit = webhookBody();
    const credit = { ...debit, id: `${String(debit['transactionId'])}_CREDIT` };
    await handler(toRequest(signDelivery(debit)));
    await handler(toRequest(signDelivery(credit)));
    expect(calls).toEqual([debit['id'], credit['id']]);

    const byTransaction: string[] = [];
    const other = createWebhookHandler({
      ...base,
      dedupKey: (webhook) => webhook.transactionId,
      onPayment: (webhook) => {
        byTransaction.push(webhook.id);
      },
    });
    await other(toRequest(signDelivery(debit)));
    expect(await (await other(toRequest(signDelivery(credit)))).json()).toEqual({ ok: true, duplicate: true });
    expect(byTransaction).toEqual([debit['id']]);
  });

  it('answers 500 HANDLER_FAILED without claiming or calling onPayment when dedupKey throws or returns no key', async () => {
    const keys: Array<() => unknown> = [
      () => {
        throw new Error('tenant lookup failed');
      },
      () => '',
      () => 42,
    ];
    for (const key of keys) {
      const memory = createMemoryStore();
      const calls: string[] = [];
      const errors: Array<[string, number, string | undefined]> = [];
      const logs: WebhookLogRecord[] = [];
      const handler = createWebhookHandler({
        ...base,
        store: memory,
        dedupKey: key as () => string,
        onPayment: (webhook) => {
          calls.push(webhook.id);
        },
        onError: (error) => {
          errors.push([error.code, error.status, error.key]);
        },
        logger: collectInto(logs),
      });
      const body = webhookBody();
      const response = await handler(toRequest(signDelivery(body)));
      expect([response.status, ((await response.json()) as { code?: string }).code]).toEqual([500, 'HANDLER_FAILED']);
      expect(calls).toEqual([]);
      expect(memory.size).toBe(0);
      expect(errors).toEqual([['HANDLER_FAILED', 500, undefined]]);
      expect(logs).toEqual([
        expect.objectContaining({
          level: 'error',
          event: 'handler-failed',
          status: 500,
          code: 'HANDLER_FAILED',
          transactionId: body['transactionId'],
          // The key function's own error, or what a key must be.
          message: expect.stringMatching(
            /^dedupKey failed: (tenant lookup failed|dedupKey must return a non-empty string\.)$/,
          ),
        }),
      ]);
    }
  });

  it('answers 500 when onPayment throws and the claim cannot be released, saying the claim stays until its lease', async () => {
    const memory = createMemoryStore();
    let releases = 0;
    const store: DedupStore = {
      claim: (key, options) => memory.claim(key, options),
      complete: (key, token, options) => memory.complete(key, token, options),
      release: (key, token) => (++releases === 1 ? memory.release(key, token) : Promise.reject(new Error('READONLY'))),
    };
    const logs: WebhookLogRecord[] = [];
    const handler = createWebhookHandler({
      ...base,
      store,
      logger: collectInto(logs),
      onPayment: () => {
        throw new Error('db down');
      },
    });
    const delivery = signDelivery(webhookBody());
    // Released: the message is the handler's failure alone, and the retry is processed (it fails again).
    expect((await handler(toRequest(delivery))).status).toBe(500);
    expect(logs.map((record) => [record.event, record.message])).toEqual([
      ['handler-failed', 'onPayment threw: db down'],
    ]);
    expect((await handler(toRequest(delivery))).status).toBe(500);
    expect(logs.slice(1).map((record) => [record.event, record.level, record.status])).toEqual([
      ['bookkeeping-failed', 'error', undefined],
      ['handler-failed', 'error', 500],
    ]);
    expect(logs[1]?.message).toMatch(/^Could not release the claim \(the lease will expire\): .*READONLY/);
    expect(logs[1]?.error).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(logs[2]?.message).toBe('onPayment threw: db down (the claim may stay until its lease expires)');
    // Not released: the claim holds, so the next retry is answered 409 until its lease expires.
    expect((await handler(toRequest(delivery))).status).toBe(409);
  });

  it('answers 500 HANDLER_FAILED, reported and logged, when something unexpected throws inside the flow', async () => {
    const errors: Array<[string, number]> = [];
    const logs: WebhookLogRecord[] = [];
    const handler = createWebhookHandler({
      ...base,
      onError: (error) => {
        errors.push([error.code, error.status]);
      },
      logger: collectInto(logs),
    });
    const request = toRequest(signDelivery(webhookBody()));
    // A request whose platform object breaks when read: a bug, never a rejected promise for the listener.
    Object.defineProperty(request, 'signal', {
      get() {
        throw new Error('signal getter broke');
      },
    });
    const response = await handler(request);
    expect([response.status, ((await response.json()) as { code?: string }).code]).toEqual([500, 'HANDLER_FAILED']);
    expect(errors).toEqual([['HANDLER_FAILED', 500]]);
    expect(logs.map((record) => [record.event, record.level, record.status, record.code])).toEqual([
      ['handler-failed', 'error', 500, 'HANDLER_FAILED'],
    ]);
    expect(logs[0]?.message).toBe('Unexpected failure: signal getter broke');
  });

  it('handles a delivery whose onPayment returns null or another value that is no park', async () => {
    for (const value of [null, 0, 'done', { applied: true }]) {
      const handler = createWebhookHandler({ ...base, onPayment: () => value });
      const response = await handler(toRequest(signDelivery(webhookBody())));
      expect([response.status, await response.json()], JSON.stringify(value)).toEqual([200, { ok: true }]);
    }
  });

  it('gives onPayment the key, the signed timestamp and a signal aborted at the deadline', async () => {
    let seen: { key: string; timestamp: number; aborted: () => boolean } | undefined;
    const pending: Promise<unknown>[] = [];
    const handler = createWebhookHandler({
      ...base,
      handlerTimeoutMs: 100,
      onPayment: async (_webhook, context) => {
        seen = { key: context.key, timestamp: context.timestamp, aborted: () => context.signal.aborted };
        await new Promise((resolve) => context.signal.addEventListener('abort', () => resolve(undefined)));
      },
    });
    const body = webhookBody();
    const timestamp = Date.now() - 50;
    const response = await handler(toRequest(signDelivery(body, { timestamp })), {
      waitUntil: (promise) => {
        pending.push(promise);
      },
    });
    expect(response.status).toBe(500);
    expect(seen).toMatchObject({ key: `${String(body['id'])}:SUCCEEDED`, timestamp });
    expect(seen?.aborted()).toBe(true);
    expect(pending).toHaveLength(1);
    await pending[0];
  });

  it('hands the release of a claim that lands after its 503 to waitUntil, so a serverless function lives to run it', async () => {
    const memory = createMemoryStore();
    let landed!: () => void;
    const store: DedupStore = {
      // The claim lands 50 ms after storeTimeoutMs: the answer is 503 by then.
      claim: (key, options) =>
        new Promise((resolve) => {
          landed = () => resolve(memory.claim(key, options));
          setTimeout(landed, 150);
        }),
      complete: (key, token, options) => memory.complete(key, token, options),
      release: (key, token) => memory.release(key, token),
    };
    const pending: Promise<unknown>[] = [];
    const handler = createWebhookHandler({ ...base, store, storeTimeoutMs: 100 });
    const delivery = signDelivery(webhookBody());
    const response = await handler(toRequest(delivery), { waitUntil: (promise) => void pending.push(promise) });
    expect(response.status).toBe(503);
    expect(pending).toHaveLength(1);
    await pending[0];
    // Released: the key is free for the retry.
    expect(memory.size).toBe(0);
  });

  it.each([
    ['the completion of a handled delivery', 200, () => undefined],
    [
      'the release of a failed one',
      500,
      () => {
        throw new Error('not now');
      },
    ],
  ])(
    'hands %s that misses storeTimeoutMs to waitUntil, so a serverless platform does not cancel it',
    async (_label, status, onPayment) => {
      const memory = createMemoryStore();
      const late = <T>(work: () => Promise<T>): Promise<T> =>
        new Promise((resolve) => setTimeout(() => resolve(work()), 150));
      const store: DedupStore = {
        claim: (key, options) => memory.claim(key, options),
        // Each lands 50 ms after storeTimeoutMs: the answer is sent by then.
        complete: (key, token, options) => late(() => memory.complete(key, token, options)),
        release: (key, token) => late(() => memory.release(key, token)),
      };
      const pending: Promise<unknown>[] = [];
      const handler = createWebhookHandler({ ...base, store, storeTimeoutMs: 100, onPayment });
      const delivery = signDelivery(webhookBody());
      const response = await handler(toRequest(delivery), { waitUntil: (promise) => void pending.push(promise) });
      expect(response.status).toBe(status);
      expect(pending).toHaveLength(1);
      await pending[0];
      // Landed: a copy is a duplicate of the handled delivery, or free to be handled again after the failed one.
      const key = `${String(JSON.parse(delivery.body).id)}:SUCCEEDED`;
      const claim = await memory.claim(key, { leaseMs: 60_000 });
      expect(claim.status).toBe(status === 200 ? 'completed' : 'claimed');
    },
  );

  it('waits one lease at most for a claim that never lands, so waitUntil is not held for ever', async () => {
    const logs: WebhookLogRecord[] = [];
    const store: DedupStore = {
      claim: () => new Promise(() => {}),
      complete: () => Promise.resolve(),
      release: () => Promise.resolve(),
    };
    const pending: Promise<unknown>[] = [];
    const handler = createWebhookHandler({
      ...base,
      store,
      storeTimeoutMs: 50,
      handlerTimeoutMs: 100,
      leaseMs: 300,
      logger: collectInto(logs),
    });
    const setTimer = vi.spyOn(globalThis, 'setTimeout');
    const started = Date.now();
    const response = await handler(toRequest(signDelivery(webhookBody())), {
      waitUntil: (promise) => void pending.push(promise),
    });
    expect(response.status).toBe(503);
    // The wait goes on, but once answered it does not keep a Node process alive (a shutdown is not held up).
    const live = setTimer.mock.results
      .map((result) => result.value as NodeJS.Timeout)
      .filter((timer) => !(timer as unknown as { _destroyed: boolean })._destroyed);
    expect(live.length).toBeGreaterThan(0);
    expect(live.filter((timer) => timer.hasRef())).toEqual([]);
    setTimer.mockRestore();
    expect(pending).toHaveLength(1);
    await pending[0];
    // The lease is counted from the wait's start, after the claim's 50 ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(340);
    expect(logs.map((record) => [record.event, record.level])).toEqual([
      ['store-unavailable', 'error'],
      ['bookkeeping-failed', 'error'],
    ]);
    expect(logs[1]?.message).toContain('had not landed after one lease (300 ms)');
  });

  it('answers 200 when onPayment succeeded but the store cannot record it, and reports it', async () => {
    const memory = createMemoryStore();
    const store: DedupStore = {
      claim: (key, options) => memory.claim(key, options),
      complete: () => Promise.reject(new Error('READONLY')),
      release: (key, token) => memory.release(key, token),
    };
    const errors: Array<[string, number]> = [];
    const handler = createWebhookHandler({
      ...base,
      store,
      onError: (error) => {
        errors.push([error.code, error.status]);
      },
    });
    const response = await handler(toRequest(signDelivery(webhookBody())));
    expect(response.status).toBe(200);
    expect(errors).toEqual([['STORE_UNAVAILABLE', 200]]);
  });

  it('reports a 409 to onError as well as onDuplicate, and answers a retry 409 while a late handler still holds the claim', async () => {
    const errors: Array<[string, number]> = [];
    const duplicates: string[] = [];
    const pending: Promise<unknown>[] = [];
    let finish: () => void = () => {};
    const handler = createWebhookHandler({
      ...base,
      handlerTimeoutMs: 50,
      onError: (error) => {
        errors.push([error.code, error.status]);
      },
      onDuplicate: (duplicate) => {
        duplicates.push(duplicate.state);
      },
      onPayment: () =>
        new Promise<void>((resolve) => {
          finish = resolve;
        }),
    });
    const delivery = signDelivery(webhookBody());
    const late = await handler(toRequest(delivery), {
      waitUntil: (promise) => {
        pending.push(promise);
      },
    });
    expect(late.status).toBe(500);
    const retry = await handler(toRequest(delivery));
    expect(retry.status).toBe(409);
    expect(errors).toEqual([
      ['HANDLER_FAILED', 500],
      ['DELIVERY_IN_PROGRESS', 409],
    ]);
    expect(duplicates).toEqual(['in-progress']);
    // The late handler finishes: its claim is completed, and the next retry is a duplicate.
    finish();
    await Promise.all(pending);
    expect(await (await handler(toRequest(delivery))).json()).toEqual({ ok: true, duplicate: true });
  });

  it('answers 500 when the body was already read before the handler', async () => {
    const handler = createWebhookHandler(base);
    const request = toRequest(signDelivery(webhookBody()));
    await request.text();
    const response = await handler(request);
    expect(response.status).toBe(500);
    expect(((await response.json()) as { code: string }).code).toBe('INVALID_ARGUMENT');
  });

  it('records a delivery parked after the deadline as handled, and logs its reason', async () => {
    const logs: WebhookLogRecord[] = [];
    const pending: Promise<unknown>[] = [];
    const handler = createWebhookHandler({
      ...base,
      handlerTimeoutMs: 50,
      logger: collectInto(logs),
      onPayment: () => new Promise((resolve) => setTimeout(() => resolve(park('unknown order')), 100)),
    });
    const delivery = signDelivery(webhookBody());
    const late = await handler(toRequest(delivery), { waitUntil: (promise) => void pending.push(promise) });
    expect(late.status).toBe(500);
    await Promise.all(pending);
    expect(logs.map((record) => record.event)).toEqual(['handler-timeout', 'parked', 'late-handler-settled']);
    expect(logs[1]?.message).toContain('unknown order');
    expect(logs[2]?.message).toContain('unknown order');
    expect(await (await handler(toRequest(delivery))).json()).toEqual({ ok: true, duplicate: true });
  });
});

describe('deadLetter for a signed payload payhook does not understand', () => {
  it('answers 500 HANDLER_FAILED saying whether deadLetter threw or missed handlerTimeoutMs', async () => {
    const failure = new Error('dead-letter table missing');
    const failing: Array<() => Promise<void>> = [
      () => {
        throw failure;
      },
      () => new Promise<void>(() => {}),
    ];
    const reported: WebhookHandlerError[] = [];
    for (const deadLetter of failing) {
      const handler = createWebhookHandler({
        ...base,
        handlerTimeoutMs: 50,
        deadLetter,
        onError: (error) => void reported.push(error),
        logger: false,
      });
      const response = await handler(toRequest(signDelivery(webhookBody({ amount: 'twelve' }))));
      expect([response.status, ((await response.json()) as { code?: string }).code]).toEqual([500, 'HANDLER_FAILED']);
    }
    expect(reported).toEqual([
      expect.objectContaining({
        code: 'HANDLER_FAILED',
        status: 500,
        message: 'deadLetter threw: dead-letter table missing',
        cause: failure,
      }),
      expect.objectContaining({
        code: 'HANDLER_FAILED',
        status: 500,
        message: 'deadLetter did not finish within 50 ms; the service will retry.',
      }),
    ]);
    expect(reported[1]?.cause).toBeUndefined();
  });
});

// A deadLetter that misses handlerTimeoutMs is answered 500 but keeps running: how it ends is logged, and a parked
// delivery's claim waits for it, so a retry meanwhile does not park and dead-letter the delivery a second time.
describe('a deadLetter that misses handlerTimeoutMs', () => {
  /** A handler (handlerTimeoutMs 50) whose deadLetter ends when the test says, with its log and waitUntil. */
  function lateDeadLetter(onPayment: WebhookHandlerOptions['onPayment'] = () => park('unknown order')) {
    const ends: Array<(error?: Error) => void> = [];
    const deadLetter = vi.fn(
      () => new Promise<void>((resolve, reject) => void ends.push((error) => (error ? reject(error) : resolve()))),
    );
    const logs: WebhookLogRecord[] = [];
    const pending: Promise<unknown>[] = [];
    const handler = createWebhookHandler({
      ...base,
      handlerTimeoutMs: 50,
      logger: collectInto(logs),
      deadLetter,
      onPayment,
    });
    const waitUntil = (promise: Promise<unknown>) => void pending.push(promise);
    return { deadLetter, end: (error?: Error) => ends.shift()!(error), logs, pending, handler, waitUntil };
  }

  it.each([
    ['in time', 0],
    ['after its deadline', 100],
  ])('keeps a parked delivery claimed until it ends, then records it as handled (onPayment %s)', async (_, parkMs) => {
    const { deadLetter, end, logs, pending, handler, waitUntil } = lateDeadLetter(() =>
      parkMs === 0
        ? park('unknown order')
        : new Promise((resolve) => setTimeout(() => resolve(park('unknown order')), parkMs)),
    );
    const delivery = signDelivery(webhookBody());
    expect((await handler(toRequest(delivery), { waitUntil })).status).toBe(500);
    await vi.waitFor(() => expect(deadLetter).toHaveBeenCalledTimes(1));
    await new Promise((resolve) => setTimeout(resolve, 80));
    // deadLetter still runs, past its deadline: the retry finds the delivery in progress.
    expect((await handler(toRequest(delivery))).status).toBe(409);
    end();
    await Promise.all(pending);
    expect(logs.at(-1)).toMatchObject({
      event: 'late-handler-settled',
      message:
        parkMs === 0
          ? 'deadLetter finished after its deadline; the delivery is now recorded as handled.'
          : expect.stringContaining('onPayment parked the delivery (unknown order) after its deadline'),
    });
    // Counted as parked, with its reason, whichever handler was late.
    expect(logs.filter((record) => record.event === 'parked').map((record) => record.message)).toEqual([
      expect.stringContaining('Parked by onPayment (unknown order)'),
    ]);
    expect(await (await handler(toRequest(delivery))).json()).toEqual({ ok: true, duplicate: true });
    expect(deadLetter).toHaveBeenCalledTimes(1);
  });

  it('releases the claim of a parked delivery when it throws after its deadline', async () => {
    const { deadLetter, end, logs, pending, handler, waitUntil } = lateDeadLetter();
    const delivery = signDelivery(webhookBody());
    expect((await handler(toRequest(delivery), { waitUntil })).status).toBe(500);
    end(new Error('dead-letter table missing'));
    await Promise.all(pending);
    expect(logs.at(-1)).toMatchObject({
      event: 'late-handler-settled',
      message: 'After its deadline: deadLetter threw: dead-letter table missing; the claim was released for the retry.',
    });
    // Released: the retry parks the delivery and hands it to deadLetter again, which answers in time now.
    deadLetter.mockImplementation(() => Promise.resolve());
    expect(await (await handler(toRequest(delivery))).json()).toEqual({ ok: true, parked: true });
    expect(deadLetter).toHaveBeenCalledTimes(2);
  });

  it('logs how the hand-off of a payload not understood ended', async () => {
    const { end, logs, pending, handler, waitUntil } = lateDeadLetter();
    const request = () => toRequest(signDelivery(webhookBody({ amount: 'twelve' })));
    expect((await handler(request(), { waitUntil })).status).toBe(500);
    expect((await handler(request(), { waitUntil })).status).toBe(500);
    end();
    end(new Error('queue full'));
    await Promise.all(pending);
    expect(logs.filter((record) => record.event === 'late-handler-settled').map((record) => record.message)).toEqual([
      'deadLetter finished after its deadline (answered 500): the retry hands the delivery to it again.',
      'After its deadline: deadLetter threw: queue full.',
    ]);
  });
});

describe('the timer of a delivery', () => {
  it("is armed for each stage's own deadline as it starts, one at a time, and cleared once answered", async () => {
    const handler = createWebhookHandler({
      ...base,
      bodyTimeoutMs: 9_000,
      storeTimeoutMs: 4_000,
      handlerTimeoutMs: 8_000,
    });
    const request = toRequest(signDelivery(webhookBody()));
    const setTimer = vi.spyOn(globalThis, 'setTimeout');
    try {
      const clearTimer = vi.spyOn(globalThis, 'clearTimeout');
      expect((await handler(request)).status).toBe(200);
      // Body, claim, onPayment and complete: each armed as it starts, replacing the last.
      expect(setTimer.mock.calls.map((call) => call[1])).toEqual([9_000, 4_000, 8_000, 4_000]);
      const timers = setTimer.mock.results.map((result) => result.value as unknown);
      expect(timers.every((timer) => clearTimer.mock.calls.some(([cleared]) => cleared === timer))).toBe(true);
      clearTimer.mockRestore();
    } finally {
      setTimer.mockRestore();
    }
  });
});

describe('store failures, as onError and the log tell them', () => {
  it("names the store call that failed, and keeps the store's own error as the cause", async () => {
    const memory = createMemoryStore();
    const refused = new Error('ECONNREFUSED');
    let claim: DedupStore['claim'] = () => Promise.reject(refused);
    const store: DedupStore = {
      claim: (key, options) => claim(key, options),
      complete: () => Promise.reject(new Error('READONLY')),
      release: () => Promise.reject(new Error('READONLY')),
    };
    let fail = false;
    const errors: WebhookHandlerError[] = [];
    const logs: WebhookLogRecord[] = [];
    const handler = createWebhookHandler({
      ...base,
      store,
      storeTimeoutMs: 50,
      onError: (error) => void errors.push(error),
      logger: collectInto(logs),
      onPayment: () => {
        if (fail) throw new Error('db down');
      },
    });
    const answered = async () => (await handler(toRequest(signDelivery(webhookBody())))).status;

    expect(await answered()).toBe(503);
    expect(errors[0]).toMatchObject({
      code: 'STORE_UNAVAILABLE',
      status: 503,
      message: 'The deduplication store failed to claim: ECONNREFUSED',
      cause: expect.objectContaining({ name: 'PayhookError', code: 'STORE_UNAVAILABLE', cause: refused }),
    });

    claim = () => new Promise(() => {});
    expect(await answered()).toBe(503);
    expect(errors[1]).toMatchObject({
      code: 'STORE_UNAVAILABLE',
      status: 503,
      message: 'The deduplication store did not claim within 50 ms.',
      cause: expect.objectContaining({ name: 'PayhookError', code: 'STORE_UNAVAILABLE' }),
    });

    claim = (key, options) => memory.claim(key, options);
    logs.length = 0;
    expect(await answered()).toBe(200);
    const unrecorded =
      'Handled, but the store could not record it: The deduplication store failed to complete: READONLY';
    expect(errors[2]).toMatchObject({ code: 'STORE_UNAVAILABLE', status: 200, message: unrecorded });
    expect(logs.map((record) => [record.event, record.level, record.status, record.code, record.message])).toEqual([
      ['bookkeeping-failed', 'error', 200, 'STORE_UNAVAILABLE', unrecorded],
      ['handled', 'info', 200, undefined, 'Delivery handled.'],
    ]);
    expect(logs[0]?.error).toMatchObject({ code: 'STORE_UNAVAILABLE' });

    fail = true;
    logs.length = 0;
    expect(await answered()).toBe(500);
    expect(logs[0]).toMatchObject({
      event: 'bookkeeping-failed',
      message:
        'Could not release the claim (the lease will expire): The deduplication store failed to release: READONLY',
    });
  });

  it('answers 503, not an unexpected 500, when the store throws instead of rejecting', async () => {
    const store: DedupStore = {
      claim: () => {
        throw new Error('pool closed');
      },
      complete: () => Promise.resolve(),
      release: () => Promise.resolve(),
    };
    const errors: WebhookHandlerError[] = [];
    const handler = createWebhookHandler({ ...base, store, onError: (error) => void errors.push(error) });
    const response = await handler(toRequest(signDelivery(webhookBody())));
    expect([response.status, ((await response.json()) as { code?: string }).code]).toEqual([503, 'STORE_UNAVAILABLE']);
    expect(errors).toEqual([
      expect.objectContaining({
        code: 'STORE_UNAVAILABLE',
        message: 'The deduplication store failed to claim: pool closed',
      }),
    ]);
  });

  it("does not release a late claim that landed as another worker's (in progress or completed): it holds no token of this delivery", async () => {
    for (const status of ['in-progress', 'completed'] as const) {
      let land!: (result: ClaimResult) => void;
      const released: unknown[] = [];
      const store: DedupStore = {
        claim: () => new Promise((resolve) => (land = resolve)),
        complete: () => Promise.resolve(),
        release: (key, token) => {
          released.push([key, token]);
          return Promise.resolve();
        },
      };
      const { response, logs, settled } = await deliverWithWaitUntil({ store, storeTimeoutMs: 50 });
      expect(response.status).toBe(503);
      land({ status });
      await settled();
      expect(released, status).toEqual([]);
      expect(logs.map((record) => record.event)).toEqual(['store-unavailable']);
    }
  });

  it('logs bookkeeping-failed when a claim that landed after its 503 cannot be released', async () => {
    const memory = createMemoryStore();
    let land!: () => void;
    const store: DedupStore = {
      claim: (key, options) => new Promise((resolve) => (land = () => resolve(memory.claim(key, options)))),
      complete: () => Promise.resolve(),
      release: () => Promise.reject(new Error('READONLY')),
    };
    const { response, logs, settled } = await deliverWithWaitUntil({ store, storeTimeoutMs: 50 });
    expect(response.status).toBe(503);
    land();
    await settled();
    expect(logs.map((record) => [record.event, record.level])).toEqual([
      ['store-unavailable', 'error'],
      ['bookkeeping-failed', 'error'],
    ]);
    expect(logs[1]?.message).toBe(
      'Could not release a claim that landed late: The deduplication store failed to release: READONLY (it holds until its lease expires).',
    );
    expect(logs[1]?.error).toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });

  it('logs late-handler-settled with its error when a late handler throws, its claim released', async () => {
    const failure = new Error('ERP timed out');
    let fail!: () => void;
    const { response, logs, settled } = await deliverWithWaitUntil({
      store: createMemoryStore(),
      handlerTimeoutMs: 50,
      onPayment: () => new Promise<void>((_resolve, reject) => (fail = () => reject(failure))),
    });
    expect(response.status).toBe(500);
    fail();
    await settled();
    expect(logs.map((record) => [record.event, record.level])).toEqual([
      ['handler-timeout', 'error'],
      ['late-handler-settled', 'warn'],
    ]);
    expect(logs[1]?.message).toBe('After its deadline: ERP timed out; the claim was released for the retry.');
    expect(logs[1]?.error).toBe(failure);
  });

  // It once said "now recorded as handled" here, though the store kept the claim a retry took after the lease.
  it.each([
    [
      'finishes',
      'onPayment finished after its deadline and its lease; recorded as handled unless a retry claimed the delivery meanwhile.',
    ],
    ['throws', 'After its deadline: ERP timed out; its lease had passed.'],
  ])('says so when a late handler %s after its claim lapsed', async (then, message) => {
    let settle!: () => void;
    const { response, logs, settled } = await deliverWithWaitUntil({
      store: createMemoryStore(),
      handlerTimeoutMs: 20,
      storeTimeoutMs: 10,
      leaseMs: 60,
      onPayment: () =>
        new Promise<void>((resolve, reject) => {
          settle = then === 'finishes' ? resolve : () => reject(new Error('ERP timed out'));
        }),
    });
    expect(response.status).toBe(500);
    await new Promise((resolve) => setTimeout(resolve, 80));
    settle();
    await settled();
    expect(logs.map((record) => record.event)).toEqual(['handler-timeout', 'late-handler-settled']);
    expect(logs[1]?.message).toBe(message);
  });

  // The stores' leases run on the wall clock: one stepped forward (a resumed VM) ends them, whatever the monotonic says.
  it('judges the lease by the wall clock the stores keep it on', async () => {
    let finish!: () => void;
    const { response, logs, settled } = await deliverWithWaitUntil({
      store: createMemoryStore(),
      handlerTimeoutMs: 20,
      onPayment: () => new Promise<void>((resolve) => (finish = resolve)),
    });
    expect(response.status).toBe(500);
    const wall = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => wall() + 3_600_000);
    try {
      finish();
      await settled();
    } finally {
      vi.restoreAllMocks();
    }
    expect(logs[1]?.message).toContain('after its deadline and its lease');
  });

  // The store may take the claim at any moment before its answer lands: the lease is counted from the request for it,
  // so the log never says "recorded" of a claim whose lease may have passed. Timer delays only make it later.
  it('counts the lease from the moment the claim was asked for, not from its answer', async () => {
    const memory = createMemoryStore();
    const store: DedupStore = {
      claim: (key, options) => new Promise((resolve) => setTimeout(() => resolve(memory.claim(key, options)), 50)),
      complete: (key, token, options) => memory.complete(key, token, options),
      release: (key, token) => memory.release(key, token),
    };
    let finish!: () => void;
    const { response, logs, settled } = await deliverWithWaitUntil({
      store,
      storeTimeoutMs: 60,
      handlerTimeoutMs: 20,
      leaseMs: 150,
      onPayment: () => new Promise<void>((resolve) => (finish = resolve)),
    });
    expect(response.status).toBe(500);
    // About 70 ms after the claim was asked for, 20 ms after it landed: 100 ms more passes the lease only for the first.
    await new Promise((resolve) => setTimeout(resolve, 100));
    finish();
    await settled();
    expect(logs[1]?.message).toContain('after its deadline and its lease');
  });

  it('logs bookkeeping-failed when a late handler finishes but its claim cannot be recorded', async () => {
    const memory = createMemoryStore();
    const store: DedupStore = {
      claim: (key, options) => memory.claim(key, options),
      complete: () => Promise.reject(new Error('READONLY')),
      release: (key, token) => memory.release(key, token),
    };
    let finish!: () => void;
    const { response, logs, settled } = await deliverWithWaitUntil({
      store,
      handlerTimeoutMs: 50,
      onPayment: () => new Promise<void>((resolve) => (finish = resolve)),
    });
    expect(response.status).toBe(500);
    finish();
    await settled();
    expect(logs.map((record) => [record.event, record.level])).toEqual([
      ['handler-timeout', 'error'],
      ['bookkeeping-failed', 'error'],
    ]);
    expect(logs[1]?.message).toBe(
      'Could not settle the claim after a late handler (the lease will expire): The deduplication store failed to complete: READONLY',
    );
    expect(logs[1]?.error).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(logs[1]).toMatchObject({ status: 500, code: 'STORE_UNAVAILABLE' });
  });

  // A store that refuses the completion (a foreign key, an ACL) is misconfigured, which no retry mends: onError
  // hears INVALID_ARGUMENT, not an outage.
  it('tells onError a late settle refused by a misconfigured store from an outage', async () => {
    const memory = createMemoryStore();
    const heard: Array<[string, number]> = [];
    const logs: WebhookLogRecord[] = [];
    const pending: Promise<unknown>[] = [];
    let finish!: () => void;
    const handler = createWebhookHandler({
      ...base,
      store: {
        claim: (key, options) => memory.claim(key, options),
        complete: () => Promise.reject(new PayhookError('INVALID_ARGUMENT', 'The Redis key holds a foreign value.')),
        release: (key, token) => memory.release(key, token),
      },
      handlerTimeoutMs: 50,
      onPayment: () => new Promise<void>((resolve) => (finish = resolve)),
      onError: (error) => void heard.push([error.code, error.status]),
      logger: collectInto(logs),
    });
    const response = await handler(toRequest(signDelivery(webhookBody())), {
      waitUntil: (promise) => void pending.push(promise),
    });
    expect(response.status).toBe(500);
    finish();
    await Promise.all(pending);
    expect(heard).toEqual([
      ['HANDLER_FAILED', 500],
      ['INVALID_ARGUMENT', 500],
    ]);
    expect(logs.at(-1)).toMatchObject({ event: 'bookkeeping-failed', status: 500, code: 'INVALID_ARGUMENT' });
  });
});

describe('the 200 of a handled delivery', () => {
  // The service stops retrying at the 200; a copy sent right after it (at least once) must find the completion
  // recorded, so the 200 waits for complete() however slowly the store records it.
  it('is answered only once the store recorded the completion: a copy sent right after it is a duplicate', async () => {
    const inner = createMemoryStore();
    const events: string[] = [];
    const store: DedupStore = {
      claim: (key, options) => inner.claim(key, options),
      release: (key, token) => inner.release(key, token),
      complete: async (key, token, options) => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        await inner.complete(key, token, options);
        events.push('completed');
      },
    };
    const handler = createWebhookHandler({ ...base, store });
    const delivery = signDelivery(webhookBody());
    const first = await handler(toRequest(delivery));
    events.push(`answered ${first.status}`);
    const again = await handler(toRequest(delivery));
    expect(events).toEqual(['completed', 'answered 200']);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ ok: true, duplicate: true });
  });
});
