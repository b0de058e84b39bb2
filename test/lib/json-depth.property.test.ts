import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_BODY_DEPTH, textTooDeep, valueTooDeep } from '../../src/lib/json-depth.js';

/** The reference: how deeply arrays and objects nest in a JSON value, by plain recursion. */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

// Strings full of brackets, quotes and backslashes, so that the scan must skip them correctly.
const tricky = fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a', 'é', '\u2028') });
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(tricky, fc.integer(), fc.boolean(), fc.constant(null)),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(tricky, tie('value'), { maxKeys: 3 }),
  ),
})).value;
const deepChain = fc
  .tuple(fc.integer({ min: 0, max: 200 }), fc.array(fc.boolean(), { minLength: 200, maxLength: 200 }))
  .map(([levels, kinds]) => {
    let value: unknown = 'leaf';
    for (let i = 0; i < levels; i++) value = kinds[i] ? [value] : { [`k${i}"]`]: value };
    return value;
  });

describe('the nesting bound', () => {
  it('is 64 levels', () => expect(MAX_BODY_DEPTH).toBe(64));

  it('property: the text scan agrees with the depth of the value it writes, at every limit', () => {
    fc.assert(
      fc.property(fc.oneof(json, deepChain), fc.integer({ min: 0, max: 120 }), (value, limit) => {
        const text = JSON.stringify(value);
        expect(textTooDeep(text, limit)).toBe(depthOf(value) > limit);
        expect(textTooDeep(JSON.stringify(value, null, 2), limit)).toBe(depthOf(value) > limit);
      }),
      { numRuns: 2_000 },
    );
  });

  it('property: the walk of a parsed value agrees with the same depth', () => {
    fc.assert(
      fc.property(fc.oneof(json, deepChain), fc.integer({ min: 0, max: 120 }), (value, limit) => {
        expect(valueTooDeep(value, limit)).toBe(depthOf(value) > limit);
      }),
      { numRuns: 2_000 },
    );
  });

  it('counts a cycle as too deep, and walks a value shared by many parents without blowing up', () => {
    const cycle: Record<string, unknown> = {};
    cycle['self'] = [cycle];
    expect(valueTooDeep(cycle)).toBe(true);
    // 60 levels of two references to the same child: 2^60 paths, 60 objects.
    let shared: unknown = 0;
    for (let i = 0; i < 60; i++) shared = { a: shared, b: shared };
    expect(valueTooDeep(shared)).toBe(false);
    expect(valueTooDeep({ wrap: [[[[[shared]]]]] })).toBe(true);
  });
});
