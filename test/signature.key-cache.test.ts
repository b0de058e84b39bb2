// verifySignature over keys it has seen before: each PEM is imported once
// (counted at Web Crypto's importKey), the cache keeps its bound and its
// least-recently-used order, and an unusable key is refused every time.
import { createSign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clearKeyCache, importPublicKey } from '../src/keys.js';
import { PEM_CACHE_SIZE } from '../src/lib/key-import.js';
import { verifySignature } from '../src/signature.js';
import { rejectionCodeOf, spelling } from './helpers/codes.js';

const keys = JSON.parse(readFileSync(new URL('./fixtures/keys.json', import.meta.url), 'utf8')) as Record<
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

describe('an unusable CryptoKey', () => {
  it('is refused as INVALID_KEY by verifySignature', async () => {
    const { publicKey } = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
    expect(await rejectionCodeOf(verifySignature(canonical, signWith('conformance-2048'), publicKey))).toBe(
      'INVALID_KEY',
    );
  });
});
