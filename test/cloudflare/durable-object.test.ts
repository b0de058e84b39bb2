// The Durable Object store in workerd (Miniflare): the shared store contract
// on both storage back-ends, with the store running in one Worker and the
// object hosted by another; several Worker instances racing the same
// deliveries through createWebhookHandler; records deleted by their alarm.
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DedupStore } from '../../src/dedup/store.js';
import { signDelivery, webhookBody, type SignedDelivery } from '../helpers/sign.js';
import { storeContract } from '../dedup/contract.js';
import { startWorkers, storeThrough, WEBHOOK_URL, type Backend } from './workerd.js';

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

    it('deletes an expired claim by its alarm, and keeps a forever-completed record without one', async () => {
      const worker = await mf!.getWorker('a');
      const peek = async (key: string) =>
        (await (await worker.fetch(`http://worker/peek?key=${encodeURIComponent(key)}`)).json()) as {
          record: { state: string } | null;
          alarm: number | null;
        };
      const abandoned = `alarm-${Date.now()}`;
      const claim = await store.claim(abandoned, { leaseMs: 200 });
      expect(claim.status).toBe('claimed');
      const held = await peek(abandoned);
      expect(held.record?.state).toBe('claimed');
      expect(held.alarm).toBeGreaterThan(Date.now() - 1000);
      await sleep(1200);
      expect(await peek(abandoned)).toEqual({ record: null, alarm: null });

      const kept = `forever-${Date.now()}`;
      const token = await store.claim(kept, { leaseMs: 200 });
      if (token.status !== 'claimed') throw new Error(token.status);
      await store.complete(kept, token.token, { retentionMs: Infinity });
      await sleep(600);
      expect(await peek(kept)).toEqual({ record: { state: 'completed', expiresAt: null }, alarm: null });
      expect(await store.claim(kept, { leaseMs: 1000 })).toEqual({ status: 'completed' });
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

  async function deliver(worker: string, delivery: SignedDelivery): Promise<{ status: number; body: unknown }> {
    const target = await mf!.getWorker(worker);
    const response = await target.fetch(WEBHOOK_URL, {
      method: delivery.method,
      headers: delivery.headers,
      body: delivery.body,
    });
    return { status: response.status, body: await response.json() };
  }

  async function handled(): Promise<string[]> {
    const lists = await Promise.all(
      instances.map(async (name) => (await (await mf!.getWorker(name)).fetch('http://worker/handled')).json()),
    );
    return (lists as string[][]).flat();
  }

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
    expect(statuses.filter((status) => status !== 200 && status !== 409), JSON.stringify(answers)).toEqual([]);
    expect(statuses.filter((status) => status === 409).length).toBeGreaterThan(0);

    // Once all settled, every instance answers every copy as a duplicate.
    for (const delivery of deliveries) {
      for (const name of instances) {
        expect(await deliver(name, delivery)).toEqual({ status: 200, body: { ok: true, duplicate: true } });
      }
    }
    const seen = await handled();
    expect(seen.toSorted()).toEqual(deliveries.map((delivery) => delivery.id).toSorted());
  });
});
