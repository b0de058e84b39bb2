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
 */
export function decodeBase64Lenient(input: string): Uint8Array | null {
  // trim() is linear; a /\s+$/ regex would be quadratic on a long run of
  // inner spaces, and the header is attacker-controlled.
  let text = input.trim();
  let end = text.length;
  if (end > 0 && text.charCodeAt(end - 1) === 61 /* = */) end--;
  if (end > 0 && text.charCodeAt(end - 1) === 61) end--;
  // Padding, when present, must complete the last quantum exactly.
  if (end !== text.length && text.length % 4 !== 0) return null;
  text = text.slice(0, end);
  const rest = text.length % 4;
  if (text.length === 0 || rest === 1) return null;
  const lookup = decodeTable();
  const out = new Uint8Array(((text.length * 3) >> 2));
  let buffer = 0;
  let bits = 0;
  let o = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const value = code < 128 ? (lookup[code] as number) : -1;
    if (value < 0) return null;
    buffer = (buffer << 6) | value;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (buffer >> bits) & 0xff;
    }
  }
  return o === out.length ? out : out.subarray(0, o);
}

/** Standard, padded base64 of `bytes`. */
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
