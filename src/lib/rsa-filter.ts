/**
 * The early filter: whether any key can have made a signature at all, told
 * by the RSA public operation alone, before anything is built to verify.
 * It only ever refuses; the real check (`rsa-verify.ts`) decides every accept.
 *
 * @module
 */
import { decodeBase64Lenient } from './base64.js';
import { signatureLength } from './rsa-verify.js';

/** Internal: an RSA key's modulus and public exponent. */
export interface RsaPublicNumbers {
  readonly n: bigint;
  readonly e: bigint;
}

const toBigInt = (bytes: Uint8Array): bigint =>
  BigInt(`0x0${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`);

/** Internal: a verifier's imported keys, each with its numbers for {@link couldBeSignature}. */
export interface KeysWithNumbers {
  readonly keys: CryptoKey[];
  /** In the order of `keys`; `undefined` where a key is never checked early. */
  readonly numbers: readonly (RsaPublicNumbers | undefined)[];
}

/**
 * Internal: reads the modulus and exponent of each of `keys` as Web Crypto
 * exports them (a JSON Web Key), once per verifier. A key that cannot be
 * exported (a non-extractable `CryptoKey` the caller imported) has none, nor
 * has one whose exponent is over 32 bits, which would make the check slow:
 * such a key is never checked early. Never rejects.
 *
 * @example
 * ```ts
 * import { withPublicNumbers } from './rsa-filter.js';
 *
 * declare const keys: CryptoKey[];
 * const { numbers } = await withPublicNumbers(keys); // [{ n: 0xc2…n, e: 65537n }]
 * ```
 */
export async function withPublicNumbers(keys: CryptoKey[]): Promise<KeysWithNumbers> {
  const numbers = await Promise.all(
    keys.map(async (key) => {
      if (!key.extractable) return undefined;
      try {
        const jwk = await globalThis.crypto.subtle.exportKey('jwk', key);
        const n = decodeBase64Lenient(jwk.n ?? '');
        const e = decodeBase64Lenient(jwk.e ?? '');
        return n && e && e.length <= 4 ? { n: toBigInt(n), e: toBigInt(e) } : undefined;
      } catch {
        return undefined; // not exportable after all: checked in full, like any other
      }
    }),
  );
  return { keys, numbers };
}

/** `base ** exponent % modulus`, by squaring. */
function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  let square = base % modulus;
  while (exponent > 0n) {
    if (exponent & 1n) result = (result * square) % modulus;
    square = (square * square) % modulus;
    exponent >>= 1n;
  }
  return result;
}

// The first ten bytes every RSASSA-PKCS1-v1_5 encoded message starts with
// (RFC 8017 §9.2): 0x00 0x01, then a padding of 0xFF bytes, at least eight.
const PKCS1_HEAD = 0x01_ff_ff_ff_ff_ff_ff_ff_ffn;

/**
 * Internal: `false` when no key can have made `signature`, for any message:
 * under each key whose modulus it fits, the RSA public operation (one
 * modular power) does not give the PKCS #1 v1.5 padding every real signature
 * has, so there is nothing to build a canonical string for. `true` says only
 * "maybe": Web Crypto still decides ({@link verifyWithKeys}), and a key
 * without numbers is always a maybe. A random signature passes by chance
 * about once in 2^72 or rarer (2^80 when the modulus fills its last byte).
 *
 * @example
 * ```ts
 * import { couldBeSignature, withPublicNumbers } from './rsa-filter.js';
 *
 * declare const keys: CryptoKey[], bytes: Uint8Array;
 * if (!couldBeSignature(bytes, await withPublicNumbers(keys))) console.log('forged or corrupted');
 * ```
 */
export function couldBeSignature(signature: Uint8Array, { keys, numbers }: KeysWithNumbers): boolean {
  const s = toBigInt(signature);
  return keys.some((key, index) => {
    if (signature.length !== signatureLength(key)) return false;
    const { n, e } = numbers[index] ?? {};
    if (n === undefined || e === undefined) return true;
    return s < n && modPow(s, e, n) >> BigInt(8 * (signature.length - 10)) === PKCS1_HEAD;
  });
}
