import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allot, utf8 } from '../../src/lib/bytes.js';

// The verify path cuts its short-lived byte arrays from shared blocks
// (src/lib/bytes.ts). What must hold: the bytes are right, and a region once
// handed out is never handed out again, so nothing a caller (or a Web Crypto
// job) still holds is ever overwritten.

describe('utf8', () => {
  it('gives the bytes TextEncoder gives, for any string (lone surrogates too)', () => {
    const encoder = new TextEncoder();
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 100 })),
        (text) => {
          expect(utf8(text)).toEqual(encoder.encode(text));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('handles a string longer than a block', () => {
    const text = 'é'.repeat(70_000);
    expect(utf8(text)).toEqual(new TextEncoder().encode(text));
  });
});

describe('regions of allot and utf8', () => {
  it('are never handed out twice: every earlier region keeps its content through many blocks', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.nat({ max: 3000 }), fc.string({ unit: 'binary', maxLength: 2000 })), {
          minLength: 1,
          maxLength: 200,
        }),
        (requests) => {
          const kept: Array<[Uint8Array, number[]]> = [];
          for (const [i, request] of requests.entries()) {
            let region: Uint8Array;
            if (typeof request === 'number') {
              region = allot(request);
              expect(region.length).toBe(request);
              region.fill(i & 255);
            } else {
              region = utf8(request);
            }
            kept.push([region, Array.from(region)]);
          }
          for (const [region, content] of kept) expect(Array.from(region)).toEqual(content);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('do not overlap', () => {
    const regions = Array.from({ length: 400 }, (_, i) => (i % 2 === 0 ? allot(300 + i) : utf8('x'.repeat(i))));
    const byBlock = new Map<ArrayBufferLike, Array<[start: number, end: number]>>();
    for (const region of regions) {
      const spans = byBlock.get(region.buffer) ?? [];
      spans.push([region.byteOffset, region.byteOffset + region.byteLength]);
      byBlock.set(region.buffer, spans);
    }
    expect(byBlock.size).toBeGreaterThan(1); // the regions span several blocks
    for (const spans of byBlock.values()) {
      spans.sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
    }
  });
});
