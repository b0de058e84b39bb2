import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/dedup/memory.js';

// The memory store against its specification, written as plainly as it can
// be: per key, the entry that is live at `now` (expiring strictly after it).
// A claim is refused only when `maxEntries` entries are live; expired
// entries never take room. The clock only moves forward here: an entry the
// store dropped as expired stays dropped if the clock were stepped back.

type Entry = { kind: 'claim'; token: string; expiresAt: number } | { kind: 'done'; expiresAt: number };

const KEYS = ['a', 'b', 'c', 'd', 'e', 'f'];
const key = fc.constantFrom(...KEYS);
const ms = fc.oneof(fc.integer({ min: 1, max: 30 }), fc.constantFrom(100, 1000));
const operation = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('claim' as const), key, ms }) },
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant('complete' as const), key, ms, ownToken: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('release' as const), key, ownToken: fc.boolean() }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 40 }) }) },
);

describe('memory store (property)', () => {
  it('answers as the live-entries specification does, full or not, for any sequence on a forward clock', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }),
        fc.array(operation, { minLength: 1, maxLength: 120 }),
        async (maxEntries, operations) => {
          let now = 1_000;
          const store = createMemoryStore({ maxEntries, now: () => now });
          const model = new Map<string, Entry>();
          const tokens = new Map<string, string>(); // the last token each key was claimed with
          const live = (k: string): Entry | undefined => {
            const entry = model.get(k);
            return entry !== undefined && entry.expiresAt > now ? entry : undefined;
          };
          const liveCount = (): number => KEYS.filter((k) => live(k) !== undefined).length;
          for (const step of operations) {
            if (step.op === 'wait') {
              now += step.ms;
              continue;
            }
            if (step.op === 'claim') {
              const entry = live(step.key);
              const expected =
                entry?.kind === 'done'
                  ? 'completed'
                  : entry?.kind === 'claim'
                    ? 'in-progress'
                    : liveCount() >= maxEntries
                      ? 'STORE_UNAVAILABLE'
                      : 'claimed';
              const got = await store.claim(step.key, { leaseMs: step.ms }).then(
                (result) => result,
                (error: { code: string }) => ({ status: error.code, token: undefined }),
              );
              expect(got.status).toBe(expected);
              if (got.status === 'claimed' && 'token' in got && got.token !== undefined) {
                tokens.set(step.key, got.token);
                model.set(step.key, { kind: 'claim', token: got.token, expiresAt: now + step.ms });
              }
              continue;
            }
            const token = step.ownToken ? (tokens.get(step.key) ?? 'never-issued') : 'never-issued';
            const entry = live(step.key);
            if (step.op === 'complete') {
              await store.complete(step.key, token, { retentionMs: step.ms });
              // Its own live claim, or no live entry at all (an expired claim nobody re-took): recorded.
              const records = entry === undefined || (entry.kind === 'claim' && entry.token === token);
              if (records) model.set(step.key, { kind: 'done', expiresAt: now + step.ms });
            } else {
              await store.release(step.key, token);
              if (entry?.kind === 'claim' && entry.token === token) model.delete(step.key);
            }
          }
        },
      ),
      { numRuns: 10_000 },
    );
  });
});
