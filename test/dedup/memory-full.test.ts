// A full memory store refuses at once until the earliest expiry it knows of: one added since lowers it.
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/dedup/memory.js';

describe('memory store when full', () => {
  it('looks again once a completion added since the last full look can have expired', async () => {
    let now = 0;
    const store = createMemoryStore({ maxEntries: 2, now: () => now });
    const x = await store.claim('x', { leaseMs: 1_000 });
    if (x.status !== 'claimed') throw new Error('x');
    await store.complete('x', x.token, { retentionMs: 100_000 });
    const a = await store.claim('a', { leaseMs: 1_000 });
    if (a.status !== 'claimed') throw new Error('a');
    // Full, nothing expired: refused, and nothing expires before a's lease (1 000) as far as the store knows.
    await expect(store.claim('c', { leaseMs: 1_000 })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    // a completes with a short retention: it now expires at 10, behind x (which lives on) in completion order.
    await store.complete('a', a.token, { retentionMs: 10 });
    now = 20;
    // a has expired: there is room, as the docs promise ("until the earliest entry it saw (or one added since)").
    expect((await store.claim('c', { leaseMs: 1_000 })).status).toBe('claimed');
  });
});
