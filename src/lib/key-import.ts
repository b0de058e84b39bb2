import { PayhookError } from '../errors.js';
import type { KeyInput, KeyOptions, RsaJsonWebKey } from '../keys.js';
import { pemToSpki } from './pem.js';

// Internal: turns KeyInput values into checked Web Crypto keys, and keeps the
// bounded caches that make a PEM or JWK given on every request cost one
// lookup. The public face of this is keys.ts (importPublicKey, clearKeyCache).

const ALGORITHM = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;
const MIN_MODULUS_BITS = 2048;

/**
 * How many distinct PEM strings stay imported at once (least recently used goes first).
 *
 * @example
 * ```ts
 * import { PEM_CACHE_SIZE } from './key-import.js';
 *
 * console.log(PEM_CACHE_SIZE); // 16
 * ```
 */
export const PEM_CACHE_SIZE = 16;
const pemCache = new Map<string, Promise<CryptoKey>>();
/** The PEM keys of `pemCache` whose import has finished, for the synchronous fast path. */
const pemKeys = new Map<string, CryptoKey>();
let jwkCache = new WeakMap<object, Promise<CryptoKey>>();

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
    if (cause instanceof PayhookError) throw cause;
    throw new PayhookError('INVALID_KEY', 'The PEM key cannot be imported as an RSA public key (is it an EC or Ed25519 key?).', { cause });
  }
}

async function importJwk(jwk: RsaJsonWebKey): Promise<CryptoKey> {
  if (jwk.kty !== 'RSA') {
    throw new PayhookError('INVALID_KEY', `The JSON Web Key has kty ${JSON.stringify(jwk.kty) ?? 'undefined'}; an RSA key (kty "RSA") is needed.`);
  }
  const { d: _private, key_ops: _ops, use: _use, ...publicPart } = jwk as RsaJsonWebKey & { d?: unknown; key_ops?: unknown; use?: unknown };
  if (_private !== undefined) {
    throw new PayhookError('INVALID_KEY', 'The JSON Web Key holds a private key (member "d"); give the public key only.');
  }
  try {
    return await subtle().importKey('jwk', publicPart as JsonWebKey, ALGORITHM, false, ['verify']);
  } catch (cause) {
    if (cause instanceof PayhookError) throw cause;
    throw new PayhookError('INVALID_KEY', 'The JSON Web Key cannot be imported as an RSA public key for RS256.', { cause });
  }
}

function checkCryptoKey(key: CryptoKey): CryptoKey {
  const algorithm = key.algorithm as Partial<RsaHashedKeyAlgorithm> | undefined;
  if (
    key.type !== 'public' ||
    algorithm?.name !== ALGORITHM.name ||
    algorithm.hash?.name !== ALGORITHM.hash ||
    !Array.isArray(key.usages) ||
    !key.usages.includes('verify')
  ) {
    throw new PayhookError(
      'INVALID_KEY',
      `The CryptoKey must be a public RSASSA-PKCS1-v1_5 key with SHA-256 and the "verify" usage (got a ${String(key.type)} ${String(algorithm?.name)} key).`,
    );
  }
  return key;
}

function rememberPem(pem: string, value: Promise<CryptoKey>): Promise<CryptoKey> {
  if (pemCache.size >= PEM_CACHE_SIZE) {
    const oldest = pemCache.keys().next().value as string;
    pemCache.delete(oldest);
    pemKeys.delete(oldest);
  }
  pemCache.set(pem, value);
  value.then((key) => {
    if (pemCache.get(pem) === value) pemKeys.set(pem, key);
  }, () => undefined);
  // A key that fails to import is not remembered: the next call tries again.
  // Only this very promise is dropped, never a newer entry for the same PEM.
  value.catch(() => {
    if (pemCache.get(pem) === value) pemCache.delete(pem);
  });
  return value;
}

