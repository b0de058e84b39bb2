import { PayhookError } from './errors.js';
import { decodeBase64Lenient, encodeBase64 } from './base64.js';

/** The DER of AlgorithmIdentifier { rsaEncryption, NULL }. */
const RSA_ALGORITHM_IDENTIFIER = [
  0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00,
];

function derLength(length: number): number[] {
  // An RSA public key's DER is far below 64 KiB; anything longer fails to import.
  return length < 0x80 ? [length] : length < 0x100 ? [0x81, length] : [0x82, length >> 8, length & 0xff];
}

/**
 * Wraps a PKCS#1 `RSAPublicKey` in a `SubjectPublicKeyInfo`, the only RSA
 * public key format Web Crypto imports.
 *
 * @example
 * ```ts
 * import { pkcs1ToSpki } from './pem.js';
 *
 * declare const pkcs1Der: Uint8Array;
 * const spki = pkcs1ToSpki(pkcs1Der);
 * ```
 */
export function pkcs1ToSpki(pkcs1: Uint8Array): Uint8Array {
  // A DER element: its tag, its length, its content.
  const der = (tag: number, content: number[]): number[] => [tag, ...derLength(content.length), ...content];
  // SEQUENCE { AlgorithmIdentifier rsaEncryption, BIT STRING (no unused bits) { the PKCS#1 key } }
  return Uint8Array.from(der(0x30, [...RSA_ALGORITHM_IDENTIFIER, ...der(0x03, [0, ...pkcs1])]));
}

// Text with no PEM block at all is most often a mix-up the message can name: an environment's name where its key
// belongs (quotes from a .env file kept), a JWK or the key's base64 without its PEM lines, a file's path.
function notPemHint(text: string): string {
  if (text.includes('-----BEGIN')) return '';
  const word = text
    .trim()
    .replace(/^["']|["']$/g, '')
    .toLowerCase();
  if (word === 'production' || word === 'beta') {
    return `: '${word}' names an environment, use { environment: '${word}' }`;
  }
  if (word.startsWith('{')) return ': JSON text? pass one parsed JWK';
  if (/^[a-z\d+/=\s]{100,}$/.test(word.replace(/\\[rn]/g, '')))
    return ': base64 without PEM lines? pass the public key PEM as issued';
  return ': no -----BEGIN line (a file path or a variable name, not the key itself?)';
}

/**
 * The DER of a PEM public key (SPKI or PKCS#1), always as SPKI. Throws
 * `INVALID_KEY` when the text holds no such PEM block, its body is not base64,
 * or the text holds another PEM block too (a second key, a private key).
 *
 * @example
 * ```ts
 * import { pemToSpki } from './pem.js';
 *
 * declare const pem: string; // '-----BEGIN RSA PUBLIC KEY-----\n…'
 * const spki: Uint8Array = pemToSpki(pem);
 * ```
 */
export function pemToSpki(pem: string): Uint8Array {
  // One key per string: a second block (the other environment's key in the same
  // variable, a private key pasted along) would otherwise be dropped without a word.
  // Counted first: with one BEGIN at most, the match below is linear in the text.
  const match =
    pem.split('-----BEGIN ').length > 2
      ? null
      : /-----BEGIN (RSA )?PUBLIC KEY-----([\s\S]*?)-----END \1PUBLIC KEY-----/.exec(pem);
  if (!match) {
    throw new PayhookError(
      'INVALID_KEY',
      `The key is not one PEM public key (BEGIN PUBLIC KEY or BEGIN RSA PUBLIC KEY)${notPemHint(pem)}.`,
    );
  }
  // Line breaks may arrive as literal `\n` when a PEM was pasted into an
  // environment variable or a JSON file; a backslash is never base64, so
  // dropping those escapes cannot change the key.
  // Group 2 always takes part in a match (it may be empty).
  const body = (match[2] as string).replace(/\\[rn]|\s+/g, '');
  const der = decodeBase64Lenient(body);
  if (!der) throw new PayhookError('INVALID_KEY', 'The PEM block does not hold valid base64.');
  return match[1] ? pkcs1ToSpki(der) : der;
}

/**
 * Writes DER as a PEM block with the given label, 64 characters a line.
 *
 * @example
 * ```ts
 * import { derToPem } from './pem.js';
 *
 * derToPem(new Uint8Array([48, 0]), 'PUBLIC KEY'); // '-----BEGIN PUBLIC KEY-----\nMAA=\n-----END PUBLIC KEY-----\n'
 * ```
 */
export function derToPem(der: Uint8Array, label: string): string {
  const base64 = encodeBase64(der);
  const lines: string[] = [];
  for (let i = 0; i < base64.length; i += 64) lines.push(base64.slice(i, i + 64));
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
