/**
 * The key shapes payhook reads, declared here so that internals use them
 * without importing the public layer; `keys.ts` re-exports them.
 *
 * @module
 */

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
