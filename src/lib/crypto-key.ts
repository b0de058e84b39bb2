/**
 * What payhook takes for a `CryptoKey` (public keys and the testing
 * helpers' private keys alike). Internal.
 *
 * @module
 */
import { misuse } from './misuse.js';

// Web IDL gives a CryptoKey, from any realm, this class string; workerd gives it only from compatibility date
// 2024-09-26 (before, "[object Object]"), so this runtime's own CryptoKey counts by `instanceof` too. An object
// merely shaped like one is read as a JWK (and refused): taken as a key, it passed every check here and then
// verified nothing.
export const isCryptoKey = (value: object): value is CryptoKey =>
  Object.prototype.toString.call(value) === '[object CryptoKey]' ||
  (typeof CryptoKey === 'function' && value instanceof CryptoKey);

/** Web Crypto's `subtle`, or `INVALID_ARGUMENT` (a browser page outside a secure context has none). */
export function webCrypto(): SubtleCrypto {
  const subtle = (globalThis as { crypto?: Crypto }).crypto?.subtle;
  if (!subtle) {
    throw misuse(
      "No Web Crypto (crypto.subtle) in this runtime: a page outside a secure context, or Jest's jsdom (use the node environment).",
    );
  }
  return subtle;
}
