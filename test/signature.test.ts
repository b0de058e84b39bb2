import { createPublicKey, createSign, generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import { clearKeyCache } from '../src/keys.js';
import { BETA_PUBLIC_KEY, PRODUCTION_PUBLIC_KEY, SERVICE_PUBLIC_KEYS } from '../src/service-keys.js';
import { verifySignature } from '../src/signature.js';
import { rejectionCodeOf } from './helpers/codes.js';

const keys = JSON.parse(readFileSync(new URL('./fixtures/keys.json', import.meta.url), 'utf8')) as Record<
  string,
  { publicKeyPem: string; privateKeyPem?: string }
>;
const signatures = JSON.parse(readFileSync(new URL('./fixtures/signatures.json', import.meta.url), 'utf8')) as {
  signatures: Array<{ name: string; canonical: string; signature: string; key: string; valid: boolean }>;
};
const publicPem = keys['conformance-2048']!.publicKeyPem;
const privatePem = keys['conformance-2048']!.privateKeyPem!;

const canonical =
  'post\n/webhooks/payments\nhost:shop.example.kg&x-api-timestamp:1763712000000\n{"amount":100,"status":"SUCCEEDED"}';
const sign = (text: string, key = privatePem): Buffer => createSign('sha256').update(text, 'utf8').sign(key);
const signature = sign(canonical);
const base64 = signature.toString('base64');

beforeEach(() => clearKeyCache());

describe('verifySignature', () => {
  it('accepts a signature made with the private key over the canonical string', async () => {
    expect(await verifySignature(canonical, base64, publicPem)).toBe(true);
  });

  it("verifies the reference signer's published example (ref-test key)", async () => {
    const vector = signatures.signatures.find((entry) => entry.key === 'ref-test' && entry.valid)!;
    expect(await verifySignature(vector.canonical, vector.signature, keys['ref-test']!.publicKeyPem)).toBe(true);
  });

  it('signs the UTF-8 bytes of non-ASCII text', async () => {
    const text = `${canonical.slice(0, -1)},"note":"Оплата ✓ 💳"}`;
    expect(await verifySignature(text, sign(text).toString('base64'), publicPem)).toBe(true);
  });

  it('accepts every lenient spelling: URL-safe, unpadded, surrounding whitespace', async () => {
    const urlSafe = signature.toString('base64url');
    expect(await verifySignature(canonical, urlSafe, publicPem)).toBe(true);
    expect(await verifySignature(canonical, base64.replace(/=+$/, ''), publicPem)).toBe(true);
    expect(await verifySignature(canonical, ` \t${base64}\r\n`, publicPem)).toBe(true);
  });

  it('accepts a spelling whose unused trailing bits are set: it decodes to the same bytes', async () => {
    // 256 bytes = 341 full characters + one carrying 2 data bits and 4 unused ones.
    const last = base64.indexOf('=') - 1;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const sibling = alphabet[alphabet.indexOf(base64[last]!) | 0b1111]!;
    expect(sibling).not.toBe(base64[last]);
    const respelled = base64.slice(0, last) + sibling + base64.slice(last + 1);
    expect(Buffer.from(respelled, 'base64').equals(signature)).toBe(true);
    expect(await verifySignature(canonical, respelled, publicPem)).toBe(true);
  });

  it.each([
    ['an empty signature', ''],
    ['whitespace only', '   '],
    ['inner whitespace', `${base64.slice(0, 100)} ${base64.slice(100)}`],
    ['a character outside the alphabets', `${base64.slice(0, 100)}*${base64.slice(101)}`],
    ['bad padding', `${base64.replace(/=+$/, '')}===`],
    ['length % 4 == 1', `${base64.replace(/=+$/, '')}A`.slice(0, 341)],
    ['a signature one byte too short', signature.subarray(1).toString('base64')],
    ['a signature one byte too long', Buffer.concat([signature, Buffer.from([0])]).toString('base64')],
    ['a signature of all zero bytes', Buffer.alloc(256).toString('base64')],
    ['a signature of all 0xff bytes (larger than the modulus)', Buffer.alloc(256, 0xff).toString('base64')],
    ['the signature of another text', sign(`${canonical} `).toString('base64')],
    ['a signature by another key', sign(canonical, keys['stranger-2048']!.privateKeyPem).toString('base64')],
  ])('resolves false, never throws, for %s', async (_label, value) => {
    expect(await verifySignature(canonical, value, publicPem)).toBe(false);
  });

  it('resolves false for a signature that is not a string (a repeated header as an array)', async () => {
    expect(await verifySignature(canonical, [base64] as unknown as string, publicPem)).toBe(false);
    expect(await verifySignature(canonical, undefined as unknown as string, publicPem)).toBe(false);
  });

  it('resolves false when the canonical string differs by one character', async () => {
    expect(await verifySignature(canonical.replace('100', '101'), base64, publicPem)).toBe(false);
    expect(await verifySignature(canonical.toUpperCase(), base64, publicPem)).toBe(false);
  });

  it('throws INVALID_ARGUMENT for a canonical string that is not a string', async () => {
    expect(await rejectionCodeOf(verifySignature(undefined as unknown as string, base64, publicPem))).toBe(
      'INVALID_ARGUMENT',
    );
  });

  it('throws INVALID_ARGUMENT for an empty key list or no key, even with an empty signature', async () => {
    expect(await rejectionCodeOf(verifySignature(canonical, base64, []))).toBe('INVALID_ARGUMENT');
    expect(await rejectionCodeOf(verifySignature(canonical, '', []))).toBe('INVALID_ARGUMENT');
    expect(await rejectionCodeOf(verifySignature(canonical, base64, undefined as never))).toBe('INVALID_ARGUMENT');
  });

  it('throws INVALID_KEY for an unusable key rather than answering false', async () => {
    expect(await rejectionCodeOf(verifySignature(canonical, base64, keys['garbage']!.publicKeyPem))).toBe(
      'INVALID_KEY',
    );
    expect(await rejectionCodeOf(verifySignature(canonical, base64, keys['ec-p256']!.publicKeyPem))).toBe(
      'INVALID_KEY',
    );
    expect(await rejectionCodeOf(verifySignature(canonical, '', 'not a pem'))).toBe('INVALID_KEY');
  });

  it('throws WEAK_KEY for a 1024-bit key unless allowWeakKeys is set, then verifies with it', async () => {
    const weak = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const weakPem = weak.publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const weakSignature = createSign('sha256').update(canonical).sign(weak.privateKey).toString('base64');
    expect(await rejectionCodeOf(verifySignature(canonical, weakSignature, weakPem))).toBe('WEAK_KEY');
    expect(await verifySignature(canonical, weakSignature, weakPem, { allowWeakKeys: true })).toBe(true);
    expect(await verifySignature(canonical, base64, weakPem, { allowWeakKeys: true })).toBe(false);
  });

  it('verifies with a PKCS#1 PEM, a JWK and a CryptoKey of the same key', async () => {
    const jwk = createPublicKey(publicPem).export({ format: 'jwk' });
    const cryptoKey = await globalThis.crypto.subtle.importKey(
      'jwk',
      jwk,
      { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
      false,
      ['verify'],
    );
    expect(await verifySignature(canonical, base64, keys['conformance-2048.pkcs1']!.publicKeyPem)).toBe(true);
    expect(await verifySignature(canonical, base64, jwk)).toBe(true);
    expect(await verifySignature(canonical, base64, cryptoKey)).toBe(true);
  });
});

describe('key lists', () => {
  it('resolves true when any key verifies, wherever it is in the list (rotation)', async () => {
    const stranger = keys['stranger-2048']!.publicKeyPem;
    expect(await verifySignature(canonical, base64, [stranger, publicPem])).toBe(true);
    expect(await verifySignature(canonical, base64, [publicPem, stranger])).toBe(true);
    expect(await verifySignature(canonical, base64, [stranger])).toBe(false);
  });

  it('with production + beta, a signature by another key is refused', async () => {
    expect(await verifySignature(canonical, base64, [PRODUCTION_PUBLIC_KEY, BETA_PUBLIC_KEY])).toBe(false);
    expect(await verifySignature(canonical, base64, Object.values(SERVICE_PUBLIC_KEYS))).toBe(false);
  });

  it("production + beta + the test key accepts the test key's signature", async () => {
    expect(await verifySignature(canonical, base64, [PRODUCTION_PUBLIC_KEY, BETA_PUBLIC_KEY, publicPem])).toBe(true);
  });

  it('mixes key sizes: a wrong-length signature for one key is checked against the others', async () => {
    const big = generateKeyPairSync('rsa', { modulusLength: 3072 });
    const bigPem = big.publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const bigSignature = createSign('sha256').update(canonical).sign(big.privateKey).toString('base64');
    expect(await verifySignature(canonical, bigSignature, [publicPem, bigPem])).toBe(true);
    expect(await verifySignature(canonical, base64, [bigPem, publicPem])).toBe(true);
    expect(await verifySignature(canonical, bigSignature, [publicPem])).toBe(false);
  });

  it('the service signature vectors: production and beta refuse what they did not sign', async () => {
    for (const vector of signatures.signatures.filter((entry) => entry.key.startsWith('service-'))) {
      expect(vector.valid).toBe(false);
      expect(await verifySignature(vector.canonical, vector.signature, keys[vector.key]!.publicKeyPem)).toBe(false);
    }
  });
});
