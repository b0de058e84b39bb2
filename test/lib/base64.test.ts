import { describe, expect, it } from 'vitest';
import { decodeBase64Lenient, encodeBase64 } from '../../src/lib/base64.js';

const bytes = (...values: number[]): Uint8Array => new Uint8Array(values);

describe('decodeBase64Lenient', () => {
  it('decodes the standard alphabet, padded', () => {
    expect(decodeBase64Lenient('+/+/AA==')).toEqual(bytes(0xfb, 0xff, 0xbf, 0x00));
    expect(decodeBase64Lenient('aGVsbG8=')).toEqual(new TextEncoder().encode('hello'));
  });

  it('decodes the URL-safe alphabet to the same bytes', () => {
    expect(decodeBase64Lenient('-_-_AA==')).toEqual(bytes(0xfb, 0xff, 0xbf, 0x00));
    expect(decodeBase64Lenient('-_-_AA')).toEqual(bytes(0xfb, 0xff, 0xbf, 0x00));
  });

  it('accepts missing padding for both remainders', () => {
    expect(decodeBase64Lenient('aGVsbG8')).toEqual(new TextEncoder().encode('hello'));
    expect(decodeBase64Lenient('aGk')).toEqual(new TextEncoder().encode('hi'));
    expect(decodeBase64Lenient('aA')).toEqual(new TextEncoder().encode('h'));
  });

  it('ignores surrounding whitespace (spaces, tabs, CR/LF)', () => {
    expect(decodeBase64Lenient(' \t aGVsbG8=\r\n')).toEqual(new TextEncoder().encode('hello'));
  });

  it.each([
    // A stray character, each in a string of a valid length (a wrong length alone is refused first).
    ['inner space', 'aGVs bG8'],
    ['inner newline', 'aGVs\nbG8'],
    ['a character outside both alphabets', 'aGVs*bG8'],
    ['a non-ASCII character', 'aGVsé8'],
    // The table covers codes 0 to 127: the first code past it must not read as 'A'.
    ['U+0080, the first code past ASCII', 'aGVs\u0080bG8'],
    ['padding in the middle', 'aG==bG8='],
    ['three padding characters', 'aGk==='],
    ['padding that does not complete the quantum', 'aGk=='],
    ['a single padding character after two data characters', 'aA='],
    ['length % 4 == 1', 'aGVsb'],
    ['a lone character', 'a'],
    ['the empty string', ''],
    ['only whitespace', '   \n'],
    ['only padding', '=='],
    ['four padding characters', '===='],
  ])('rejects %s', (_label, input) => {
    expect(decodeBase64Lenient(input)).toBeNull();
  });

  it('stays linear on a long run of inner whitespace (no quadratic trim)', () => {
    const input = `A${' '.repeat(200_000)}A`;
    const started = performance.now();
    expect(decodeBase64Lenient(input)).toBeNull();
    // A quadratic trim takes tens of seconds here; linear work takes ~1 ms.
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('encodeBase64', () => {
  it('writes standard padded base64 for every remainder', () => {
    expect(encodeBase64(new Uint8Array())).toBe('');
    expect(encodeBase64(bytes(0x68))).toBe('aA==');
    expect(encodeBase64(bytes(0x68, 0x69))).toBe('aGk=');
    expect(encodeBase64(bytes(0xfb, 0xff, 0xbf))).toBe('+/+/');
  });
});
