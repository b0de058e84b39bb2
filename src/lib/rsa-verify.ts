import { decodeBase64Lenient } from './base64.js';
import { allot, utf8 } from './bytes.js';

const RSASSA = { name: 'RSASSA-PKCS1-v1_5' };

/**
 * Internal: whether `signature` (the header, base64) is a valid
 * RSASSA-PKCS1-v1_5 / SHA-256 signature of `canonical`'s UTF-8 bytes by any
 * of `keys` (already imported and checked). Never throws.
 *
 * @example
 * ```ts
 * import { verifyWithKeys } from './rsa-verify.js';
 *
 * declare const key: CryptoKey;
 * const ok: boolean = await verifyWithKeys([key], 'post\n/hook\nhost:h\n{}', 'c2ln');
 * ```
 */
export async function verifyWithKeys(
  keys: readonly CryptoKey[],
  canonical: string,
  signature: unknown,
): Promise<boolean> {
  const bytes = typeof signature === 'string' ? decodeBase64Lenient(signature, allot) : null;
  if (bytes === null) return false;
  const data = utf8(canonical);
  for (const key of keys) {
    // A signature is exactly as long as the key's modulus; anything else
    // cannot verify, and some runtimes throw instead of answering false.
    if (bytes.length !== Math.ceil((key.algorithm as RsaHashedKeyAlgorithm).modulusLength / 8)) continue;
    try {
      if (await globalThis.crypto.subtle.verify(RSASSA, key, bytes as BufferSource, data as BufferSource)) return true;
    } catch {
      // Treated as "does not verify": a malformed signature is never a throw.
    }
  }
  return false;
}
