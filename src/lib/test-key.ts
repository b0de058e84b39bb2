// Whether a receiver's keys hold payhook's published test key (its private
// half ships in payhook/testing, so a receiver that accepts it accepts a
// delivery anyone signs), the beta (sandbox) key, or the production key,
// however each was spelled: beside the production key the other two are
// refused. Checked at creation, synchronously, so the refusal or warning
// comes before any delivery: from the key's text (a PEM's DER bytes, a JSON
// Web Key's modulus) by a 32-bit FNV-1a hash, which is enough to tell one
// known key from a merchant's (a collision costs one needless warning, or a
// merchant's own key refused beside a known one). A CryptoKey cannot be read
// without awaiting, and is not looked at. Internal.
import { decodeBase64Lenient } from './base64.js';
import { pemToSpki } from './pem.js';
import type { KeyInput } from './key-types.js';

/** FNV-1a of a key's SubjectPublicKeyInfo (DER), and of its modulus (the JWK `n`, decoded, no leading zero). */
type KeyHashes = readonly [spki: number, modulus: number];
const KNOWN_KEYS: Readonly<Record<'test' | 'production' | 'beta', KeyHashes>> = {
  test: [0x35ccbc3a, 0x5d3cf510],
  production: [0x3cd25b59, 0xb9962345],
  beta: [0x16c4dc00, 0x290943c2],
};

function fnv1a(bytes: Uint8Array): number {
  let hash = 0x811c9dc5;
  for (const byte of bytes) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return hash;
}

function isKey(key: unknown, [spki, modulusHash]: KeyHashes): boolean {
  try {
    if (typeof key === 'string') return fnv1a(pemToSpki(key)) === spki;
    // The bytes, not the text: a JWK's `n` padded, wrapped, in standard base64 or with a leading zero byte imports alike.
    const n = (key as { n?: unknown } | null)?.n;
    const modulus = typeof n === 'string' ? decodeBase64Lenient(n.replace(/\s+/g, '').replace(/=+$/, '')) : null;
    return modulus !== null && fnv1a(modulus.subarray(modulus.findIndex((byte) => byte !== 0))) === modulusHash;
  } catch {
    return false; // not a key at all: the import reports it
  }
}

/**
 * Internal: whether `keys` hold the `known` key (payhook's published test key, the service's production or beta
 * key), as a PEM or a JSON Web Key.
 */
export function holdsKey(keys: KeyInput | readonly KeyInput[] | undefined, known: keyof typeof KNOWN_KEYS): boolean {
  return [keys].flat().some((key) => isKey(key, KNOWN_KEYS[known]));
}
