import { clearImportedKeys, importKeys } from './lib/key-import.js';
import type { CryptoKeyLike, KeyInput, KeyOptions } from './lib/key-types.js';

export type { CryptoKeyLike, KeyInput, KeyOptions, RsaJsonWebKey } from './lib/key-types.js';

/**
 * Imports a public key for verifying the service's signatures
 * (RSASSA-PKCS1-v1_5 with SHA-256). PEM strings are imported once and kept in
 * a small bounded cache (the 16 most recently used), so passing the same PEM
 * on every request costs one `Map` lookup; JSON Web Keys are cached per
 * object (do not mutate a JWK object after passing it). A `CryptoKey` is
 * checked and returned as is. {@link verifySignature} and `verifyWebhook`
 * call this for you.
 *
 * @throws PayhookError `INVALID_KEY` when the key cannot be read, is
 * not RSA, is private, is a `CryptoKey` for another algorithm or hash, is a
 * JSON Web Key whose `alg`, `use` or `key_ops` name another use than RS256
 * verifying, or has a public exponent no real key has (even, or below 3);
 * `WEAK_KEY` when it is shorter than 2048 bits and
 * `allowWeakKeys` is not set.
 *
 * @example
 * ```ts
 * import { importPublicKey, PRODUCTION_PUBLIC_KEY, verifySignature } from 'payhook';
 *
 * const key = await importPublicKey(PRODUCTION_PUBLIC_KEY);
 * const ok = await verifySignature('post\n/webhooks\nhost:shop.example.kg\n{}', 'c2lnbmF0dXJl', key);
 * ```
 */
export async function importPublicKey(input: KeyInput, options?: KeyOptions): Promise<CryptoKeyLike> {
  // A one-key list: `input` itself is the key, even when it is an array (refused as INVALID_KEY).
  const [key] = await importKeys([input], options);
  return key as CryptoKey;
}

/**
 * Forgets every imported key (PEM strings and JSON Web Keys). Only needed by
 * tests that count imports, or after rotating keys in a long-lived process.
 *
 * @example
 * ```ts
 * import { clearKeyCache } from 'payhook';
 *
 * clearKeyCache();
 * ```
 */
export function clearKeyCache(): void {
  clearImportedKeys();
}
