// createDurableObjectStore on its own, in Node, against stand-in namespaces:
// misuse is INVALID_ARGUMENT at creation, every way the object can fail
// (unreachable, an error status) is STORE_UNAVAILABLE, which the Web handler
// turns into 503, and a success PayhookDedupObject never answers (another
// class bound) is INVALID_ARGUMENT. The real object
// in workerd is tested in durable-object.test.ts.
import { describe, expect, it } from 'vitest';
import {
  PayhookDedupObject,
  createDurableObjectStore,
  type DurableObjectNamespaceLike,
  type DurableObjectStubLike,
} from '../../src/cloudflare/index.js';
import { createWebhookHandler } from '../../src/web/index.js';
import { PUBLIC_KEY, signDelivery, webhookBody } from '../helpers/sign.js';

function namespaceAnswering(fetch: DurableObjectStubLike['fetch']): DurableObjectNamespaceLike & { names: string[] } {
  const names: string[] = [];
  return {
    names,
    idFromName: (name) => {
      names.push(name);
      return { name };
    },
    get: () => ({ fetch }),
  };
}

const answer = (status: number, body: string) => Promise.resolve(new Response(body, { status }));

describe('createDurableObjectStore', () => {
  it('refuses a missing or wrong namespace, and a prefix that is not a string, with INVALID_ARGUMENT', () => {
    const wrong: unknown[] = [undefined, null, {}, { namespace: {} }, { namespace: { idFromName: () => 1 } }];
    for (const options of wrong) {
      expect(() => createDurableObjectStore(options as never)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
    }
    // A service binding ([[services]]) answers every name with an RPC function: idFromName and get pass for a
    // namespace's, and every claim failed 503 for ever, logged as an outage.
    const rpc = () => Promise.reject(new Error('Could not serialize object of type "JsRpcPromise".'));
    const service = { fetch: rpc, connect: rpc, idFromName: rpc, get: rpc };
    expect(() => createDurableObjectStore({ namespace: service as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('service binding') }),
    );
    const namespace = namespaceAnswering(() => answer(204, ''));
    expect(() => createDurableObjectStore({ namespace, prefix: 1 as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });

  it('routes each key to the object named prefix + key', async () => {
    const namespace = namespaceAnswering(() => answer(200, '{"status":"in-progress"}'));
    await createDurableObjectStore({ namespace }).claim('t-1:SUCCEEDED', { leaseMs: 1000 });
    await createDurableObjectStore({ namespace, prefix: 'shop:' }).claim('t-1:SUCCEEDED', { leaseMs: 1000 });
    expect(namespace.names).toEqual(['payhook:t-1:SUCCEEDED', 'shop:t-1:SUCCEEDED']);
  });

  const failures: Array<[string, DurableObjectStubLike['fetch']]> = [
    ['the stub rejects', () => Promise.reject(new Error('Network connection lost.'))],
    ['the object answers 500', () => answer(500, '{"code":"STORE_UNAVAILABLE","message":"disk on fire"}')],
    ['the answer is not JSON', () => answer(502, '<html>bad gateway</html>')],
  ];
  for (const [what, fetch] of failures) {
    it(`rejects every operation with STORE_UNAVAILABLE when ${what}`, async () => {
      const store = createDurableObjectStore({ namespace: namespaceAnswering(fetch) });
      const unavailable = { code: 'STORE_UNAVAILABLE', message: expect.stringContaining('Durable Object') };
      await expect(store.claim('k', { leaseMs: 1000 })).rejects.toMatchObject(unavailable);
      await expect(store.complete('k', 'token', { retentionMs: 1000 })).rejects.toMatchObject(unavailable);
      await expect(store.release('k', 'token')).rejects.toMatchObject(unavailable);
    });
  }

  // Workers' stub errors carry these flags; complete and release are idempotent under their token.
  function passingFailure(flags: { retryable?: boolean; overloaded?: boolean; durableObjectReset?: boolean }): Error {
    return Object.assign(new Error('Durable Object reset because its code was updated.'), flags);
  }

  // workerd marks an object reset (ctx.abort(), a code update) remote and durableObjectReset, not retryable.
  it.each([
    ['marks retryable', { retryable: true }],
    ['marks a reset of the object', { remote: true, durableObjectReset: true }],
  ])('tries complete and release once more, on a new stub, after an error Workers %s', async (_, flags) => {
    for (const operation of ['complete', 'release'] as const) {
      let calls = 0;
      const namespace = namespaceAnswering(() =>
        ++calls === 1 ? Promise.reject(passingFailure(flags)) : Promise.resolve(new Response(null, { status: 204 })),
      );
      const store = createDurableObjectStore({ namespace });
      await (operation === 'complete'
        ? store.complete('k', 'token', { retentionMs: 1000 })
        : store.release('k', 'token'));
      expect(calls).toBe(2);
      expect(namespace.names).toEqual(['payhook:k', 'payhook:k']);
    }
  });

  it('does not try again a claim, an overloaded object, a failure not marked retryable, or twice', async () => {
    const cases: Array<
      [string, { retryable?: boolean; overloaded?: boolean; durableObjectReset?: boolean }, 'claim' | 'complete']
    > = [
      ['a claim (it may have landed)', { retryable: true }, 'claim'],
      ['a claim at a reset object', { durableObjectReset: true }, 'claim'],
      ['an overloaded object', { retryable: true, overloaded: true }, 'complete'],
      ['an overloaded object reset', { durableObjectReset: true, overloaded: true }, 'complete'],
      ['a failure not marked retryable', {}, 'complete'],
    ];
    for (const [what, flags, operation] of cases) {
      let calls = 0;
      const store = createDurableObjectStore({
        namespace: namespaceAnswering(() => (calls++, Promise.reject(passingFailure(flags)))),
      });
      const done =
        operation === 'claim' ? store.claim('k', { leaseMs: 1000 }) : store.complete('k', 'token', { retentionMs: 1 });
      await expect(done, what).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      expect(calls, what).toBe(1);
    }
    let calls = 0;
    const store = createDurableObjectStore({
      namespace: namespaceAnswering(() => (calls++, Promise.reject(passingFailure({ retryable: true })))),
    });
    await expect(store.release('k', 'token')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(calls).toBe(2);
  });

  // PayhookDedupObject never answers so: the binding names another class, which no retry mends.
  it('rejects an answer PayhookDedupObject never gives with INVALID_ARGUMENT, never as claimed', async () => {
    const bodies = ['{}', '{"status":"claimed"}', '{"status":"claimed","token":""}', '{"status":"yes"}', 'null', 'hi'];
    for (const body of bodies) {
      const store = createDurableObjectStore({ namespace: namespaceAnswering(() => answer(200, body)) });
      await expect(store.claim('k', { leaseMs: 1000 })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining('bind the namespace to PayhookDedupObject'),
      });
    }
    // Text for an answer short of a server error (a class routing its own paths), and an object without fetch.
    const foreign: Array<DurableObjectStubLike['fetch']> = [
      () => answer(200, 'hi'),
      () => answer(404, 'not found'),
      () => Promise.reject(new TypeError('Handler does not export a fetch() function.')),
      // What workerd rejects with when another class's fetch throws (PayhookDedupObject's never does).
      () => Promise.reject(Object.assign(new Error('No route for /claim'), { remote: true })),
    ];
    for (const fetch of foreign) {
      const store = createDurableObjectStore({ namespace: namespaceAnswering(fetch) });
      await expect(store.claim('k', { leaseMs: 1000 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(store.complete('k', 'token', { retentionMs: 1000 })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
      await expect(store.release('k', 'token')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
  });

  it('takes a remote failure of the runtime (retryable, overloaded, a reset, an internal error) for an outage', async () => {
    const failures = [
      Object.assign(new Error('Durable Object reset'), { retryable: true }),
      Object.assign(new Error('Durable Object is overloaded.'), { overloaded: true }),
      Object.assign(new Error('Internal error in Durable Object storage caused object to be reset.'), {
        durableObjectReset: true,
      }),
      new Error('internal error; reference = 0123456789abcdef'),
    ];
    for (const shape of failures) {
      const failure = Object.assign(shape, { remote: true });
      const store = createDurableObjectStore({ namespace: namespaceAnswering(() => Promise.reject(failure)) });
      await expect(store.claim('k', { leaseMs: 1000 })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    }
  });

  it('makes the Web handler answer 503 when the object cannot be reached, without running onPayment', async () => {
    let ran = 0;
    const handler = createWebhookHandler({
      publicKeys: PUBLIC_KEY,
      webhookUrl: 'https://shop.example.kg/webhooks/payments',
      store: createDurableObjectStore({
        namespace: namespaceAnswering(() => Promise.reject(new Error('Durable Object is overloaded.'))),
      }),
      onPayment: () => void ran++,
    });
    const delivery = signDelivery(webhookBody());
    const response = await handler(
      new Request('https://shop.example.kg/webhooks/payments', {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
      }),
    );
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ ok: false, code: 'STORE_UNAVAILABLE' });
    expect(ran).toBe(0);
  });

  // A merchant's subclass may wrap ctx.storage and hand on only transaction: the record is still freed.
  it('lets PayhookDedupObject release and forget with a storage that has no deleteAll', async () => {
    const kept = new Map<string, unknown>();
    const txn = {
      get: (key: string) => Promise.resolve(kept.get(key)),
      put: (key: string, value: unknown) => Promise.resolve(void kept.set(key, value)),
      delete: (key: string) => Promise.resolve(kept.delete(key)),
      setAlarm: async () => {},
      deleteAlarm: async () => {},
    };
    const object = new PayhookDedupObject({ storage: { transaction: (closure) => closure(txn) } });
    const call = (operation: string, body: unknown) =>
      object.fetch(
        new Request(`https://payhook-dedup.invalid/${operation}`, { method: 'POST', body: JSON.stringify(body) }),
      );
    const claim = (await (await call('claim', { leaseMs: 60_000 })).json()) as { status: string; token: string };
    expect(claim.status).toBe('claimed');
    expect((await call('release', { token: claim.token })).status).toBe(204);
    expect(kept.size).toBe(0);
    await expect(object.alarm()).resolves.toBeUndefined();
  });
});
