// The DedupStore contract, run against every store (memory, Redis through
// ioredis and node-redis, PostgreSQL, SQLite on each runtime, the Durable
// Object) with real time and short durations.
import { describe, expect, it } from 'vitest';
import type { DedupStore } from '../../src/dedup/store.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// A lease or retention the test checks both within and after: within must hold
// for the next call, which on a loaded machine (a SQLite store's call to a
// child runtime at load 6) has taken more than 150 ms; after is SHORT_MS plus
// a margin for the store's clock.
const SHORT_MS = 1_000;
const PAST_SHORT_MS = 1_300;
let counter = 0;
const freshKey = (label: string) => `${label}-${Date.now()}-${counter++}`;

async function claimed(store: DedupStore, key: string, leaseMs = 10_000): Promise<string> {
  const result = await store.claim(key, { leaseMs });
  if (result.status !== 'claimed') throw new Error(`expected claimed, got ${result.status}`);
  return result.token;
}

export function storeContract(name: string, getStore: () => DedupStore): void {
  describe(`DedupStore contract: ${name}`, () => {
    it('grants the first claim and refuses a second while the lease holds', async () => {
      const store = getStore();
      const key = freshKey('first');
      const first = await store.claim(key, { leaseMs: 10_000 });
      expect(first.status).toBe('claimed');
      expect(first.status === 'claimed' && typeof first.token === 'string' && first.token.length >= 16).toBe(true);
      expect(await store.claim(key, { leaseMs: 10_000 })).toEqual({ status: 'in-progress' });
    });

    it('answers completed after complete()', async () => {
      const store = getStore();
      const key = freshKey('complete');
      const token = await claimed(store, key);
      await store.complete(key, token, { retentionMs: 60_000 });
      expect(await store.claim(key, { leaseMs: 10_000 })).toEqual({ status: 'completed' });
      expect(await store.claim(key, { leaseMs: 10_000 })).toEqual({ status: 'completed' });
    });

    it('lets the next claim through after release(), with a new token', async () => {
      const store = getStore();
      const key = freshKey('release');
      const token = await claimed(store, key);
      await store.release(key, token);
      const again = await claimed(store, key);
      expect(again).not.toBe(token);
    });

    it('ignores release() and complete() with a token that is not the current claim', async () => {
      const store = getStore();
      const key = freshKey('foreign');
      const token = await claimed(store, key);
      await store.release(key, 'not-the-token');
      expect((await store.claim(key, { leaseMs: 10_000 })).status).toBe('in-progress');
      await store.complete(key, 'not-the-token', { retentionMs: 60_000 });
      expect((await store.claim(key, { leaseMs: 10_000 })).status).toBe('in-progress');
      await store.complete(key, token, { retentionMs: 60_000 });
      expect((await store.claim(key, { leaseMs: 10_000 })).status).toBe('completed');
    });

    it('does not release a completed delivery', async () => {
      const store = getStore();
      const key = freshKey('release-completed');
      const token = await claimed(store, key);
      await store.complete(key, token, { retentionMs: 60_000 });
      await store.release(key, token);
      expect((await store.claim(key, { leaseMs: 10_000 })).status).toBe('completed');
    });

    it('lets a redelivery through once the lease of a dead worker expires', async () => {
      const store = getStore();
      const key = freshKey('lease');
      await claimed(store, key, SHORT_MS);
      expect((await store.claim(key, { leaseMs: SHORT_MS })).status).toBe('in-progress');
      await sleep(PAST_SHORT_MS);
      expect((await store.claim(key, { leaseMs: 10_000 })).status).toBe('claimed');
    });

    it('keeps a late worker from touching the claim that replaced its expired one', async () => {
      const store = getStore();
      const key = freshKey('late');
      const stale = await claimed(store, key, SHORT_MS);
      await sleep(PAST_SHORT_MS);
      const current = await claimed(store, key);
      await store.release(key, stale);
      expect((await store.claim(key, { leaseMs: 10_000 })).status).toBe('in-progress');
      await store.complete(key, stale, { retentionMs: 60_000 });
      expect((await store.claim(key, { leaseMs: 10_000 })).status).toBe('in-progress');
      await store.complete(key, current, { retentionMs: 60_000 });
      expect((await store.claim(key, { leaseMs: 10_000 })).status).toBe('completed');
    });

    it('records a completion whose lease expired while nobody else claimed', async () => {
      const store = getStore();
      const key = freshKey('late-complete');
      const token = await claimed(store, key, SHORT_MS);
      await sleep(PAST_SHORT_MS);
      await store.complete(key, token, { retentionMs: 60_000 });
      expect((await store.claim(key, { leaseMs: 10_000 })).status).toBe('completed');
    });

    it('forgets a completed delivery after the retention period', async () => {
      const store = getStore();
      const key = freshKey('retention');
      const token = await claimed(store, key);
      await store.complete(key, token, { retentionMs: SHORT_MS });
      expect((await store.claim(key, { leaseMs: 10_000 })).status).toBe('completed');
      await sleep(PAST_SHORT_MS);
      expect((await store.claim(key, { leaseMs: 10_000 })).status).toBe('claimed');
    });

    it('grants exactly one of 100 concurrent claims', async () => {
      const store = getStore();
      const key = freshKey('race');
      const results = await Promise.all(Array.from({ length: 100 }, () => store.claim(key, { leaseMs: 10_000 })));
      expect(results.filter((result) => result.status === 'claimed')).toHaveLength(1);
      expect(results.filter((result) => result.status === 'in-progress')).toHaveLength(99);
    });

    it('keeps keys apart, whatever characters they hold', async () => {
      const store = getStore();
      const base = freshKey('keys');
      const keys = [`${base}:a`, `${base}:a `, `${base} é ✓ "q" \\ {x}`, `${base}:A`];
      const tokens = await Promise.all(keys.map((key) => claimed(store, key)));
      expect(new Set(tokens).size).toBe(keys.length);
      await store.complete(keys[0]!, tokens[0]!, { retentionMs: 60_000 });
      expect((await store.claim(keys[0]!, { leaseMs: 10_000 })).status).toBe('completed');
      expect((await store.claim(keys[1]!, { leaseMs: 10_000 })).status).toBe('in-progress');
    });

    it('rejects misuse with INVALID_ARGUMENT', async () => {
      const store = getStore();
      const key = freshKey('misuse');
      for (const leaseMs of [0, -1, Number.NaN, Infinity]) {
        await expect(store.claim(key, { leaseMs })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      }
      await expect(store.claim('', { leaseMs: 1000 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(store.complete(key, '', { retentionMs: 1000 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(store.complete(key, 'token', { retentionMs: 0 })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
      await expect(store.release(key, '')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      // Nothing was claimed by the refused calls.
      expect((await store.claim(key, { leaseMs: 1000 })).status).toBe('claimed');
    });
  });
}
