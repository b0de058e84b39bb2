const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

let table: Int8Array | undefined;

function decodeTable(): Int8Array {
  if (table) return table;
  table = new Int8Array(128).fill(-1);
  for (let i = 0; i < 64; i++) table[ALPHABET.charCodeAt(i)] = i;
  table['-'.charCodeAt(0)] = 62; // URL-safe alphabet
  table['_'.charCodeAt(0)] = 63;
  return table;
}

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
  // trim() is linear; a /\s+$/ regex would be quadratic on a long run of
  // inner spaces, and the header is attacker-controlled.
  const text = input.trim();
  let end = text.length;
  if (end > 0 && text.charCodeAt(end - 1) === 61 /* = */) end--;
  if (end > 0 && text.charCodeAt(end - 1) === 61) end--;
  // Padding, when present, must complete the last quantum exactly.
  if (end !== text.length && text.length % 4 !== 0) return null;
  const rest = end % 4;
  if (end === 0 || rest === 1) return null;
  const lookup = decodeTable();
  const out = new Uint8Array((end * 3) >> 2);
  // Four characters at a time (this runs on every delivery's signature). A
  // character outside both alphabets has the value -1, which makes the whole
  // quantum negative; one beyond ASCII is caught by the `> 127` test first.
  const full = end - rest;
  let o = 0;
  let i = 0;
  for (; i < full; i += 4) {
    const a = text.charCodeAt(i);
    const b = text.charCodeAt(i + 1);
    const c = text.charCodeAt(i + 2);
    const d = text.charCodeAt(i + 3);
    if ((a | b | c | d) > 127) return null;
    const n = ((lookup[a] as number) << 18) | ((lookup[b] as number) << 12) | ((lookup[c] as number) << 6) | (lookup[d] as number);
    if (n < 0) return null;
    out[o++] = n >> 16;
    out[o++] = (n >> 8) & 0xff;
    out[o++] = n & 0xff;
  }
  if (rest !== 0) {
    // Two or three characters left: one or two bytes; their spare low bits are ignored.
    const a = text.charCodeAt(i);
    const b = text.charCodeAt(i + 1);
    const c = rest === 3 ? text.charCodeAt(i + 2) : 65; /* 'A', value 0 */
    if ((a | b | c) > 127) return null;
    const n = ((lookup[a] as number) << 18) | ((lookup[b] as number) << 12) | ((lookup[c] as number) << 6);
    if (n < 0) return null;
    out[o++] = n >> 16;
    if (rest === 3) out[o] = (n >> 8) & 0xff;
  }
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
