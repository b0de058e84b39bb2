/**
 * The signature scheme of `payhook/node`: the same checks as the core's Web
 * Crypto scheme, on `node:crypto`, which this entry can rely on.
 *
 * One RSA public operation per key and delivery does both jobs: its result,
 * the encoded message, first tells whether any key can have made the
 * signature (the PKCS #1 v1.5 padding, before the body is read), then decides
 * the signature by comparison with the encoding of the canonical string's
 * SHA-256, which is how RFC 8017 §8.2.2 defines RSASSA-PKCS1-v1_5
 * verification (the encoded message recomputed and compared in full).
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
  createHash(this: void, algorithm: string): { update(data: string, encoding: 'utf8'): { digest(): Uint8Array } };
}

const { constants, KeyObject, publicDecrypt, createHash } = untypedCrypto as NodeCryptoSlice;

// DER of the DigestInfo prefix for SHA-256 (RFC 8017 §9.2, note 1): what
// precedes the 32-byte hash at the end of every encoded message.
const SHA256_DIGEST_INFO = [
  0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20,
];
const T_LENGTH = SHA256_DIGEST_INFO.length + 32;

/** The RSA public operation on `bytes` under `key`: the encoded message, or `undefined` for a value at or above the modulus. */
function encodedMessage(key: NodeKey, bytes: Uint8Array): Uint8Array | undefined {
  try {
    return publicDecrypt({ key, padding: constants.RSA_NO_PADDING }, bytes);
  } catch {
    return undefined;
  }
}

/** Whether an encoded message opens with the padding every signature's has: 0x00 0x01 and at least eight 0xFF. */
function hasPkcs1Head(block: Uint8Array | undefined): boolean {
  if (block?.[0] !== 0x00 || block[1] !== 0x01) return false;
  for (let index = 2; index < 10; index++) if (block[index] !== 0xff) return false;
  return true;
}

/** Whether `block` is exactly 0x00 0x01 0xFF… 0x00, the SHA-256 DigestInfo, then `hash`. */
function encodes(block: Uint8Array, hash: Uint8Array): boolean {
  const start = block.length - T_LENGTH;
  if (!hasPkcs1Head(block) || block[start - 1] !== 0x00) return false;
  for (let index = 10; index < start - 1; index++) if (block[index] !== 0xff) return false;
  for (let index = 0; index < SHA256_DIGEST_INFO.length; index++) {
    if (block[start + index] !== SHA256_DIGEST_INFO[index]) return false;
  }
  for (let index = 0; index < 32; index++) if (block[block.length - 32 + index] !== hash[index]) return false;
  return true;
}

/**
 * Internal: keys checked and imported as the core imports them (so the same
 * keys are refused with the same codes), then held as `KeyObject`s. The
 * encoded messages of a signature are kept for it (a `WeakMap` keyed by the
 * decoded bytes, so nothing outlives the delivery) between the early filter
 * and the verification.
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
  const opened = new WeakMap<Uint8Array, (Uint8Array | undefined)[]>();
  const blocksOf = (bytes: Uint8Array): (Uint8Array | undefined)[] => {
    let blocks = opened.get(bytes);
    if (blocks === undefined) {
      blocks = held.map(({ key, length }) => (length === bytes.length ? encodedMessage(key, bytes) : undefined));
      opened.set(bytes, blocks);
    }
    return blocks;
  };
  return {
    decode: (signature) => signatureBytes(signature, imported),
    couldBeSignature: (bytes) => blocksOf(bytes).some(hasPkcs1Head),
    filterIsCheap: true,
    verify: (canonical, bytes) => {
      const hash = createHash('sha256').update(canonical, 'utf8').digest();
      return Promise.resolve(blocksOf(bytes).some((block) => block !== undefined && encodes(block, hash)));
    },
  };
};
