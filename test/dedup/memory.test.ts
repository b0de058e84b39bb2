import { describe, expect, it, vi } from 'vitest';
import { createMemoryStore } from '../../src/dedup/memory.js';
import { storeContract } from './contract.js';

storeContract('memory', () => createMemoryStore());

describe('createMemoryStore', () => {
  function clockStore(maxEntries?: number) {
    let now = 1_000_000;
    const store = createMemoryStore({ now: () => now, ...(maxEntries === undefined ? {} : { maxEntries }) });
    return {
      store,
      advance: (ms: number) => {
        now += ms;
      },
    };
  }

  it('expires claims and completions by its clock, boundary excluded', async () => {
    const { store, advance } = clockStore();
    const claim = await store.claim('k', { leaseMs: 1000 });
    advance(999);
    expect((await store.claim('k', { leaseMs: 1000 })).status).toBe('in-progress');
    advance(1);
    const again = await store.claim('k', { leaseMs: 1000 });
    expect(again.status).toBe('claimed');
    if (again.status !== 'claimed' || claim.status !== 'claimed') throw new Error('unreachable');
    await store.complete('k', again.token, { retentionMs: 5000 });
    advance(4999);
    expect((await store.claim('k', { leaseMs: 1000 })).status).toBe('completed');
    advance(1);
    expect((await store.claim('k', { leaseMs: 1000 })).status).toBe('claimed');
  });

  it('never drops a live claim to make room: when full of claims, claim() rejects STORE_UNAVAILABLE', async () => {
    const { store, advance } = clockStore(3);
    await store.claim('short', { leaseMs: 10 });
    await store.claim('a', { leaseMs: 60_000 });
    await store.claim('b', { leaseMs: 60_000 });
    advance(20);
    // 'short' expired: it makes room.
    expect((await store.claim('c', { leaseMs: 60_000 })).status).toBe('claimed');
    expect(store.size).toBe(3);
    await expect(store.claim('d', { leaseMs: 60_000 })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(store.size).toBe(3);
    for (const key of ['a', 'b', 'c']) expect((await store.claim(key, { leaseMs: 60_000 })).status).toBe('in-progress');
  });

  it('when full, makes room from expired entries that stand behind live ones (several leases or retentions)', async () => {
    const { store, advance } = clockStore(2);
    await store.claim('long', { leaseMs: 1000 });
    await store.claim('short', { leaseMs: 10 });
    advance(20);
    // 'short' expired behind the live 'long': it makes room.
    expect((await store.claim('c', { leaseMs: 1000 })).status).toBe('claimed');
    expect((await store.claim('long', { leaseMs: 1000 })).status).toBe('in-progress');

    const done = clockStore(2);
    for (const [key, retentionMs] of [
      ['kept', 1e9],
      ['brief', 10],
    ] as const) {
      const claim = await done.store.claim(key, { leaseMs: 1000 });
      if (claim.status !== 'claimed') throw new Error('unreachable');
      await done.store.complete(key, claim.token, { retentionMs });
    }
    done.advance(20);
    expect((await done.store.claim('c', { leaseMs: 1000 })).status).toBe('claimed');
    expect((await done.store.claim('kept', { leaseMs: 1000 })).status).toBe('completed');
  });

  /** How many map entries `work` makes the store look at. */
  async function entriesLookedAt(work: () => Promise<void>): Promise<number> {
    const iterate = Map.prototype[Symbol.iterator];
    let looks = 0;
    Map.prototype[Symbol.iterator] = function (this: Map<unknown, unknown>) {
      const entries = iterate.call(this);
      const next = entries.next.bind(entries);
      return Object.assign(entries, {
        next: () => {
          looks++;
          return next();
        },
      });
    };
    try {
      await work();
    } finally {
      Map.prototype[Symbol.iterator] = iterate;
    }
    return looks;
  }

  // Each such claim once looked at every entry: 6 ms a delivery at 100,000 entries, blocking the event loop.
  it('at capacity, makes room for each new delivery from the oldest end, without looking at every entry', async () => {
    const { store, advance } = clockStore(1000);
    for (let i = 0; i < 1000; i++) {
      advance(1);
      const claim = await store.claim(`old-${i}`, { leaseMs: 60_000 });
      if (claim.status !== 'claimed') throw new Error('unreachable');
      await store.complete(`old-${i}`, claim.token, { retentionMs: 600_000 });
    }
    advance(600_000 - 1000);
    const looks = await entriesLookedAt(async () => {
      // One entry expires for each new delivery.
      for (let i = 0; i < 100; i++) {
        advance(1);
        expect((await store.claim(`new-${i}`, { leaseMs: 60_000 })).status).toBe('claimed');
      }
    });
    expect(store.size).toBe(1000);
    expect(looks).toBeLessThan(100 * 10);
  });

  it('when full, looks at every entry once, not on every refused claim, and still makes room when one expires', async () => {
    const { store, advance } = clockStore(1000);
    const tokens: string[] = [];
    for (let i = 0; i < 1000; i++) {
      const claim = await store.claim(`held-${i}`, { leaseMs: 60_000 + i });
      if (claim.status !== 'claimed') throw new Error('unreachable');
      tokens.push(claim.token);
    }
    const looks = await entriesLookedAt(async () => {
      for (let i = 0; i < 50; i++) {
        advance(100);
        await expect(store.claim(`new-${i}`, { leaseMs: 1000 })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      }
    });
    // Every entry once, then only the oldest of each map (nothing can expire before the earliest lease).
    expect(looks).toBeGreaterThanOrEqual(1000);
    expect(looks).toBeLessThan(1000 + 50 * 4);
    // A completion while full adds an entry that expires sooner than every lease: once it has, there is room.
    await store.complete('held-0', tokens[0]!, { retentionMs: 1000 });
    await expect(store.claim('early', { leaseMs: 1000 })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    advance(1000);
    expect((await store.claim('early', { leaseMs: 1000 })).status).toBe('claimed');
    await expect(store.claim('later', { leaseMs: 1000 })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    // The earliest lease left (held-1's) ends 60,001 ms after the start: then a full store makes room again.
    advance(60_001 - 50 * 100 - 1000);
    expect((await store.claim('late', { leaseMs: 1000 })).status).toBe('claimed');
  });

  it('never drops a completed delivery before its retention: a replay after maxEntries others is a duplicate', async () => {
    const { store, advance } = clockStore(100);
    const first = await store.claim('first', { leaseMs: 1000 });
    if (first.status !== 'claimed') throw new Error('unreachable');
    await store.complete('first', first.token, { retentionMs: 60_000 });
    const outcomes = new Set<string>();
    for (let i = 0; i < 150; i++) {
      advance(1);
      const claim = await store.claim(`other-${i}`, { leaseMs: 1000 }).catch((error: { code: string }) => error);
      if ('code' in claim) {
        outcomes.add(claim.code);
        continue;
      }
      outcomes.add(claim.status);
      if (claim.status === 'claimed') await store.complete(`other-${i}`, claim.token, { retentionMs: 60_000 });
    }
    expect(outcomes).toEqual(new Set(['claimed', 'STORE_UNAVAILABLE']));
    expect(store.size).toBe(100);
    expect((await store.claim('first', { leaseMs: 1000 })).status).toBe('completed');
    // Past its retention the oldest completed delivery goes first and makes room.
    advance(60_000);
    expect((await store.claim('new', { leaseMs: 1000 })).status).toBe('claimed');
    expect((await store.claim('first', { leaseMs: 1000 })).status).toBe('claimed');
  });

  it('stays bounded under many distinct deliveries, expired entries making room', async () => {
    const { store, advance } = clockStore(100);
    for (let i = 0; i < 5000; i++) {
      const claim = await store.claim(`key-${i}`, { leaseMs: 10 });
      if (claim.status === 'claimed') await store.complete(`key-${i}`, claim.token, { retentionMs: 50 });
      advance(1);
    }
    expect(store.size).toBeLessThanOrEqual(100);
    expect((await store.claim('key-4999', { leaseMs: 10 })).status).toBe('completed');
  });

  it('reads the time at each call, so fake timers installed after it was made still count', async () => {
    const store = createMemoryStore();
    vi.useFakeTimers();
    try {
      expect((await store.claim('k', { leaseMs: 60_000 })).status).toBe('claimed');
      vi.advanceTimersByTime(60_001);
      expect((await store.claim('k', { leaseMs: 60_000 })).status).toBe('claimed');
    } finally {
      vi.useRealTimers();
    }
  });

  it('leaves no timer running (lazy expiry)', async () => {
    const store = createMemoryStore();
    const before = process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
    const claim = await store.claim('timer', { leaseMs: 60_000 });
    if (claim.status === 'claimed') await store.complete('timer', claim.token, { retentionMs: 3_600_000 });
    const after = process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
    expect(after).toBe(before);
  });

  it('clear() forgets everything', async () => {
    const store = createMemoryStore();
    await store.claim('x', { leaseMs: 1000 });
    store.clear();
    expect(store.size).toBe(0);
    expect((await store.claim('x', { leaseMs: 1000 })).status).toBe('claimed');
  });

  it('refuses bad options', () => {
    for (const maxEntries of [0, -1, 1.5, Number.NaN]) {
      expect(() => createMemoryStore({ maxEntries })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    }
    expect(() => createMemoryStore({ now: 5 as unknown as () => number })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });

  // Read as a time, NaN or a Date made every record look expired: each redelivery handled again.
  it('refuses, at each call, a clock that answers anything but finite milliseconds', async () => {
    for (const [answer, named] of [
      [Number.NaN, 'NaN'],
      [Infinity, 'Infinity'],
      [new Date(), 'a Date'],
      ['1700000000000', 'a string'],
    ] as const) {
      const store = createMemoryStore({ now: () => answer as number });
      for (const call of [
        () => store.claim('k', { leaseMs: 1000 }),
        () => store.complete('k', 'token', { retentionMs: 1000 }),
      ]) {
        await expect(call()).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
          message: `now must return finite milliseconds (a number), not ${named}.`,
        });
      }
      expect(store.size).toBe(0);
    }
  });
});
