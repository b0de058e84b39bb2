import { Buffer } from 'node:buffer';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeBase64Lenient, encodeBase64 } from '../../src/lib/base64.js';
import { warmBinaryStrings } from '../helpers/fast-check.js';

beforeAll(warmBinaryStrings);

// Oracle: node's Buffer encoders. The decoder must read back every spelling
// the contract allows (standard / URL-safe, padded or not, surrounding
// whitespace) and refuse anything with a character outside the alphabets.

/** The decoder as it was, on atob: its verdicts and bytes are the specification for any string. */
function decodeWithAtob(input: string): Uint8Array | null {
  const text = input.trim();
  if (!/^[\w+/-]*={0,2}$/.test(text) || (text.includes('=') && text.length % 4 !== 0)) return null;
  let binary: string;
  try {
    binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    return null;
  }
  return binary === '' ? null : Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

// Strings near base64: both alphabets, padding, whitespace, and a few characters outside them.
const nearBase64 = fc.string({
  unit: fc.constantFrom(...'ABZaz09+/-_=', ' ', '\t', '\n', '*', '.', 'é', '\u00a0', '\ud800'),
  maxLength: 24,
});

const payload = fc.uint8Array({ minLength: 1, maxLength: 300 });
const surrounding = fc.stringMatching(/^[ \t\r\n]{0,4}$/);

describe('lenient base64 (property)', () => {
  it('decodes every allowed spelling of random bytes back to the bytes', () => {
    fc.assert(
      fc.property(
        payload,
        fc.boolean(),
        fc.boolean(),
        surrounding,
        surrounding,
        (data, urlSafe, padded, before, after) => {
          const buffer = Buffer.from(data);
          let text = urlSafe ? buffer.toString('base64url') : buffer.toString('base64');
          if (urlSafe && padded) text += '='.repeat((4 - (text.length % 4)) % 4);
          if (!urlSafe && !padded) text = text.replace(/=+$/, '');
          const decoded = decodeBase64Lenient(before + text + after);
          expect(decoded).not.toBeNull();
          expect(Buffer.from(decoded!).equals(buffer)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('encodes as node does', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (data) => {
        expect(encodeBase64(data)).toBe(Buffer.from(data).toString('base64'));
      }),
      { numRuns: 300 },
    );
  });

  it('rejects a string with one character outside the alphabets, wherever it is', () => {
    const outside = fc
      .oneof(
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
      )
      .filter((char) => !/^[A-Za-z0-9+/_=-]$/.test(char) && char.trim() === char);
    fc.assert(
      fc.property(payload, outside, fc.nat(), (data, char, at) => {
        const text = Buffer.from(data).toString('base64');
        const index = at % (text.length + 1);
        // At the very ends, whitespace would be trimmed, so `outside` excludes it.
        expect(decodeBase64Lenient(text.slice(0, index) + char + text.slice(index))).toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  it('gives the verdict and the bytes an atob-based decoder gives, for any string', () => {
    fc.assert(
      fc.property(fc.oneof(nearBase64, fc.string({ unit: 'binary', maxLength: 24 })), (text) => {
        expect(decodeBase64Lenient(text)).toEqual(decodeWithAtob(text));
      }),
      { numRuns: 20_000 },
    );
  });

  it('never throws, whatever the string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 64 }), (text) => {
        const decoded = decodeBase64Lenient(text);
        expect(decoded === null || decoded instanceof Uint8Array).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
