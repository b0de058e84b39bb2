/**
 * How a verifier checks signatures, as one parameter: the keys imported once,
 * and the three operations the verify path needs. The core's scheme uses Web
 * Crypto; `payhook/node` passes one built on `node:crypto`.
 *
 * @module
 */
import { importKeys } from './key-import.js';
import type { KeyInput, KeyOptions } from './key-types.js';
import { couldBeSignature, withPublicNumbers } from './rsa-filter.js';
import { signatureBytes, verifyWithKeys } from './rsa-verify.js';

/** Internal: the signature operations of one verifier, over its imported keys. */
export interface SignatureScheme {
  /** The header decoded, or `null` when no key can have made it: not base64, or no key's length. */
  decode(signature: string): Uint8Array | null;
  /** `false` when the RSA public operation shows no key can have made `bytes`; `true` means "maybe". */
  couldBeSignature(bytes: Uint8Array): boolean;
  /** Whether any key verifies `bytes` over `canonical`'s UTF-8 bytes. Never rejects. */
  verify(canonical: string, bytes: Uint8Array): Promise<boolean>;
}

/** Internal: imports keys (throwing `INVALID_KEY` / `WEAK_KEY`) into a {@link SignatureScheme}. */
export type SchemeFactory = (keys: readonly KeyInput[], options: KeyOptions) => Promise<SignatureScheme>;

/**
 * Internal: the Web Crypto scheme every runtime has. Its early filter is a
 * BigInt modular power, which costs more than a small body's parse.
 *
 * @example
 * ```ts
 * import { webCryptoScheme } from './signature-scheme.js';
 *
 * declare const pem: string, header: string, canonical: string;
 * const scheme = await webCryptoScheme([pem], {});
 * const bytes = scheme.decode(header);
 * const ok = bytes !== null && (await scheme.verify(canonical, bytes));
 * ```
 */
export const webCryptoScheme: SchemeFactory = async (keys, options) => {
  const withNumbers = await withPublicNumbers(await importKeys(keys, options));
  return {
    decode: (signature) => signatureBytes(signature, withNumbers.keys),
    couldBeSignature: (bytes) => couldBeSignature(bytes, withNumbers),
    verify: (canonical, bytes) => verifyWithKeys(withNumbers.keys, canonical, bytes),
  };
};
