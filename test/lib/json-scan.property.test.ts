import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanJson } from '../../src/lib/json-scan.js';

// scanJson decides INVALID_BODY for a request whose signature cannot verify,
// in place of JSON.parse. Oracle: JSON.parse itself, on valid texts, on
// texts one edit away from valid, and on noise made of JSON's own characters.
const parses = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  return value === null ? 'null' : typeof value;
}

const UNLIMITED = Number.MAX_SAFE_INTEGER;

// JSON texts with every kind of whitespace JSON allows between tokens.
const jsonText = fc
  .tuple(fc.jsonValue({ maxDepth: 6 }), fc.constantFrom(undefined, 1, 2, '\t', '\r\n', ' \n\t'))
  .map(([value, indent]) => JSON.stringify(value, null, indent));

// The characters JSON is made of, and near misses of them.
const alphabet = fc.constantFrom(
  ...'{}[]",:0123456789-+.eEtrufalsn\\/bu \n\t\r'.split(''),
  '\u0000',
  '\u001f',
  '\u000b',
  '\u000c',
  '\u00a0',
  '\ufeff',
  '\ud800',
  'é',
  'x',
  'A',
  'F',
);

const edited = fc
  .tuple(jsonText, fc.nat(), fc.constantFrom('delete', 'insert', 'replace'), alphabet)
  .map(([text, at, edit, char]) => {
    const i = text.length === 0 ? 0 : at % text.length;
    if (edit === 'delete') return text.slice(0, i) + text.slice(i + 1);
    if (edit === 'insert') return text.slice(0, i) + char + text.slice(i);
    return text.slice(0, i) + char + text.slice(i + 1);
  });

const noise = fc.array(alphabet, { maxLength: 24 }).map((chars) => chars.join(''));

describe('scanJson', () => {
  it('reads every JSON text, with the kind and depth JSON.parse gives', () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        const value: unknown = JSON.parse(text);
        expect(scanJson(text, UNLIMITED)).toEqual({ kind: kindOf(value), depth: depthOf(value) });
      }),
      { numRuns: 3000 },
    );
  });

  it('accepts a text exactly when JSON.parse does: one edit away from JSON, and noise', () => {
    fc.assert(
      fc.property(fc.oneof(edited, noise), (text) => {
        expect(scanJson(text, UNLIMITED) !== undefined).toBe(parses(text));
      }),
      { numRuns: 30_000 },
    );
  });

  it.each([
    ['', false],
    [' ', false],
    ['{}', true],
    [' \t\r\n{ } \n', true],
    ['{"a":1,}', false],
    ['[1,]', false],
    ['[,1]', false],
    ['{"a" 1}', false],
    ['{a:1}', false],
    ["{'a':1}", false],
    ['{"a":1}{}', false],
    ['{"a":1} x', false],
    ['01', false],
    ['-01', false],
    ['-0', true],
    ['1.', false],
    ['.1', false],
    ['1e', false],
    ['1e+', false],
    ['1E+5', true],
    ['1.5e-07', true],
    ['+1', false],
    ['"\\u00e9\\/\\b\\f\\n\\r\\t\\"\\\\"', true],
    ['"\\u00g9"', false],
    ['"\\x"', false],
    ['"\\', false],
    ['"a', false],
    ['"\u0000"', false],
    ['"\u001f"', false],
    ['"\u007f\ud800\udfff\ud800"', true],
    ['\ufeff{}', false],
    ['\u00a0{}', false],
    ['\u000b{}', false],
    ['tru', false],
    ['nul', false],
    ['true', true],
    ['[true,false,null]', true],
    ['[truex]', false],
  ])('%j: %s, as JSON.parse says', (text, valid) => {
    expect(parses(text)).toBe(valid);
    expect(scanJson(text, UNLIMITED) !== undefined).toBe(valid);
  });

  it('walks any depth without recursion, and stops at maxDepth', () => {
    const deep = `{"a":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    expect(scanJson(deep, UNLIMITED)).toEqual({ kind: 'object', depth: 200_001 });
    expect(scanJson(`${'['.repeat(200_000)}`, UNLIMITED)).toBeUndefined();
    // Past the bound the text is not read on: it is reported as deeper than
    // the bound, even though this one never closes.
    expect(scanJson(`${'['.repeat(200_000)}`, 64)).toEqual({ kind: 'array', depth: 65 });
    expect(scanJson('[[[]]]', 3)).toEqual({ kind: 'array', depth: 3 });
  });
});