function importCached(input: KeyInput): Promise<CryptoKey> {
  if (typeof input === 'string') {
    const hit = pemCache.get(input);
    if (hit) {
      // Least recently used eviction: a hit moves the PEM to the back.
      pemCache.delete(input);
      pemCache.set(input, hit);
      return hit;
    }
    let spki: Uint8Array;
    try {
      spki = pemToSpki(input);
    } catch (error) {
      return Promise.reject(error);
    }
    return rememberPem(input, importSpki(spki));
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
  imported.catch(() => {
    if (jwkCache.get(input) === imported) jwkCache.delete(input);
  });
  return imported;
}

function checkStrength(key: CryptoKey, options: KeyOptions | undefined): CryptoKey {
  const bits = (key.algorithm as Partial<RsaHashedKeyAlgorithm>).modulusLength;
  if (typeof bits !== 'number' || !Number.isInteger(bits) || bits <= 0) {
    throw new PayhookError('INVALID_KEY', 'The key does not say its RSA modulus length; it is not a usable RSA CryptoKey.');
  }
  if (bits < MIN_MODULUS_BITS && options?.allowWeakKeys !== true) {
    throw new PayhookError(
      'WEAK_KEY',
      `The RSA key has ${bits} bits; at least ${MIN_MODULUS_BITS} are required. Pass { allowWeakKeys: true } only for legacy test keys.`,
    );
  }
  return key;
}

function cachedKey(input: KeyInput): CryptoKey | undefined {
  if (typeof input === 'string') {
    const key = pemKeys.get(input);
    if (key !== undefined) {
      // Keep the least-recently-used order that importCached keeps.
      const entry = pemCache.get(input) as Promise<CryptoKey>;
      pemCache.delete(input);
      pemCache.set(input, entry);
    }
    return key;
  }
  if (typeof input === 'object' && input !== null && isCryptoKey(input)) {
    try {
      return checkCryptoKey(input);
    } catch {
      return undefined; // the awaited path reports it, in its order
    }
  }
  return undefined;
}

/**
 * The checked keys without waiting, when none needs an import (PEMs already
 * imported, CryptoKeys): the per-delivery fast path. `undefined` means "use
 * importVerificationKeys" (a miss, a JWK, an unusable key, an empty list); a
 * key too weak throws as importVerificationKeys does.
 *
 * @example
 * ```ts
 * import { cachedVerificationKeys, importVerificationKeys } from './key-import.js';
 *
 * declare const pem: string;
 * const keys = cachedVerificationKeys(pem, undefined) ?? (await importVerificationKeys(pem, undefined));
 * ```
 */
export function cachedVerificationKeys(
  inputs: KeyInput | readonly KeyInput[] | null | undefined,
  options: KeyOptions | undefined,
): CryptoKey[] | undefined {
  if (!Array.isArray(inputs)) {
    const key = inputs === undefined || inputs === null ? undefined : cachedKey(inputs as KeyInput);
    return key === undefined ? undefined : [checkStrength(key, options)];
  }
  const list = inputs as readonly KeyInput[];
  if (list.length === 0) return undefined;
  const keys: CryptoKey[] = [];
  for (const input of list) {
    const key = cachedKey(input);
    if (key === undefined) return undefined;
    keys.push(key);
  }
  return keys.map((key) => checkStrength(key, options));
}

/**
 * One key, imported (or taken from the cache) and checked for strength.
 *
 * @example
 * ```ts
 * import { importVerificationKey } from './key-import.js';
 *
 * declare const pem: string;
 * const key: CryptoKey = await importVerificationKey(pem, { allowWeakKeys: false });
 * ```
 */
export async function importVerificationKey(input: KeyInput, options: KeyOptions | undefined): Promise<CryptoKey> {
  return checkStrength(await importCached(input), options);
}

/**
 * The imported `CryptoKey` objects for a key list, in order. Throws
 * `INVALID_ARGUMENT` for no key or an empty list, `INVALID_KEY`/`WEAK_KEY` when
 * any key is unusable.
 *
 * @example
 * ```ts
 * import { importVerificationKeys } from './key-import.js';
 *
 * declare const production: string, beta: string;
 * const keys: CryptoKey[] = await importVerificationKeys([production, beta], undefined);
 * ```
 */
export async function importVerificationKeys(
  inputs: KeyInput | readonly KeyInput[] | null | undefined,
  options: KeyOptions | undefined,
): Promise<CryptoKey[]> {
  if (inputs === undefined || inputs === null) {
    throw new PayhookError('INVALID_ARGUMENT', 'No public key was given: pass PRODUCTION_PUBLIC_KEY, BETA_PUBLIC_KEY or your own.');
  }
  const list = Array.isArray(inputs) ? (inputs as readonly KeyInput[]) : [inputs as KeyInput];
  if (list.length === 0) {
    throw new PayhookError('INVALID_ARGUMENT', 'The list of public keys is empty: pass PRODUCTION_PUBLIC_KEY, BETA_PUBLIC_KEY or your own.');
  }
  if (list.length === 1) return [checkStrength(await importCached(list[0] as KeyInput), options)];
  const keys = await Promise.all(list.map((input) => importCached(input)));
  return keys.map((key) => checkStrength(key, options));
}

/**
 * Forgets every imported PEM and JSON Web Key.
 *
 * @example
 * ```ts
 * import { clearImportedKeys } from './key-import.js';
 *
 * clearImportedKeys();
 * ```
 */
export function clearImportedKeys(): void {
  pemCache.clear();
  pemKeys.clear();
  jwkCache = new WeakMap();
}
