const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

// Each ASCII character's six bits in either alphabet (standard and URL-safe);
// -1 for every other character. A table rather than atob: the signature is
// decoded on every delivery, and Node 20's atob checks each character with a
// linear search.
const SEXTETS = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) SEXTETS[ALPHABET.charCodeAt(i)] = i;
SEXTETS[0x2d] = 62; // '-'
SEXTETS[0x5f] = 63; // '_'

/**
 * Decodes base64 the way the service's verifier accepts it: standard or
 * URL-safe alphabet, padding optional, surrounding whitespace ignored.
 * Returns `null` for anything else (inner whitespace, stray characters,
 * misplaced padding, an impossible length, an empty input).
 *
 * @example
 * ```ts
 * import { decodeBase64Lenient } from './base64.js';
 *
 * decodeBase64Lenient(' aGk '); // Uint8Array [104, 105]
 * decodeBase64Lenient('a Gk'); // null
 * ```
 */
export function decodeBase64Lenient(input: string): Uint8Array | null {
  // trim() is linear (the header is attacker-controlled); everything after it
  // is one pass over the characters.
  const text = input.trim();
  let end = text.length;
  // Padding, one or two characters, must complete the last quantum exactly.
  if (text.endsWith('=')) {
    if (end % 4 !== 0) return null;
    end -= text.endsWith('==') ? 2 : 1;
  }
  // A last quantum of one character cannot hold a byte.
  if (end === 0 || end % 4 === 1) return null;
  const out = new Uint8Array((end * 3) >> 2);
  let bits = 0;
  let held = 0;
  let next = 0;
  for (let i = 0; i < end; i++) {
    const code = text.charCodeAt(i);
    const value = code < 128 ? (SEXTETS[code] as number) : -1;
    if (value < 0) return null;
    bits = (bits << 6) | value;
    held += 6;
    if (held >= 8) {
      held -= 8;
      out[next++] = bits >> held;
    }
  }
  // The spare low bits of a last, partial quantum are ignored, as atob does.
  return out;
}

/**
 * Standard, padded base64 of `bytes`.
 *
 * @example
 * ```ts
 * import { encodeBase64 } from './base64.js';
 *
 * encodeBase64(new Uint8Array([104, 105])); // 'aGk='
 * ```
 */
export function encodeBase64(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  if (i < bytes.length) {
    const a = bytes[i] as number;
    const b = i + 1 < bytes.length ? (bytes[i + 1] as number) : 0;
    const n = (a << 16) | (b << 8);
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]!;
    out += i + 1 < bytes.length ? ALPHABET[(n >> 6) & 63]! + '=' : '==';
  }
  return out;
}
