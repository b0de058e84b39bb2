import { decodeBase64Lenient } from './base64.js';

const RSASSA = { name: 'RSASSA-PKCS1-v1_5' };

/** A signature's length in bytes under `key`: exactly its modulus length, rounded up to whole bytes. */
const signatureLength = (key: CryptoKey): number =>
  Math.ceil((key.algorithm as RsaHashedKeyAlgorithm).modulusLength / 8);

/**
 * Internal: the `signature` header decoded (lenient base64, CONTRACT §2), or
 * `null` when no key of `keys` could verify it: not base64, or a length that
 * matches none of their moduli. It costs a decode, so a caller can refuse
 * such a signature before building anything to verify.
 *
 * @example
 * ```ts
 * import { signatureBytes } from './rsa-verify.js';
 *
 * declare const key: CryptoKey; // RSA 2048: signatures of 256 bytes
 * signatureBytes('c2ln', [key]); // null: 3 bytes
 * ```
 */
export function signatureBytes(signature: unknown, keys: readonly CryptoKey[]): Uint8Array | null {
  const bytes = typeof signature === 'string' ? decodeBase64Lenient(signature) : null;
  return bytes !== null && keys.some((key) => signatureLength(key) === bytes.length) ? bytes : null;
}

// The modulus and exponent of each key that can be exported, for the check
// below. A key the caller imported as not extractable has none: it is
// never ruled out early.
const publicNumbers = new WeakMap<CryptoKey, { readonly n: bigint; readonly e: bigint }>();

const toBigInt = (bytes: Uint8Array): bigint =>
  BigInt(`0x0${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`);

/**
 * Internal: reads the modulus and exponent of each of `keys` once (Web
 * Crypto exports them as a JSON Web Key), so that {@link couldBeSignature}
 * can rule signatures out without the canonical string, and resolves to
 * `keys`. Never rejects: a key that cannot be exported is not checked early.
 *
 * @example
 * ```ts
 * import { loadPublicNumbers } from './rsa-verify.js';
 *
 * declare const keys: CryptoKey[];
 * const same: CryptoKey[] = await loadPublicNumbers(keys);
 * ```
 */
export async function loadPublicNumbers(keys: CryptoKey[]): Promise<CryptoKey[]> {
  await Promise.all(
    keys.map(async (key) => {
      if (!key.extractable || publicNumbers.has(key)) return;
      try {
        const { n, e } = await globalThis.crypto.subtle.exportKey('jwk', key);
        const modulus = decodeBase64Lenient(n ?? '');
        const exponent = decodeBase64Lenient(e ?? '');
        if (modulus && exponent) publicNumbers.set(key, { n: toBigInt(modulus), e: toBigInt(exponent) });
      } catch {
        // Not exportable after all: checked in full, like any other.
      }
    }),
  );
  return keys;
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
 * Internal: the body size, in characters, above which `verifyWebhook` asks
 * {@link couldBeSignature} (about 80 µs a key) before it parses the body and
 * writes its line. Real deliveries (a few hundred bytes) stay below it and
 * never pay for the check; a forged body just below it costs at most about
 * 0.7 ms to refuse in full (8 KiB of tiny keys, measured on a 2-core VM).
 *
 * @example
 * ```ts
 * import { EARLY_CHECK_CHARS } from './rsa-verify.js';
 *
 * console.log(EARLY_CHECK_CHARS); // 8192
 * ```
 */
export const EARLY_CHECK_CHARS = 8_192;

/**
 * Internal: `false` when no key of `keys` can have made `signature`, for any
 * message: under each key whose modulus it fits, the RSA public operation
 * (one modular power, about 80 µs for 2048 bits) does not give the
 * PKCS #1 v1.5 padding every real signature has, so there is nothing to
 * build a canonical string for. `true` says only "maybe": Web Crypto still
 * decides ({@link verifyWithKeys}); a key without loaded numbers is always a
 * maybe. A random signature passes this by chance once in 2^80.
 *
 * @example
 * ```ts
 * import { couldBeSignature, loadPublicNumbers } from './rsa-verify.js';
 *
 * declare const keys: CryptoKey[], bytes: Uint8Array;
 * await loadPublicNumbers(keys);
 * if (!couldBeSignature(bytes, keys)) console.log('forged or corrupted');
 * ```
 */
export function couldBeSignature(signature: Uint8Array, keys: readonly CryptoKey[]): boolean {
  const s = toBigInt(signature);
  return keys.some((key) => {
    if (signature.length !== signatureLength(key)) return false;
    const numbers = publicNumbers.get(key);
    if (numbers === undefined) return true;
    return s < numbers.n && modPow(s, numbers.e, numbers.n) >> BigInt(8 * (signature.length - 10)) === PKCS1_HEAD;
  });
}

/**
 * Internal: whether `signature` (decoded by {@link signatureBytes}) is a
 * valid RSASSA-PKCS1-v1_5 / SHA-256 signature of `canonical`'s UTF-8 bytes
 * by any of `keys` (already imported and checked). Never throws.
 *
 * @example
 * ```ts
 * import { signatureBytes, verifyWithKeys } from './rsa-verify.js';
 *
 * declare const key: CryptoKey, header: string;
 * const bytes = signatureBytes(header, [key]);
 * const ok: boolean = bytes !== null && (await verifyWithKeys([key], 'post\n/hook\nhost:h\n{}', bytes));
 * ```
 */
export async function verifyWithKeys(
  keys: readonly CryptoKey[],
  canonical: string,
  signature: Uint8Array,
): Promise<boolean> {
  const data = new TextEncoder().encode(canonical);
  for (const key of keys) {
    // Some runtimes throw for a signature of the wrong length instead of answering false.
    if (signature.length !== signatureLength(key)) continue;
    try {
      if (await globalThis.crypto.subtle.verify(RSASSA, key, signature as BufferSource, data)) return true;
    } catch {
      // Treated as "does not verify": a malformed signature is never a throw.
    }
  }
  return false;
}
