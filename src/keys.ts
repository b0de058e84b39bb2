import { PayhookError } from './errors.js';
import { pemToSpki } from './lib/pem.js';

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

const ALGORITHM = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;
const MIN_MODULUS_BITS = 2048;

/** How many distinct PEM strings stay imported at once. */
const PEM_CACHE_SIZE = 16;
const pemCache = new Map<string, Promise<CryptoKey>>();
const jwkCache = new WeakMap<object, Promise<CryptoKey>>();

function subtle(): SubtleCrypto {
  const api = (globalThis as { crypto?: Crypto }).crypto?.subtle;
  if (!api) {
    throw new PayhookError(
      'INVALID_ARGUMENT',
      'Web Crypto (globalThis.crypto.subtle) is not available: payhook needs Node ≥ 20, Deno, Bun, workerd or a browser in a secure context.',
    );
  }
  return api;
}

function isCryptoKey(value: object): value is CryptoKey {
  return (
    Object.prototype.toString.call(value) === '[object CryptoKey]' ||
    ('algorithm' in value && 'usages' in value && 'type' in value && !('kty' in value))
  );
}

async function importSpki(spki: Uint8Array): Promise<CryptoKey> {
  try {
    return await subtle().importKey('spki', spki as BufferSource, ALGORITHM, false, ['verify']);
  } catch (cause) {
    throw new PayhookError('INVALID_KEY', 'The PEM key cannot be imported as an RSA public key (is it an EC or Ed25519 key?).', { cause });
  }
}

async function importJwk(jwk: RsaJsonWebKey): Promise<CryptoKey> {
  if (jwk.kty !== 'RSA') {
    throw new PayhookError('INVALID_KEY', `The JSON Web Key has kty ${JSON.stringify(jwk.kty)}; an RSA key (kty "RSA") is needed.`);
  }
  const { d: _private, key_ops: _ops, use: _use, ...publicPart } = jwk as RsaJsonWebKey & { d?: unknown; key_ops?: unknown; use?: unknown };
  if (_private !== undefined) {
    throw new PayhookError('INVALID_KEY', 'The JSON Web Key holds a private key (member "d"); give the public key only.');
  }
  try {
    return await subtle().importKey('jwk', publicPart as JsonWebKey, ALGORITHM, false, ['verify']);
  } catch (cause) {
    throw new PayhookError('INVALID_KEY', 'The JSON Web Key cannot be imported as an RSA public key for RS256.', { cause });
  }
}

function checkCryptoKey(key: CryptoKey): CryptoKey {
  const algorithm = key.algorithm as RsaHashedKeyAlgorithm;
  if (
    key.type !== 'public' ||
    algorithm.name !== ALGORITHM.name ||
    algorithm.hash?.name !== ALGORITHM.hash ||
    !key.usages.includes('verify')
  ) {
    throw new PayhookError(
      'INVALID_KEY',
      `The CryptoKey must be a public RSASSA-PKCS1-v1_5 key with SHA-256 and the "verify" usage (got a ${key.type} ${algorithm.name} key).`,
    );
  }
  return key;
}

function remember<K>(cache: Map<K, Promise<CryptoKey>>, key: K, value: Promise<CryptoKey>): Promise<CryptoKey> {
  if (cache.size >= PEM_CACHE_SIZE) cache.delete(cache.keys().next().value as K);
  cache.set(key, value);
  // A key that fails to import is not remembered: the next call tries again.
  value.catch(() => cache.delete(key));
  return value;
}

function importCached(input: KeyInput): Promise<CryptoKey> {
  if (typeof input === 'string') {
    const hit = pemCache.get(input);
    if (hit) return hit;
    let spki: Uint8Array;
    try {
      spki = pemToSpki(input);
    } catch (error) {
      return Promise.reject(error);
    }
    return remember(pemCache, input, importSpki(spki));
  }
  if (typeof input !== 'object' || input === null) {
    return Promise.reject(
      new PayhookError('INVALID_KEY', `A public key must be a PEM string, a JSON Web Key or a CryptoKey, not ${input === null ? 'null' : typeof input}.`),
    );
  }
  if (isCryptoKey(input)) {
    try {
      return Promise.resolve(checkCryptoKey(input));
    } catch (error) {
      return Promise.reject(error);
    }
  }
  const hit = jwkCache.get(input);
  if (hit) return hit;
  const imported = importJwk(input as RsaJsonWebKey);
  jwkCache.set(input, imported);
  imported.catch(() => jwkCache.delete(input));
  return imported;
}

function checkStrength(key: CryptoKey, options: KeyOptions | undefined): CryptoKey {
  const bits = (key.algorithm as RsaHashedKeyAlgorithm).modulusLength;
  if (bits < MIN_MODULUS_BITS && options?.allowWeakKeys !== true) {
    throw new PayhookError(
      'WEAK_KEY',
      `The RSA key has ${bits} bits; at least ${MIN_MODULUS_BITS} are required. Pass { allowWeakKeys: true } only for legacy test keys.`,
    );
  }
  return key;
}

/**
 * Imports a public key for verifying the service's signatures
 * (RSASSA-PKCS1-v1_5 with SHA-256). PEM strings are imported once and kept in
 * a small bounded cache (the 16 most recently added), so passing the same PEM
 * on every request costs one `Map` lookup; JSON Web Keys are cached per
 * object. {@link verifySignature} and {@link verifyWebhook} call this for you.
 *
 * @throws {@link PayhookError} `INVALID_KEY` when the key cannot be read or is
 * not RSA; `WEAK_KEY` when it is shorter than 2048 bits and
 * `allowWeakKeys` is not set.
 *
 * @example
 * ```ts
 * import { importPublicKey, PRODUCTION_PUBLIC_KEY, verifySignature } from 'payhook';
 *
 * const key = await importPublicKey(PRODUCTION_PUBLIC_KEY);
 * const ok = await verifySignature(canonical, signatureHeader, key);
 * ```
 */
export async function importPublicKey(input: KeyInput, options?: KeyOptions): Promise<CryptoKeyLike> {
  return checkStrength(await importCached(input), options);
}

/** Internal: the imported `CryptoKey` objects for a key list, in order. */
export async function importVerificationKeys(
  inputs: KeyInput | readonly KeyInput[],
  options: KeyOptions | undefined,
): Promise<CryptoKey[]> {
  const list = Array.isArray(inputs) ? (inputs as readonly KeyInput[]) : [inputs as KeyInput];
  if (list.length === 0) {
    throw new PayhookError('INVALID_ARGUMENT', 'No public key was given: pass PRODUCTION_PUBLIC_KEY, BETA_PUBLIC_KEY or your own.');
  }
  if (list.length === 1) return [checkStrength(await importCached(list[0] as KeyInput), options)];
  const keys = await Promise.all(list.map(importCached));
  return keys.map((key) => checkStrength(key, options));
}

/**
 * Forgets every imported PEM key. Only needed by tests that count imports, or
 * after rotating keys in a long-lived process that passed many distinct PEMs.
 *
 * @example
 * ```ts
 * import { clearKeyCache } from 'payhook';
 *
 * clearKeyCache();
 * ```
 */
export function clearKeyCache(): void {
  pemCache.clear();
}
