// The synchronous key look-up that verifySignature uses on every delivery
// once a key is imported: it must behave exactly like the awaited path
// (same keys, same errors, same cache bounds), only without the await.
import { createPublicKey, createSign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isPayhookError } from '../../src/errors.js';
import { clearKeyCache, importPublicKey, type RsaJsonWebKey } from '../../src/keys.js';
import { PEM_CACHE_SIZE, verificationKeys } from '../../src/lib/key-import.js';
import { verifySignature } from '../../src/signature.js';
import { rejectionCodeOf, spelling } from '../helpers/codes.js';

const keys = JSON.parse(readFileSync(new URL('../fixtures/keys.json', import.meta.url), 'utf8')) as Record<
  string,
  { publicKeyPem: string; privateKeyPem?: string }
>;
const pem = (name: string): string => keys[name]!.publicKeyPem;
const subtle = globalThis.crypto.subtle;
const canonical = 'post\n/webhooks/payments\nhost:shop.example.kg&x-api-timestamp:1763712000000\n{"amount":100}';

function signWith(name: string, text = canonical): string {
  return createSign('sha256').update(text).sign(keys[name]!.privateKeyPem!, 'base64');
}

beforeEach(() => clearKeyCache());
afterEach(() => vi.restoreAllMocks());

describe('verifySignature with keys already imported', () => {
  it('imports a PEM once over many calls, single or in a list, and again after clearKeyCache', async () => {
    const spy = vi.spyOn(subtle, 'importKey');
    const signature = signWith('conformance-2048');
    for (let i = 0; i < 5; i++) expect(await verifySignature(canonical, signature, pem('conformance-2048'))).toBe(true);
    expect(await verifySignature(canonical, signature, [pem('stranger-2048'), pem('conformance-2048')])).toBe(true);
    expect(await verifySignature(canonical, signature, [pem('stranger-2048'), pem('conformance-2048')])).toBe(true);
    expect(spy).toHaveBeenCalledTimes(2); // conformance once, stranger once
    clearKeyCache();
    expect(await verifySignature(canonical, signature, pem('conformance-2048'))).toBe(true);
    expect(spy).toHaveBeenCalledTimes(3);
  });

  it('still answers false for a signature by another key and for a changed string', async () => {
    await importPublicKey(pem('conformance-2048'));
    expect(await verifySignature(canonical, signWith('stranger-2048'), pem('conformance-2048'))).toBe(false);
    expect(await verifySignature(canonical + ' ', signWith('conformance-2048'), pem('conformance-2048'))).toBe(false);
  });

  it('keeps refusing a weak PEM once it is cached, unless allowWeakKeys is given on that call', async () => {
    const weak = pem('weak-1024');
    // The fixtures hold no private half of weak-1024; any signature shows the error path.
    const signature = signWith('conformance-2048');
    expect(await rejectionCodeOf(verifySignature(canonical, signature, weak))).toBe('WEAK_KEY');
    expect(await rejectionCodeOf(verifySignature(canonical, signature, weak))).toBe('WEAK_KEY');
    expect(await verifySignature(canonical, signature, weak, { allowWeakKeys: true })).toBe(false);
    expect(await rejectionCodeOf(verifySignature(canonical, signature, [pem('conformance-2048'), weak]))).toBe(
      'WEAK_KEY',
    );
    expect(await rejectionCodeOf(verifySignature(canonical, signature, weak))).toBe('WEAK_KEY');
  });

  it('keeps the least-recently-used order: a PEM used by verifySignature is not the one evicted', async () => {
    const spy = vi.spyOn(subtle, 'importKey');
    const base = pem('conformance-2048');
    const signature = signWith('conformance-2048');
    for (let i = 0; i < PEM_CACHE_SIZE; i++) await importPublicKey(spelling(base, i));
    expect(spy).toHaveBeenCalledTimes(PEM_CACHE_SIZE);
    expect(await verifySignature(canonical, signature, spelling(base, 0))).toBe(true); // a hit: now the most recent
    expect(spy).toHaveBeenCalledTimes(PEM_CACHE_SIZE);
    await importPublicKey(spelling(base, PEM_CACHE_SIZE)); // evicts spelling 1, the least recently used
    expect(await verifySignature(canonical, signature, spelling(base, 0))).toBe(true);
    expect(spy).toHaveBeenCalledTimes(PEM_CACHE_SIZE + 1);
    expect(await verifySignature(canonical, signature, spelling(base, 1))).toBe(true);
    expect(spy).toHaveBeenCalledTimes(PEM_CACHE_SIZE + 2); // evicted, so imported again
  });
});

/** The code of what `run` throws synchronously. */
function syncCodeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (isPayhookError(error)) return error.code;
    throw error;
  }
  return undefined;
}

describe('verificationKeys', () => {
  it('answers with a promise (the awaited path) for a PEM or JWK not imported yet; throws INVALID_ARGUMENT for no key', async () => {
    const jwk = createPublicKey(pem('conformance-2048')).export({ format: 'jwk' }) as RsaJsonWebKey;
    expect(verificationKeys(pem('conformance-2048'), undefined)).toBeInstanceOf(Promise);
    const fromJwk = verificationKeys(jwk, undefined);
    expect(fromJwk).toBeInstanceOf(Promise);
    await fromJwk;
    expect(Array.isArray(verificationKeys(jwk, undefined))).toBe(true); // imported: now at hand
    expect(syncCodeOf(() => verificationKeys([], undefined))).toBe('INVALID_ARGUMENT');
    expect(syncCodeOf(() => verificationKeys(undefined, undefined))).toBe('INVALID_ARGUMENT');
    expect(syncCodeOf(() => verificationKeys(null, undefined))).toBe('INVALID_ARGUMENT');
  });

  it('gives the imported keys in list order, without a promise, once every one is available without an import', async () => {
    const conformance = await importPublicKey(pem('conformance-2048'));
    const stranger = await subtle.importKey(
      'jwk',
      createPublicKey(pem('stranger-2048')).export({ format: 'jwk' }) as JsonWebKey,
      { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
      false,
      ['verify'],
    );
    expect(verificationKeys([stranger, pem('conformance-2048')], undefined)).toEqual([stranger, conformance]);
    const pending = verificationKeys([pem('conformance-2048'), pem('stranger-2048')], undefined);
    expect(pending).toBeInstanceOf(Promise);
    expect(await pending).toHaveLength(2);
  });

  it('refuses an unusable CryptoKey at once, and verifySignature reports it as INVALID_KEY', async () => {
    const { publicKey } = (await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
      'sign',
      'verify',
    ]));
    expect(syncCodeOf(() => verificationKeys(publicKey, undefined))).toBe('INVALID_KEY');
    expect(await rejectionCodeOf(verifySignature(canonical, signWith('conformance-2048'), publicKey))).toBe(
      'INVALID_KEY',
    );
  });
});
