import { clearImportedKeys, importVerificationKey } from './lib/key-import.js';

/**
 * A Web Crypto `CryptoKey`, described structurally so that payhook's public
 * types need neither the DOM library nor `@types/node`. Any real `CryptoKey`
 * fits.
 *
 * @example
 * ```ts
 * import { importPublicKey, type CryptoKeyLike } from 'payhook';
 *
 * const key: CryptoKeyLike = await importPublicKey(process.env.PAYMENT_PUBLIC_KEY!);
 * ```
 */
export interface CryptoKeyLike {
  readonly type: string;
  readonly extractable: boolean;
  readonly algorithm: { readonly name: string };
  readonly usages: readonly string[];
}

/**
 * An RSA public key as a JSON Web Key (`kty: "RSA"`, `n`, `e`).
 *
 * @example
 * ```ts
 * import type { RsaJsonWebKey } from 'payhook';
 *
 * const jwk: RsaJsonWebKey = { kty: 'RSA', n: '…', e: 'AQAB' };
 * ```
 */
export interface RsaJsonWebKey {
  kty: string;
  n?: string;
  e?: string;
  alg?: string;
  [member: string]: unknown;
}

/**
 * A public key in any form payhook reads: a PEM string (SPKI
 * `BEGIN PUBLIC KEY` or PKCS#1 `BEGIN RSA PUBLIC KEY`), a JSON Web Key, or a
 * `CryptoKey` already imported for RSASSA-PKCS1-v1_5 with SHA-256.
 *
 * @example
 * ```ts
 * import { PRODUCTION_PUBLIC_KEY, type KeyInput } from 'payhook';
 *
 * const keys: KeyInput[] = [PRODUCTION_PUBLIC_KEY];
 * ```
 */
export type KeyInput = string | RsaJsonWebKey | CryptoKeyLike;

/**
 * Options for reading public keys.
 *
 * @example
 * ```ts
 * import type { KeyOptions } from 'payhook';
 *
 * const options: KeyOptions = { allowWeakKeys: false };
 * ```
 */
export interface KeyOptions {
  /**
   * Accept RSA keys shorter than 2048 bits. Off by default: such keys are
   * factorable and a signature under them proves little. Turn it on only for
   * legacy test fixtures.
   * @defaultValue false
   */
  allowWeakKeys?: boolean;
}

/**
 * Imports a public key for verifying the service's signatures
 * (RSASSA-PKCS1-v1_5 with SHA-256). PEM strings are imported once and kept in
 * a small bounded cache (the 16 most recently used), so passing the same PEM
 * on every request costs one `Map` lookup; JSON Web Keys are cached per
 * object (do not mutate a JWK object after passing it). A `CryptoKey` is
 * checked and returned as is. {@link verifySignature} and `verifyWebhook`
 * call this for you.
 *
 * @throws {@link PayhookError} `INVALID_KEY` when the key cannot be read, is
 * not RSA, is private, or is a `CryptoKey` for another algorithm or hash;
 * `WEAK_KEY` when it is shorter than 2048 bits and `allowWeakKeys` is not set.
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
  return importVerificationKey(input, options);
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
