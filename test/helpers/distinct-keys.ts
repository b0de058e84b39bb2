// Distinct keys must stay distinct in a store, whatever UTF-16 they hold: a
// store that writes keys as UTF-8 (SQLite text, a Durable Object name) turns
// every lone surrogate into U+FFFD, and two deliveries would share one record
// (the second answered "duplicate", its payment never handled).
import fc from 'fast-check';
import { expect } from 'vitest';
import type { DedupStore } from '../../src/dedup/store.js';

let run = 0;

/** Pairs of different keys, from arbitrary UTF-16 (lone surrogates and NUL included). */
const pairs = fc
  .tuple(fc.string({ unit: 'binary', maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 8 }))
  .filter(([a, b]) => a !== b);

/** Hand-picked pairs that collide under a lossy encoding. */
export const COLLIDING_PAIRS: ReadonlyArray<readonly [string, string]> = [
  ['id\uD800', 'id\uDC00'],
  ['id\uD800', 'id\uFFFD'],
  ['\uDBFF\uDBFF', '\uDFFF'],
  ['x\u0000y', 'x'],
  ['x\u0000', 'x\u0000\u0000'],
  ['"a"', 'a'],
];

/** Claims both keys of each pair (made fresh per run): each must be `claimed`. */
export async function expectDistinctKeys(store: DedupStore, numRuns: number): Promise<void> {
  const check = async (a: string, b: string) => {
    const base = `distinct-${Date.now()}-${run++}:`;
    expect((await store.claim(base + a, { leaseMs: 60_000 })).status).toBe('claimed');
    expect((await store.claim(base + b, { leaseMs: 60_000 })).status, JSON.stringify([a, b])).toBe('claimed');
  };
  for (const [a, b] of COLLIDING_PAIRS) await check(a, b);
  await fc.assert(
    fc.asyncProperty(pairs, ([a, b]) => check(a, b)),
    { numRuns },
  );
}
