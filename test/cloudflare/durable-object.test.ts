// The Durable Object store in workerd (Miniflare): the shared store contract
// on both storage back-ends, with the store running in one Worker and the
// object hosted by another; several Worker instances racing the same
// deliveries through createWebhookHandler; records deleted by their alarm.
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DedupStore } from '../../src/dedup/store.js';
import { signDelivery, webhookBody, type SignedDelivery } from '../helpers/sign.js';
import { storeContract } from '../dedup/contract.js';
import { expectDistinctKeys } from '../helpers/distinct-keys.js';
import { objectStub, startWorkers, storeThrough, WEBHOOK_URL, worker, type Backend } from './workerd.js';
import { warmBinaryStrings } from '../helpers/fast-check.js';

beforeAll(warmBinaryStrings);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const backend of ['sqlite', 'kv'] as const satisfies readonly Backend[]) {
  describe(`Durable Object store (${backend} storage)`, () => {
    let mf: Miniflare | undefined;
    let store: DedupStore;
    beforeAll(async () => {
      mf = await startWorkers(backend, ['a']);
      store = storeThrough(mf, 'a');
    });
    afterAll(async () => {
      await mf?.dispose();
    });

    storeContract(`Durable Object (${backend})`, () => store);

    it('keeps any two different keys apart, lone surrogates and NUL included (property)', async () => {
      await expectDistinctKeys(store, 40);
    });

    it('keeps the deliveries of two prefixes apart', async () => {
      const key = `prefix-${Date.now()}`;
      const other = storeThrough(mf!, 'a', 'other-app:');
      expect((await store.claim(key, { leaseMs: 10_000 })).status).toBe('claimed');
      expect((await other.claim(key, { leaseMs: 10_000 })).status).toBe('claimed');
      expect((await other.claim(key, { leaseMs: 10_000 })).status).toBe('in-progress');
    });

    it('refuses malformed operations sent to the object directly, and stores nothing for them', async () => {
      const stub = await objectStub(mf!, `payhook:direct-${Date.now()}`);
      const send = async (path: string, body: string) => {
        const response = await stub.fetch(`https://payhook-dedup.invalid/${path}`, { method: 'POST', body });
        return { status: response.status, body: await response.json() };
      };
      for (const body of ['{"leaseMs":-1}', '{"leaseMs":"60000"}', '{}', 'null', 'not json']) {
        expect(await send('claim', body)).toMatchObject({ status: 400, body: { code: 'INVALID_ARGUMENT' } });
      }
      expect(await send('complete', '{"token":"","retentionMs":1000}')).toMatchObject({ status: 400 });
      expect(await send('complete', '{"token":"t","retentionMs":0}')).toMatchObject({ status: 400 });
      expect(await send('release', '{}')).toMatchObject({ status: 400 });
      expect(await send('forget', '{}')).toMatchObject({ status: 404 });
      expect(await send('claim', '{"leaseMs":10000}')).toMatchObject({ status: 200, body: { status: 'claimed' } });
    });

    // An object that ever wrote keeps its storage (and is billed for it) until deleteAll, with no key left too.
    it('deletes an expired claim by its alarm, and keeps a forever-completed record without one', async () => {
      const a = await worker(mf!, 'a');
      const peek = async (key: string) =>
        (await (await a.fetch(`http://worker/peek?key=${encodeURIComponent(key)}`)).json()) as {
          record: { state: string } | null;
          alarm: number | null;
          emptied: number;
        };
      // A lease long enough to be seen held on a loaded machine (200 ms once lapsed before the first look).
      const abandoned = `alarm-${Date.now()}`;
      const claim = await store.claim(abandoned, { leaseMs: 1_500 });
      expect(claim.status).toBe('claimed');
      const held = await peek(abandoned);
      expect(held.record?.state).toBe('claimed');
      expect(held.alarm).toBeGreaterThan(Date.now() - 1000);
      await sleep(2_700);
      expect(await peek(abandoned)).toEqual({ record: null, alarm: null, emptied: 1 });

      const released = `released-${Date.now()}`;
      const mine = await store.claim(released, { leaseMs: 60_000 });
      if (mine.status !== 'claimed') throw new Error(mine.status);
      await store.release(released, 'not-this-claim');
      expect(await peek(released)).toMatchObject({ record: { state: 'claimed' }, emptied: 0 });
      await store.release(released, mine.token);
      expect(await peek(released)).toEqual({ record: null, alarm: null, emptied: 1 });

      const kept = `forever-${Date.now()}`;
      const token = await store.claim(kept, { leaseMs: 1_500 });
      if (token.status !== 'claimed') throw new Error(token.status);
      await store.complete(kept, token.token, { retentionMs: Infinity });
      await sleep(1_900);
      expect(await peek(kept)).toEqual({ record: { state: 'completed', expiresAt: null }, alarm: null, emptied: 0 });
      expect(await store.claim(kept, { leaseMs: 1000 })).toEqual({ status: 'completed' });
    });

    // workerd's alarms hold int64 nanoseconds: nothing after 2262-04-11 (its message says "after 2189"). A longer
    // lease or retention is one the store accepts, so its record is kept without an alarm instead of failing.
    it('keeps a record whose expiry no alarm can hold, and arms one for the latest expiry that can', async () => {
      const a = await worker(mf!, 'a');
      const alarmOf = async (key: string) =>
        (
          (await (await a.fetch(`http://worker/peek?key=${encodeURIComponent(key)}`)).json()) as {
            alarm: number | null;
          }
        ).alarm;
      const millennium = 1000 * 365 * 86_400_000;
      const done = `far-retention-${Date.now()}`;
      const claim = await store.claim(done, { leaseMs: 60_000 });
      if (claim.status !== 'claimed') throw new Error(claim.status);
      await expect(store.complete(done, claim.token, { retentionMs: millennium })).resolves.toBeUndefined();
      expect(await store.claim(done, { leaseMs: 60_000 })).toEqual({ status: 'completed' });
      expect(await alarmOf(done)).toBeNull();

      const held = `far-lease-${Date.now()}`;
      expect(await store.claim(held, { leaseMs: millennium })).toEqual({
        status: 'claimed',
        token: expect.any(String),
      });
      expect(await alarmOf(held)).toBeNull();

      const lastAlarm = 9_223_372_036_854;
      const latest = `latest-alarm-${Date.now()}`;
      expect((await store.claim(latest, { leaseMs: lastAlarm - Date.now() - 60_000 })).status).toBe('claimed');
      expect(await alarmOf(latest)).toBeGreaterThan(lastAlarm - 120_000);
    });
  });
}

