/**
 * The signature scheme of `payhook/node`: the same checks as the core's Web
 * Crypto scheme, on `node:crypto`, which this entry can rely on. Node's RSA
 * public operation is native, so the early filter costs about what one
 * verification does and runs before every body is read.
 *
 * @module
 */
// The root config keeps @types/node away from src/ (the core must not lean on
// it), so the slice of node:crypto used here is typed below, structurally.
// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- see above; the CLI's config, which has the types, needs no directive
// @ts-ignore
import * as untypedCrypto from 'node:crypto';
import { importKeys } from '../lib/key-import.js';
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

/** Whether the RSA public operation on `bytes` under `key` opens with the PKCS #1 v1.5 padding (RFC 8017 §9.2). */
function hasPkcs1Head(key: NodeKey, bytes: Uint8Array): boolean {
  try {
    const block = publicDecrypt({ key, padding: constants.RSA_NO_PADDING }, bytes);
    if (block[0] !== 0x00 || block[1] !== 0x01) return false;
    for (let index = 2; index < 10; index++) if (block[index] !== 0xff) return false;
    return true;
  } catch {
    return false; // a value at or above the modulus: no key can have made it
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
 * const ok = bytes !== null && scheme.couldBeSignature(bytes) && (await scheme.verify(canonical, bytes));
 * ```
 */
export const nodeCryptoScheme: SchemeFactory = async (keys, options) => {
  const imported = await importKeys(keys, options);
  const held = imported.map((key) => ({ key: KeyObject.from(key), length: signatureLength(key) }));
  return {
    decode: (signature) => signatureBytes(signature, imported),
    couldBeSignature: (bytes) => held.some(({ key, length }) => length === bytes.length && hasPkcs1Head(key, bytes)),
    filterIsCheap: true,
    verify: (canonical, bytes) => {
      const data = new TextEncoder().encode(canonical);
      return Promise.resolve(
        held.some(({ key, length }) => length === bytes.length && verify('sha256', data, key, bytes)),
      );
    },
  };
};
