import { isCryptoKey, webCrypto } from './crypto-key.js';
import { PayhookError } from './errors.js';
import type { KeyInput, KeyOptions, RsaJsonWebKey } from './key-types.js';
import { bytesOf, isBytes } from './json-body.js';
import { pemToSpki } from './pem.js';
import { misuse } from './misuse.js';

// Internal: turns KeyInput values into checked Web Crypto keys, and keeps the
// bounded caches that make a PEM or JWK given on every request cost one
// lookup. The public face of this is keys.ts (importPublicKey, clearKeyCache).
//
// One cache entry per key, first the import's promise, then (once it
// settles) the key itself.

const ALGORITHM = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;
const MIN_MODULUS_BITS = 2048;

type Entry = Promise<CryptoKey>;

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
const pemCache = new Map<string, Entry>();
let jwkCache = new WeakMap<object, Entry>();

const invalidKey = (message: string, cause?: unknown): PayhookError =>
  new PayhookError('INVALID_KEY', message, { cause });

/** Remembers `promise` under `key`; forgets a failed import, so the next call tries again. */
function remember<K extends object | string>(
  cache: { get(key: K): Entry | undefined; set(key: K, value: Entry): unknown; delete(key: K): unknown },
  key: K,
  promise: Promise<CryptoKey>,
): Promise<CryptoKey> {
  cache.set(key, promise);
  // Only this very promise is dropped, never a newer entry for the same key.
  promise.catch(() => cache.get(key) === promise && cache.delete(key));
  return promise;
}

const NOT_RSA_JWK = 'The JSON Web Key is not an RS256 public key.';
const NOT_RSASSA_KEY = 'The CryptoKey is not a public RSASSA-PKCS1-v1_5 SHA-256 key for "verify".';

async function importKey(format: 'spki' | 'jwk', data: Uint8Array | RsaJsonWebKey): Promise<CryptoKey> {
  const subtle = webCrypto();
  try {
    // Extractable (a public key holds nothing secret) so that the verifier
    // can read its modulus: see withPublicNumbers in rsa-verify.ts.
    return await subtle.importKey(format as 'jwk', data as JsonWebKey, ALGORITHM, true, ['verify']);
  } catch (cause) {
    throw invalidKey(format === 'jwk' ? NOT_RSA_JWK : 'The PEM key is not an RSA public key.', cause);
  }
}

function importJwk(jwk: RsaJsonWebKey): Promise<CryptoKey> {
  const { d, key_ops: ops, use, ext: _ext, ...publicPart } = jwk;
  // Refused here: a private key ("d"), which some runtimes would import, and a key its own `alg`, `use` or
  // `key_ops` put to another use (Web Crypto's JWK rules, which runtimes apply unevenly: Node imports "PS256").
  // `ext: false` would contradict the extractable import below (a public key holds nothing secret).
  return jwk.kty === 'RSA' &&
    d === undefined &&
    (jwk.alg ?? 'RS256') === 'RS256' &&
    (use ?? 'sig') === 'sig' &&
    [ops ?? 'verify'].flat().includes('verify')
    ? importKey('jwk', publicPart)
    : Promise.reject(invalidKey(NOT_RSA_JWK));
}

/**
 * The key for one input: a CryptoKey as it is, a PEM or JWK through its
 * cache. Throws `INVALID_KEY` at once for what can be refused without Web Crypto.
 */
function lookup(input: KeyInput): CryptoKey | Promise<CryptoKey> {
  if (typeof input === 'string') {
    let entry = pemCache.get(input);
    if (entry === undefined) {
      entry = importKey('spki', pemToSpki(input));
      if (pemCache.size >= PEM_CACHE_SIZE) pemCache.delete(pemCache.keys().next().value as string);
      return remember(pemCache, input, entry);
    }
    // Least recently used eviction: a hit moves the PEM to the back.
    pemCache.delete(input);
    pemCache.set(input, entry);
    return entry;
  }
  if (typeof input !== 'object' || input === null) {
    throw invalidKey('A public key must be a PEM string, a JSON Web Key or a CryptoKey.');
  }
  if (isCryptoKey(input)) {
    const algorithm = input.algorithm as Partial<RsaHashedKeyAlgorithm> | undefined;
    if (
      input.type !== 'public' ||
      algorithm?.name !== ALGORITHM.name ||
      algorithm.hash?.name !== ALGORITHM.hash ||
      !Array.isArray(input.usages) ||
      !input.usages.includes('verify')
    ) {
      throw invalidKey(NOT_RSASSA_KEY);
    }
    return input;
  }
  return jwkCache.get(input) ?? remember(jwkCache, input, importJwk(input as RsaJsonWebKey));
}

function checkStrength(key: CryptoKey, options: KeyOptions | undefined): CryptoKey {
  const { modulusLength: bits, publicExponent } = key.algorithm as Partial<RsaHashedKeyAlgorithm>;
  if (!Number.isInteger(bits) || (bits as number) <= 0) {
    throw invalidKey('The key has no RSA modulus length.');
  }
  // e = 1 makes the padded hash itself a valid signature: anyone could sign. No real RSA key has e < 3 or an even e.
  // A Uint8Array, but an ArrayBuffer in Workers with a compatibility date before 2023-12-01; anything else is none.
  let exponent = 0n;
  for (const byte of isBytes(publicExponent) ? bytesOf(publicExponent) : []) exponent = (exponent << 8n) | BigInt(byte);
  if (exponent < 3n || exponent % 2n === 0n) {
    throw invalidKey(`The RSA key's public exponent is ${exponent}; a real key has an odd one of at least 3 (65537).`);
  }
  if ((bits as number) < MIN_MODULUS_BITS && options?.allowWeakKeys !== true) {
    throw new PayhookError(
      'WEAK_KEY',
      `The RSA key has ${bits} bits; ${MIN_MODULUS_BITS} are required (allowWeakKeys: true for legacy test keys).`,
    );
  }
  return key;
}

/**
 * The imported, checked keys for one key or a list, in order. PEM strings and
 * JSON Web Keys already imported come from the caches, so a caller that
 * passes the same keys on every request does no import work after the first.
 * Rejects `INVALID_ARGUMENT` for no key or an empty list, `INVALID_KEY` /
 * `WEAK_KEY` when a key is unusable.
 *
 * @example
 * ```ts
 * import { importKeys } from './key-import.js';
 *
 * declare const production: string, beta: string;
 * const keys: CryptoKey[] = await importKeys([production, beta], { allowWeakKeys: false });
 * ```
 */
export async function importKeys(
  inputs: KeyInput | readonly KeyInput[] | null | undefined,
  options: KeyOptions | undefined,
): Promise<CryptoKey[]> {
  const list: readonly KeyInput[] = inputs === undefined || inputs === null ? [] : [inputs].flat();
  if (list.length === 0) {
    throw misuse('No public key was given (PRODUCTION_PUBLIC_KEY, BETA_PUBLIC_KEY or your own).');
  }
  const keys = await Promise.all(list.map(async (input) => lookup(input)));
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
  jwkCache = new WeakMap();
}
