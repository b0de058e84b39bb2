import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { bodySize } from '../src/lib/json-body.js';
import { warmBinaryStrings } from './helpers/fast-check.js';

beforeAll(warmBinaryStrings);

// bodySize decides BODY_TOO_LARGE for a text body before anything else reads
// it. Oracle: the UTF-8 length TextEncoder gives (a lone surrogate is written
// as U+FFFD, 3 bytes).
const utf8Length = (text: string): number => new TextEncoder().encode(text).length;

// Text of every width: ASCII, 2- and 3-byte characters, surrogate pairs and
// lone surrogates (the 'binary' unit produces all of them).
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀', '\ud800', '\udc00'), maxLength: 60 }),
);

describe('bodySize', () => {
  it('is over the limit exactly when the UTF-8 bytes are, and exact where it has to count', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 250 }), (body, limit) => {
        const bytes = utf8Length(body);
        const size = bodySize(body, limit);
        expect(size > limit).toBe(bytes > limit);
        // Never more than the bytes: a short text (3 bytes a unit at most
        // still within the limit) or a long one (more units than the limit)
        // is answered by its length, anything between is counted exactly.
        expect(size).toBeLessThanOrEqual(bytes);
        if (body.length * 3 > limit && body.length <= limit) expect(size).toBe(bytes);
      }),
      { numRuns: 5000 },
    );
  });

  it('takes the length of bytes and does not measure a parsed body', () => {
    expect(bodySize(new Uint8Array(7), 5)).toBe(7);
    expect(bodySize(new ArrayBuffer(3), 5)).toBe(3);
    expect(bodySize({ amount: 1 }, 1)).toBe(0);
  });

  it('answers a text much longer than the limit without counting it', () => {
    // 4 million units against a 1 MiB limit: over it by length alone.
    const huge = 'é'.repeat(4_000_000);
    expect(bodySize(huge, 1_048_576)).toBeGreaterThan(1_048_576);
  });
});
