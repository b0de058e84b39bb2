// The chaos run's deep-body scenario judges payhook on its SHAPES: these pin
// that each is what its label says (JSON, nested far past the contract's 64
// levels, within the default maxBodyBytes), so a green row cannot come from
// bodies that were never deep.
import { DEFAULT_MAX_BODY_BYTES } from '../../src/verify-webhook.js';
import { describe, expect, it } from 'vitest';
import {
  manyMembers,
  nestedArrays,
  nestedObjects,
  SHAPES,
  WIDE_SHAPES,
} from '../../scripts/chaos/scenarios/deep-body.mjs';
import { MAX_BODY_MEMBERS, MAX_BODY_NAMES_LENGTH } from '../../src/lib/json-body.js';

/** The deepest nesting of arrays and objects in JSON text (strings skipped). */
function depthOf(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '[' || char === '{') deepest = Math.max(deepest, ++depth);
    else if (char === ']' || char === '}') depth--;
  }
  return deepest;
}

describe('chaos deep-body shapes', () => {
  it('are JSON, nested thousands of levels deep, and within the default maxBodyBytes', () => {
    expect(SHAPES.length).toBe(4);
    for (const [label, body] of SHAPES as Array<[string, Buffer]>) {
      const text = body.toString('utf8');
      expect(() => JSON.parse(text), label).not.toThrow();
      expect(body.length, label).toBeLessThanOrEqual(DEFAULT_MAX_BODY_BYTES);
      expect(depthOf(text), label).toBeGreaterThan(2_000);
    }
  });

  it('builds the sizes and depths it is asked for', () => {
    const eight = nestedArrays(8, 4_000, 65_536);
    expect(eight.length).toBe(65_536);
    expect(depthOf(eight.toString('utf8'))).toBe(4_001);
    expect(nestedArrays(1, 4_090).length).toBeLessThan(8_192);
    expect(depthOf(nestedArrays(1, 4_090).toString('utf8'))).toBe(4_091);
    const objects = nestedObjects(1_000).toString('utf8');
    expect(objects.length).toBeLessThanOrEqual(1_000);
    expect(depthOf(objects)).toBe(Math.floor(998 / 6) + 1);
    expect(() => nestedArrays(8, 4_000, 32_768)).toThrow(/do not fit/);
  });

  it('has wide bodies: thousands of members at the top level (over the bound), and under one key', () => {
    const [[, top], [, nested]] = WIDE_SHAPES as Array<[string, Buffer, boolean]> as [
      [string, Buffer, boolean],
      [string, Buffer, boolean],
    ];
    const topValue = JSON.parse(top.toString('utf8')) as Record<string, unknown>;
    expect(Object.keys(topValue).length).toBeGreaterThan(4 * MAX_BODY_MEMBERS);
    const nestedValue = JSON.parse(nested.toString('utf8')) as { a: Record<string, unknown> };
    expect(Object.keys(nestedValue)).toEqual(['a']);
    expect(Object.keys(nestedValue.a).length).toBeGreaterThan(4 * MAX_BODY_MEMBERS);
    for (const body of [top, nested]) {
      expect(body.length).toBeLessThanOrEqual(DEFAULT_MAX_BODY_BYTES);
      expect(body.length).toBeGreaterThan(DEFAULT_MAX_BODY_BYTES - 16);
    }
    expect(manyMembers(19).toString('utf8')).toBe('{"0":0,"1":0,"2":0}');
    expect(manyMembers(18).toString('utf8')).toBe('{"0":0,"1":0}');
  });

  it('has names of combining marks over the bound on their length, and as many as it lets through', () => {
    const shapes = WIDE_SHAPES as Array<[string, Buffer, boolean]>;
    const measured = shapes.slice(2).map(([label, body, readable]) => {
      const names = Object.keys(JSON.parse(body.toString('utf8')) as object);
      const length = names.reduce((sum, name) => sum + name.length, 0);
      return [label, names.length <= MAX_BODY_MEMBERS, length > MAX_BODY_NAMES_LENGTH, readable];
    });
    expect(measured).toEqual([
      ['marks-1000x6', true, true, false],
      ['marks-290x6-within', true, false, true],
    ]);
    // Out of canonical order: NFC reorders them.
    const [, within] = shapes[3]!;
    const first = Object.keys(JSON.parse(within.toString('utf8')) as object)[0]!;
    expect(first.normalize('NFD')).not.toBe(first);
  });
});