describe('several Worker instances sharing the Durable Object', () => {
  const instances = ['a', 'b', 'c'];
  let mf: Miniflare | undefined;
  beforeAll(async () => {
    mf = await startWorkers('sqlite', instances);
  });
  afterAll(async () => {
    await mf?.dispose();
  });

  async function deliver(name: string, delivery: SignedDelivery): Promise<{ status: number; body: unknown }> {
    const target = await worker(mf!, name);
    const response = await target.fetch(WEBHOOK_URL, {
      method: delivery.method,
      headers: delivery.headers,
      body: delivery.body,
    });
    return { status: response.status, body: await response.json() };
  }

  async function handled(): Promise<string[]> {
    const lists = await Promise.all(
      instances.map(async (name) => (await (await worker(mf!, name)).fetch('http://worker/handled')).json()),
    );
    return (lists as string[][]).flat();
  }

  it("lets an async onError finish after the answer (handed to the Worker's waitUntil)", async () => {
    const delivery = signDelivery(webhookBody());
    const forged = { ...delivery, body: delivery.body.replace('SUCCEEDED', 'FAILED') };
    expect((await deliver('a', forged)).status).toBe(401);
    const a = await worker(mf!, 'a');
    let reported: string[] = [];
    for (let wait = 0; !reported.includes('SIGNATURE_MISMATCH') && wait < 25; wait++) {
      await sleep(20);
      reported = (await (await a.fetch('http://worker/reported')).json()) as string[];
    }
    expect(reported).toContain('SIGNATURE_MISMATCH');
  });

  it('runs onPayment exactly once per delivery when every instance gets many copies at once', async () => {
    const deliveries = Array.from({ length: 5 }, () => signDelivery(webhookBody()));
    const copies = 30;
    const answers = await Promise.all(
      deliveries.flatMap((delivery) =>
        Array.from({ length: copies }, (_, i) => deliver(instances[i % instances.length]!, delivery)),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    // 200: handled here or already handled; 409: another instance holds it right now.
    expect(
      statuses.filter((status) => status !== 200 && status !== 409),
      JSON.stringify(answers),
    ).toEqual([]);
    expect(statuses.filter((status) => status === 409).length).toBeGreaterThan(0);

    // Once the copies still holding a claim complete it,
    // every instance answers every copy as a duplicate.
    for (const delivery of deliveries) {
      for (const name of instances) {
        let answer = await deliver(name, delivery);
        for (let wait = 0; answer.status === 409 && wait < 50; wait++) {
          await sleep(20);
          answer = await deliver(name, delivery);
        }
        expect(answer).toEqual({ status: 200, body: { ok: true, duplicate: true } });
      }
    }
    const seen = await handled();
    expect([...seen].sort()).toEqual(deliveries.map((delivery) => delivery.id).sort());
  });
});

for (const className of [
  'ForeignObject',
  'RouterObject',
  'JsonRouterObject',
  'ThrowingRouterObject',
  'RpcOnlyObject',
]) {
  describe(`a binding to another object class (${className})`, () => {
    let mf: Miniflare | undefined;
    beforeAll(async () => {
      mf = await startWorkers('sqlite', ['a'], className);
    });
    afterAll(async () => {
      await mf?.dispose();
    });

    it('is answered 500 INVALID_ARGUMENT (misconfigured, no retry mends it), not 503, and onPayment never runs', async () => {
      const delivery = signDelivery(webhookBody());
      const a = await worker(mf!, 'a');
      const response = await a.fetch(WEBHOOK_URL, { method: 'POST', headers: delivery.headers, body: delivery.body });
      expect(response.status).toBe(500);
      expect(await response.json()).toMatchObject({ ok: false, code: 'INVALID_ARGUMENT' });
      expect(await (await a.fetch('http://worker/handled')).json()).toEqual([]);
    });
  });
}
