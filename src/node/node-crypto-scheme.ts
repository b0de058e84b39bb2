/**
 * The signature scheme of `payhook/node`: the same checks as the core's Web
 * Crypto scheme, on `node:crypto`, which this entry can rely on.
 *
 * The verification is node:crypto's synchronous `verify` with a `KeyObject`
 * imported once per key: none of Web Crypto's per-call wrapping is paid, and
 * no hand-off to libuv's thread pool and back, which in same-run benchmarks
 * cost more CPU per delivery than the 30–45 µs of event loop it freed. The
 * early filter (can any key have made this signature?) is one more RSA
 * public operation, so, as in the core, it runs before the body is read only
 * for a large body, and otherwise only when reading what was signed fails.
 *
 * @module
 */
// The root config keeps @types/node away from src/ (the core must not lean on
// it), so the slice of node:crypto used here is typed below, structurally.
// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- see above; the CLI's config, which has the types, needs no directive
// @ts-ignore
import * as untypedCrypto from 'node:crypto';
import { importKeys } from '../lib/key-import.js';
import { withPublicNumbers } from '../lib/rsa-filter.js';
import { signatureLength, signatureBytes } from '../lib/rsa-verify.js';
import type { SchemeFactory } from '../lib/signature-scheme.js';

/** A `KeyObject` as far as this file handles it. */
type NodeKey = object;

interface NodeCryptoSlice {
  readonly constants: { readonly RSA_NO_PADDING: number };
  readonly KeyObject: { from(key: CryptoKey): NodeKey };
  publicDecrypt(this: void, key: { key: NodeKey; padding: number }, buffer: Uint8Array): Uint8Array;
  verify(this: void, algorithm: string, data: Uint8Array, key: NodeKey, signature: Uint8Array): boolean;
}

const { constants, KeyObject, publicDecrypt, verify } = untypedCrypto as NodeCryptoSlice;
const encoder = new TextEncoder();

/**
 * Whether `bytes` under `key` opens as every PKCS #1 v1.5 signature's
 * encoded message does: 0x00 0x01 and at least eight 0xFF (RFC 8017 §9.2).
 */
function opensAsSignature(key: NodeKey, bytes: Uint8Array): boolean {
  let block: Uint8Array;
  try {
    block = publicDecrypt({ key, padding: constants.RSA_NO_PADDING }, bytes);
  } catch {
    return false; // a value at or above the modulus
  }
  if (block[0] !== 0x00 || block[1] !== 0x01) return false;
  for (let index = 2; index < 10; index++) if (block[index] !== 0xff) return false;
  return true;
}

/** node:crypto's RSASSA-PKCS1-v1_5 / SHA-256 check; never throws. */
function verifies(key: NodeKey, data: Uint8Array, bytes: Uint8Array): boolean {
  try {
    return verify('sha256', data, key, bytes);
  } catch {
    return false; // arguments node:crypto refuses up front: no signature of ours
  }
}

/**
 * Internal: keys checked and imported as the core imports them (so the same
 * keys are refused with the same codes), then held as `KeyObject`s.
 *
 * @example
 * ```ts
 * import { nodeCryptoScheme } from './node-crypto-scheme.js';
 *
 * declare const pem: string, header: string, canonical: string;
 * const scheme = await nodeCryptoScheme([pem], {});
 * const bytes = scheme.decode(header);
 * const ok = bytes !== null && (await scheme.verify(canonical, bytes));
 * ```
 */
export const nodeCryptoScheme: SchemeFactory = async (keys, options) => {
  const imported = await importKeys(keys, options);
  // The early filter checks only the keys the core's checks (those whose
  // numbers Web Crypto gives: not a non-extractable CryptoKey), so that both
  // schemes report the same code for every request (CONTRACT.md §4).
  const { numbers } = await withPublicNumbers(imported);
  const held = imported.map((key, index) => ({
    key: KeyObject.from(key),
    length: signatureLength(key),
    early: numbers[index] !== undefined,
  }));
  const sized = (bytes: Uint8Array) => held.filter(({ length }) => length === bytes.length);
  return {
    decode: (signature) => signatureBytes(signature, imported),
    couldBeSignature: (bytes) => sized(bytes).some(({ key, early }) => !early || opensAsSignature(key, bytes)),
    verify: (canonical, bytes) => {
      const data = encoder.encode(canonical);
      return Promise.resolve(sized(bytes).some(({ key }) => verifies(key, data, bytes)));
    },
  };
};
