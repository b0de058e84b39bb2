import { PayhookError } from '../errors.js';
import type { CryptoKeyLike, RsaJsonWebKey } from '../keys.js';
import { decodeBase64Lenient } from '../lib/base64.js';
import { isCryptoKey, webCrypto } from '../lib/crypto-key.js';

/**
 * A private key in any form the testing helpers read: a PEM string (PKCS#8
 * `BEGIN PRIVATE KEY` or PKCS#1 `BEGIN RSA PRIVATE KEY`), a JSON Web Key with
 * its private members, or a `CryptoKey` imported for RSASSA-PKCS1-v1_5 with
 * SHA-256 and the `sign` usage.
 *
 * @example
 * ```ts
 * import { TEST_KEY_PAIR, type PrivateKeyInput } from 'payhook/testing';
 *
 * const key: PrivateKeyInput = TEST_KEY_PAIR.privateKey;
 * ```
 */
export type PrivateKeyInput = string | RsaJsonWebKey | CryptoKeyLike;

const ALGORITHM = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;

/** DER of `INTEGER 0` then AlgorithmIdentifier { rsaEncryption, NULL }. */
const PKCS8_PREFIX = [
  0x02, 0x01, 0x00, 0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00,
];

function derLength(length: number): number[] {
  if (length < 0x80) return [length];
  const bytes: number[] = [];
  for (let n = length; n > 0; n >>= 8) bytes.unshift(n & 0xff);
  return [0x80 | bytes.length, ...bytes];
}

/** Wraps a PKCS#1 `RSAPrivateKey` in a PKCS#8 `PrivateKeyInfo`, the format Web Crypto imports. */
function pkcs1ToPkcs8(pkcs1: Uint8Array): Uint8Array {
  const octetString = [0x04, ...derLength(pkcs1.length)];
  const bodyLength = PKCS8_PREFIX.length + octetString.length + pkcs1.length;
  const head = [0x30, ...derLength(bodyLength), ...PKCS8_PREFIX, ...octetString];
  const out = new Uint8Array(head.length + pkcs1.length);
  out.set(head, 0);
  out.set(pkcs1, head.length);
  return out;
}

function pemToPkcs8(pem: string): Uint8Array {
  const match = /-----BEGIN (RSA )?PRIVATE KEY-----([\s\S]*?)-----END \1PRIVATE KEY-----/.exec(pem);
  if (!match) {
    throw new PayhookError(
      'INVALID_KEY',
      'The private key is not a PEM private key: expected a "-----BEGIN PRIVATE KEY-----" (PKCS#8) or "-----BEGIN RSA PRIVATE KEY-----" (PKCS#1) block.',
    );
  }
  const body = (match[2] ?? '').replace(/\s+/g, '');
  const der = /^[A-Za-z0-9+/]+={0,2}$/.test(body) ? decodeBase64Lenient(body) : null;
  if (!der) throw new PayhookError('INVALID_KEY', 'The PEM private key does not hold valid base64.');
  return match[1] ? pkcs1ToPkcs8(der) : der;
}

const CACHE_SIZE = 8;
const cache = new Map<string, Promise<CryptoKey>>();

async function importPem(pem: string): Promise<CryptoKey> {
  const der = pemToPkcs8(pem);
  // Outside the try: a runtime without Web Crypto is not the key's fault.
  const subtle = webCrypto();
  try {
    return await subtle.importKey('pkcs8', der as BufferSource, ALGORITHM, false, ['sign']);
  } catch (cause) {
    throw new PayhookError('INVALID_KEY', 'The PEM private key cannot be imported as an RSA signing key.', { cause });
  }
}

/** Internal: a signing `CryptoKey` for any {@link PrivateKeyInput}; PEM imports are cached (bounded). */
export async function importPrivateKey(input: PrivateKeyInput): Promise<CryptoKey> {
  if (typeof input === 'string') {
    let hit = cache.get(input);
    if (!hit) {
      if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      hit = importPem(input);
      cache.set(input, hit);
      hit.catch(() => cache.delete(input));
    }
    return hit;
  }
  const notAKey = 'A private key must be a PEM string, a JSON Web Key or a CryptoKey.';
  if (typeof input !== 'object' || input === null) throw new PayhookError('INVALID_KEY', notAKey);
  if (!isCryptoKey(input)) {
    const jwk = input as RsaJsonWebKey;
    // An object with no JWK member at all (a node:crypto KeyObject, say) is not told what a JWK lacks.
    if (jwk.kty === undefined && jwk.n === undefined && jwk.d === undefined) {
      throw new PayhookError(
        'INVALID_KEY',
        `${notAKey} (A node:crypto KeyObject: pass its PEM, key.export({ type: 'pkcs8', format: 'pem' }).)`,
      );
    }
    if (jwk.kty !== 'RSA' || typeof jwk.d !== 'string') {
      throw new PayhookError('INVALID_KEY', 'The JSON Web Key must be an RSA private key (kty "RSA" with member "d").');
    }
    const { key_ops: _ops, alg: _alg, use: _use, ...members } = jwk;
    const subtle = webCrypto();
    try {
      return await subtle.importKey('jwk', members as JsonWebKey, ALGORITHM, false, ['sign']);
    } catch (cause) {
      throw new PayhookError('INVALID_KEY', 'The JSON Web Key cannot be imported as an RSA signing key.', { cause });
    }
  }
  const key = input;
  // Another hash signs without error, but the service's signatures (and every receiver) use SHA-256.
  const algorithm = key.algorithm as Partial<RsaHashedKeyAlgorithm> | undefined;
  if (
    key.type !== 'private' ||
    algorithm?.name !== ALGORITHM.name ||
    algorithm.hash?.name !== ALGORITHM.hash ||
    !Array.prototype.includes.call(key.usages ?? [], 'sign')
  ) {
    throw new PayhookError(
      'INVALID_KEY',
      'The CryptoKey must be a private RSASSA-PKCS1-v1_5 key with hash SHA-256 and the "sign" usage.',
    );
  }
  return key;
}
