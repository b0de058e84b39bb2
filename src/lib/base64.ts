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
  // attacker-controlled): one run of the two alphabets, then padding, which
  // when present must complete the last quantum exactly.
  const text = input.trim();
  if (!/^[\w+/-]*={0,2}$/.test(text) || (text.includes('=') && text.length % 4 !== 0)) return null;
  let binary: string;
  try {
    // atob (every runtime has it) refuses an impossible length and ignores
    // the spare low bits of a last, partial quantum.
    binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    return null;
  }
  if (binary === '') return null;
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
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
