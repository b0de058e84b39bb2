import { createPublicKey, createSign, generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clearKeyCache, importPublicKey, type KeyInput, type RsaJsonWebKey } from '../src/keys.js';
import { importKeys, PEM_CACHE_SIZE } from '../src/lib/key-import.js';
import { webCryptoScheme } from '../src/lib/signature-scheme.js';
import { nodeCryptoScheme } from '../src/node/node-crypto-scheme.js';
import { rejectionCodeOf, spelling } from './helpers/codes.js';

const keys = JSON.parse(readFileSync(new URL('./fixtures/keys.json', import.meta.url), 'utf8')) as Record<
  string,
  { publicKeyPem: string; privateKeyPem?: string }
>;
const pem = (name: string): string => keys[name]!.publicKeyPem;
const subtle = globalThis.crypto.subtle;

beforeEach(() => clearKeyCache());
afterEach(() => vi.restoreAllMocks());

describe('importPublicKey: accepted forms', () => {
  it('imports an SPKI PEM as an RSASSA-PKCS1-v1_5 / SHA-256 verify key', async () => {
    const key = await importPublicKey(pem('conformance-2048'));
    expect(key.type).toBe('public');
    expect(key.algorithm).toMatchObject({ name: 'RSASSA-PKCS1-v1_5', hash: { name: 'SHA-256' }, modulusLength: 2048 });
    expect(key.usages).toEqual(['verify']);
  });

  it('imports a PKCS#1 PEM to the same key as its SPKI form', async () => {
    const fromPkcs1 = (await importPublicKey(pem('conformance-2048.pkcs1'))) as CryptoKey;
    const fromSpki = (await importPublicKey(pem('conformance-2048'))) as CryptoKey;
    // Compared by what matters: both verify one signature.
    expect((fromPkcs1.algorithm as RsaHashedKeyAlgorithm).modulusLength).toBe(2048);
    const data = new TextEncoder().encode('same key?');
    const signature = createSign('sha256').update(data).sign(keys['conformance-2048']!.privateKeyPem!);
    expect(await subtle.verify('RSASSA-PKCS1-v1_5', fromPkcs1, signature, data)).toBe(true);
    expect(await subtle.verify('RSASSA-PKCS1-v1_5', fromSpki, signature, data)).toBe(true);
  });

  it('imports a public JSON Web Key whose "alg", "use" and "key_ops" allow RS256 verifying, whatever "ext" says', async () => {
    const jwk = createPublicKey(pem('conformance-2048')).export({ format: 'jwk' }) as RsaJsonWebKey;
    const extras = [
      { use: 'sig', key_ops: ['verify'], alg: 'RS256' },
      { key_ops: ['verify', 'encrypt'] },
      { ext: false },
    ];
    for (const extra of [...extras, { ext: true }]) {
      const key = await importPublicKey({ ...jwk, ...extra });
      expect(key.algorithm, JSON.stringify(extra)).toMatchObject({ name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048 });
    }
  });

  it('returns a suitable CryptoKey as it is', async () => {
    const cryptoKey = await subtle.importKey(
      'spki',
      createPublicKey(pem('conformance-2048')).export({ type: 'spki', format: 'der' }),
      { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
      true,
      ['verify'],
    );
    expect(await importPublicKey(cryptoKey)).toBe(cryptoKey);
  });
});

describe('importPublicKey: refused keys', () => {
  const rsaJwk = () => createPublicKey(pem('conformance-2048')).export({ format: 'jwk' }) as RsaJsonWebKey;
  const ecPair = generateKeyPairSync('ec', { namedCurve: 'P-256' });

  it.each([
    ['garbage PEM', () => 'this is not a PEM'],
    ['the garbage fixture (PEM framing, junk DER)', () => pem('garbage')],
    ['an EC PEM', () => pem('ec-p256')],
    [
      'an Ed25519 PEM',
      () => generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }) as string,
    ],
    ['a private key PEM', () => keys['conformance-2048']!.privateKeyPem!],
    ['an SPKI body under the PKCS#1 label', () => pem('conformance-2048').replace(/PUBLIC KEY/g, 'RSA PUBLIC KEY')],
    ['a JWK with kty EC', () => ecPair.publicKey.export({ format: 'jwk' }) as RsaJsonWebKey],
    ['a JWK without kty', () => ({ n: 'AQAB', e: 'AQAB' })],
    [
      'a private RSA JWK',
      () => ({ ...(createPublicKey(pem('conformance-2048')).export({ format: 'jwk' }) as RsaJsonWebKey), d: 'AQAB' }),
    ],
    ['an RSA JWK without a modulus', () => ({ kty: 'RSA', e: 'AQAB' })],
    [
      'an RSA JWK for RS512',
      () => ({
        ...(createPublicKey(pem('conformance-2048')).export({ format: 'jwk' }) as RsaJsonWebKey),
        alg: 'RS512',
      }),
    ],
    // Web Crypto's JWK rules: a key whose own metadata names another use never verifies RS256.
    ['an RSA JWK for PS256', () => ({ ...rsaJwk(), alg: 'PS256' })],
    ['an RSA JWK for RS384', () => ({ ...rsaJwk(), alg: 'RS384' })],
    ['an RSA JWK for RSA-OAEP', () => ({ ...rsaJwk(), alg: 'RSA-OAEP' })],
    ['an RSA JWK for encryption ("use": "enc")', () => ({ ...rsaJwk(), use: 'enc' })],
    ['an RSA JWK whose key_ops lack "verify"', () => ({ ...rsaJwk(), key_ops: ['encrypt'] })],
    ['an RSA JWK with an empty key_ops', () => ({ ...rsaJwk(), key_ops: [] })],
    ['a number', () => 42 as unknown as KeyInput],
    ['null', () => null as unknown as KeyInput],
    ['undefined', () => undefined as unknown as KeyInput],
    ['an array', () => [pem('conformance-2048')] as unknown as KeyInput],
  ])('%s: INVALID_KEY', async (_label, make) => {
    expect(await rejectionCodeOf(importPublicKey(make()))).toBe('INVALID_KEY');
  });

  it('an EC CryptoKey: INVALID_KEY', async () => {
    const pair = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);
    expect(await rejectionCodeOf(importPublicKey(pair.publicKey))).toBe('INVALID_KEY');
  });

  it.each([
    ['RSA-PSS', { name: 'RSA-PSS', hash: 'SHA-256' }, ['verify']],
    ['RSASSA-PKCS1-v1_5 with SHA-1', { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-1' }, ['verify']],
    ['RSASSA-PKCS1-v1_5 with SHA-512', { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-512' }, ['verify']],
    ['RSA-OAEP', { name: 'RSA-OAEP', hash: 'SHA-256' }, ['encrypt']],
  ] as const)('a CryptoKey for %s: INVALID_KEY', async (_label, algorithm, usages) => {
    const der = createPublicKey(pem('conformance-2048')).export({ type: 'spki', format: 'der' });
    const key = await subtle.importKey('spki', der, algorithm, false, [...usages]);
    expect(await rejectionCodeOf(importPublicKey(key))).toBe('INVALID_KEY');
  });

  it('a private RSASSA CryptoKey: INVALID_KEY', async () => {
    const pair = await subtle.generateKey(
      { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
      false,
      ['sign', 'verify'],
    );
    expect(await rejectionCodeOf(importPublicKey(pair.privateKey))).toBe('INVALID_KEY');
    expect((await importPublicKey(pair.publicKey)).type).toBe('public');
  });

  it('a look-alike object that is no CryptoKey and has no modulus length: INVALID_KEY', async () => {
    const fake = {
      type: 'public',
      extractable: false,
      algorithm: { name: 'RSASSA-PKCS1-v1_5', hash: { name: 'SHA-256' } },
      usages: ['verify'],
    };
    expect(await rejectionCodeOf(importPublicKey(fake))).toBe('INVALID_KEY');
  });
});

describe('a CryptoKey look-alike with every property a key has', () => {
  // It passed every check: the Web Crypto scheme then refused every signature without an error,
  // and payhook/node's threw a TypeError (no PayhookError) on its first delivery.
  const fake = {
    type: 'public',
    extractable: true,
    algorithm: {
      name: 'RSASSA-PKCS1-v1_5',
      hash: { name: 'SHA-256' },
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
    },
    usages: ['verify'],
  };

  it('is INVALID_KEY in importPublicKey and in both signature schemes', async () => {
    expect(await rejectionCodeOf(importPublicKey(fake))).toBe('INVALID_KEY');
    for (const scheme of [webCryptoScheme, nodeCryptoScheme]) {
      expect(await rejectionCodeOf(scheme([fake], {}))).toBe('INVALID_KEY');
    }
  });

  it('while a real CryptoKey, extractable or not, is taken as it is', async () => {
    const der = createPublicKey(pem('conformance-2048')).export({ type: 'spki', format: 'der' });
    for (const extractable of [true, false]) {
      const key = await subtle.importKey('spki', der, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, extractable, [
        'verify',
      ]);
      expect(await importPublicKey(key)).toBe(key);
      expect(await importPublicKey(key)).toBe(key);
    }
  });

  it("while this runtime's CryptoKey without the CryptoKey class string (workerd before 2024-09-26) is taken too", async () => {
    const der = createPublicKey(pem('conformance-2048')).export({ type: 'spki', format: 'der' });
    const key = await subtle.importKey('spki', der, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, true, ['verify']);
    Object.defineProperty(key, Symbol.toStringTag, { value: undefined });
    expect(Object.prototype.toString.call(key)).toBe('[object Object]');
    expect(await importPublicKey(key)).toBe(key);
  });
});

describe('public exponents no real key has', () => {
  it('refuses e = 1 (the padded hash itself would verify: anyone could sign) and even exponents, in every form', async () => {
    const jwk = createPublicKey(pem('conformance-2048')).export({ format: 'jwk' });
    for (const e of ['AQ', 'Ag', 'AAE', 'AQAA']) {
      // 1, 2, 1 with a leading zero, 65536
      const forms: KeyInput[] = [{ ...jwk, e }];
      const imported = await subtle.importKey(
        'jwk',
        { ...jwk, e },
        { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
        true,
        ['verify'],
      );
      forms.push(imported, await pemOf(imported));
      for (const form of forms) {
        expect(await rejectionCodeOf(importPublicKey(form, { allowWeakKeys: true })), `${e} ${typeof form}`).toBe(
          'INVALID_KEY',
        );
      }
    }
    // 3 and 65537 are fine.
    for (const e of ['Aw', 'AQAB']) expect((await importPublicKey({ ...jwk, e })).type).toBe('public');
  });

  it('reads the exponent from an ArrayBuffer (Workers before 2023-12-01) or any view, and anything else as none', async () => {
    const der = createPublicKey(pem('conformance-2048')).export({ type: 'spki', format: 'der' });
    const withExponent = async (publicExponent: unknown): Promise<CryptoKey> => {
      const key = await subtle.importKey('spki', der, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, true, ['verify']);
      return Object.defineProperty(key, 'algorithm', { value: { ...key.algorithm, publicExponent } });
    };
    const e65537 = new Uint8Array([0, 1, 0, 1]);
    for (const form of [e65537.buffer.slice(1), new DataView(e65537.buffer, 1), e65537.subarray(1)]) {
      const key = await withExponent(form);
      expect(await importPublicKey(key)).toBe(key);
    }
    const refused = [
      new Uint8Array([1]).buffer,
      new Uint8Array([2]).buffer,
      65_537,
      2 ** 40,
      65_537n,
      [1, 0, 1],
      'AQAB',
    ];
    for (const [index, form] of refused.entries()) {
      expect(await rejectionCodeOf(importPublicKey(await withExponent(form))), `form ${index}`).toBe('INVALID_KEY');
    }
  });
});

async function pemOf(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await subtle.exportKey('spki', key)).toString('base64');
  return `-----BEGIN PUBLIC KEY-----\n${der.match(/.{1,64}/g)!.join('\n')}\n-----END PUBLIC KEY-----\n`;
}

describe('weak keys', () => {
  it('refuses a 1024-bit RSA PEM with WEAK_KEY', async () => {
    expect(await rejectionCodeOf(importPublicKey(pem('weak-1024')))).toBe('WEAK_KEY');
  });

  it('accepts it with { allowWeakKeys: true }, and only then', async () => {
    const key = await importPublicKey(pem('weak-1024'), { allowWeakKeys: true });
    expect(key.algorithm).toMatchObject({ modulusLength: 1024 });
    expect(await rejectionCodeOf(importPublicKey(pem('weak-1024'), { allowWeakKeys: false }))).toBe('WEAK_KEY');
    // Only the boolean true opts in; a truthy string does not.
    expect(
      await rejectionCodeOf(importPublicKey(pem('weak-1024'), { allowWeakKeys: 'yes' as unknown as boolean })),
    ).toBe('WEAK_KEY');
    // The cached import does not carry the opt-in over to a later call.
    expect(await rejectionCodeOf(importPublicKey(pem('weak-1024')))).toBe('WEAK_KEY');
  });

  it('refuses weak JWKs and CryptoKeys too', async () => {
    const jwk = createPublicKey(pem('weak-1024')).export({ format: 'jwk' }) as RsaJsonWebKey;
    expect(await rejectionCodeOf(importPublicKey(jwk))).toBe('WEAK_KEY');
    const cryptoKey = await subtle.importKey(
      'jwk',
      jwk as JsonWebKey,
      { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
      false,
      ['verify'],
    );
    expect(await rejectionCodeOf(importPublicKey(cryptoKey))).toBe('WEAK_KEY');
    expect((await importPublicKey(cryptoKey, { allowWeakKeys: true })).type).toBe('public');
  });
});

describe('the PEM cache', () => {
  it('imports the same PEM once, however often and however concurrently it is used', async () => {
    const spy = vi.spyOn(subtle, 'importKey');
    const first = await importPublicKey(pem('conformance-2048'));
    const again = await Promise.all(Array.from({ length: 20 }, () => importPublicKey(pem('conformance-2048'))));
    expect(spy).toHaveBeenCalledTimes(1);
    for (const key of again) expect(key).toBe(first);
    await importKeys([pem('conformance-2048'), pem('conformance-2048')], undefined);
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('is bounded: a 17th distinct PEM evicts the least recently used one', async () => {
    expect(PEM_CACHE_SIZE).toBe(16);
    const spy = vi.spyOn(subtle, 'importKey');
    const base = pem('conformance-2048');
    for (let i = 0; i < PEM_CACHE_SIZE; i++) await importPublicKey(spelling(base, i));
    expect(spy).toHaveBeenCalledTimes(16);
    // Touch the oldest so that the second oldest is now the least recently used.
    await importPublicKey(spelling(base, 0));
    expect(spy).toHaveBeenCalledTimes(16);
    await importPublicKey(spelling(base, 16));
    expect(spy).toHaveBeenCalledTimes(17);
    await importPublicKey(spelling(base, 0));
    expect(spy).toHaveBeenCalledTimes(17); // kept: it was used recently
    await importPublicKey(spelling(base, 1));
    expect(spy).toHaveBeenCalledTimes(18); // evicted, imported again
  });

  it('does not cache a failed import: the next call tries again', async () => {
    const spy = vi.spyOn(subtle, 'importKey');
    expect(await rejectionCodeOf(importPublicKey(pem('ec-p256')))).toBe('INVALID_KEY');
    expect(await rejectionCodeOf(importPublicKey(pem('ec-p256')))).toBe('INVALID_KEY');
    expect(spy).toHaveBeenCalledTimes(2);
  });

  it('a failed import does not poison a later successful one for the same PEM', async () => {
    const base = pem('conformance-2048');
    const spy = vi.spyOn(subtle, 'importKey').mockRejectedValueOnce(new Error('transient'));
    expect(await rejectionCodeOf(importPublicKey(base))).toBe('INVALID_KEY');
    const key = await importPublicKey(base);
    expect(key.type).toBe('public');
    await importPublicKey(base);
    expect(spy).toHaveBeenCalledTimes(2);
  });

  it('clearKeyCache forgets imported PEMs and JWKs', async () => {
    const jwk = createPublicKey(pem('conformance-2048')).export({ format: 'jwk' }) as RsaJsonWebKey;
    const spy = vi.spyOn(subtle, 'importKey');
    await importPublicKey(pem('conformance-2048'));
    await importPublicKey(jwk);
    await importPublicKey(jwk);
    expect(spy).toHaveBeenCalledTimes(2);
    clearKeyCache();
    await importPublicKey(pem('conformance-2048'));
    await importPublicKey(jwk);
    expect(spy).toHaveBeenCalledTimes(4);
  });
});

describe('importKeys', () => {
  it('keeps the order of a key list', async () => {
    const list = await importKeys([pem('conformance-2048'), pem('stranger-2048')], undefined);
    expect(list).toHaveLength(2);
    expect(list[0]).toBe(await importPublicKey(pem('conformance-2048')));
    expect(list[1]).toBe(await importPublicKey(pem('stranger-2048')));
  });

  it('throws INVALID_ARGUMENT for an empty list or no keys at all', async () => {
    expect(await rejectionCodeOf(importKeys([], undefined))).toBe('INVALID_ARGUMENT');
    expect(await rejectionCodeOf(importKeys(undefined, undefined))).toBe('INVALID_ARGUMENT');
    expect(await rejectionCodeOf(importKeys(null, undefined))).toBe('INVALID_ARGUMENT');
  });

  it('fails the whole list when one key is unusable', async () => {
    expect(await rejectionCodeOf(importKeys([pem('conformance-2048'), pem('ec-p256')], undefined))).toBe('INVALID_KEY');
    expect(await rejectionCodeOf(importKeys([pem('conformance-2048'), pem('weak-1024')], undefined))).toBe('WEAK_KEY');
  });
});
