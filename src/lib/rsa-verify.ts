import { decodeBase64Lenient } from './base64.js';

const RSASSA = { name: 'RSASSA-PKCS1-v1_5' };

/** A signature's length in bytes under `key`: exactly its modulus length, rounded up to whole bytes. */
export const signatureLength = (key: CryptoKey): number =>
  Math.ceil((key.algorithm as RsaHashedKeyAlgorithm).modulusLength / 8);

/**
 * Internal: the `signature` header decoded (lenient base64, CONTRACT.md §2), or
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
