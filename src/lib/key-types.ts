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
 * An RSA key as a JSON Web Key (`kty: "RSA"`, `n`, `e`, and `d` with the other
 * private members for a private key). The members are those RFC 7517 and
 * RFC 7518 register, all optional as in the standard `JsonWebKey` type, so a
 * key from `crypto.subtle.exportKey('jwk', …)` or node:crypto's
 * `KeyObject.export({ format: 'jwk' })` fits as it is. A key that is not an
 * RSA key of the right use is refused when it is read, with `INVALID_KEY`.
 *
 * @example
 * ```ts
 * import type { RsaJsonWebKey } from 'payhook';
 *
 * const jwk: RsaJsonWebKey = { kty: 'RSA', n: '…', e: 'AQAB', kid: 'payments-2025' };
 * ```
 */
export interface RsaJsonWebKey {
  kty?: string;
  n?: string;
  e?: string;
  alg?: string;
  use?: string;
  key_ops?: readonly string[];
  ext?: boolean;
  kid?: string;
  d?: string;
  p?: string;
  q?: string;
  dp?: string;
  dq?: string;
  qi?: string;
  oth?: readonly object[];
  crv?: string;
  x?: string;
  y?: string;
  k?: string;
  x5u?: string;
  x5c?: readonly string[];
  x5t?: string;
  'x5t#S256'?: string;
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
