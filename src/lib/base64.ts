const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

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
  // trim() is linear, and so is this anchored test (the header is
  // attacker-controlled): one run of the two alphabets, then padding.
  const text = input.trim();
  const padding = /^[\w+/-]*(={0,2})$/.exec(text)?.[1];
  if (padding === undefined) return null;
  const end = text.length - padding.length;
  // Padding, when present, must complete the last quantum exactly.
  if ((padding !== '' && text.length % 4 !== 0) || end % 4 === 1 || end === 0) return null;
  const out = new Uint8Array((end * 3) >> 2);
  // Six bits per character into `bits`; a byte out whenever 8 are pending.
  // The spare low bits of a last, partial quantum are ignored.
  for (let i = 0, o = 0, bits = 0, pending = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    // a-z, A-Z, 0-9, then + or - (62) and / or _ (63).
    const value = c > 96 ? c - 71 : c === 95 || c === 47 ? 63 : c > 64 ? c - 65 : c > 47 ? c + 4 : 62;
    bits = ((bits << 6) | value) & 0xffff;
    pending += 6;
    if (pending >= 8) {
      pending -= 8;
      out[o++] = bits >> pending;
    }
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
