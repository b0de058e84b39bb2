import { createPublicKey, createSign, generateKeyPairSync, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { importKeys } from '../../src/lib/key-import.js';
import { couldBeSignature, withPublicNumbers, type KeysWithNumbers } from '../../src/lib/rsa-filter.js';
import { warmBinaryStrings } from '../helpers/fast-check.js';

beforeAll(warmBinaryStrings);

// couldBeSignature lets verifyWebhook refuse a large body without parsing
// it. It may only ever rule out what Web Crypto would refuse for every
// message: each genuine signature must pass it, under every key size and
// exponent; random ones must not.
const subtle = globalThis.crypto.subtle;

const pairs = [
  { bits: 1024, exponent: 65537 },
  { bits: 2048, exponent: 65537 },
  { bits: 2048, exponent: 3 },
  { bits: 3072, exponent: 65537 },
  { bits: 4096, exponent: 65537 },
].map(({ bits, exponent }) => ({
  bits,
  exponent,
  ...generateKeyPairSync('rsa', {
    modulusLength: bits,
    publicExponent: exponent,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  }),
}));

async function loaded(publicKey: string): Promise<KeysWithNumbers> {
  return withPublicNumbers(await importKeys(publicKey, { allowWeakKeys: true }));
}

const both = (a: KeysWithNumbers, b: KeysWithNumbers): KeysWithNumbers => ({
  keys: [...a.keys, ...b.keys],
  numbers: [...a.numbers, ...b.numbers],
});

const sign = (privateKey: string, message: string): Uint8Array =>
  new Uint8Array(createSign('sha256').update(message).sign(privateKey));

describe('couldBeSignature', () => {
  it.each(pairs)('passes every genuine signature of an RSA-$bits key (e = $exponent)', async (pair) => {
    const keys = await loaded(pair.publicKey);
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (message) => {
        expect(couldBeSignature(sign(pair.privateKey, message), keys)).toBe(true);
      }),
      { numRuns: 25 },
    );
  });

  it.each(pairs)(
    'rules out random signatures of the right length for an RSA-$bits key (e = $exponent)',
    async (pair) => {
      const keys = await loaded(pair.publicKey);
      for (let i = 0; i < 50; i++)
        expect(couldBeSignature(new Uint8Array(randomBytes(pair.bits / 8)), keys)).toBe(false);
    },
  );

  it('rules out a value at or over the modulus, and a length that fits no key', async () => {
    const keys = await loaded(pairs[1]!.publicKey);
    expect(couldBeSignature(new Uint8Array(256).fill(0xff), keys)).toBe(false);
    const genuine = sign(pairs[1]!.privateKey, 'paid');
    expect(couldBeSignature(genuine.subarray(1), keys)).toBe(false);
    expect(couldBeSignature(new Uint8Array([0, ...genuine]), keys)).toBe(false);
  });

  it('rules out a genuine signature plus the modulus, which Web Crypto refuses as out of range', async () => {
    const loadedKey = await loaded(pairs[1]!.publicKey);
    const key = loadedKey.keys[0];
    const { n } = await subtle.exportKey('jwk', key!);
    const modulus = BigInt(`0x${Buffer.from(n!, 'base64url').toString('hex')}`);
    // Find a message whose signature plus the modulus still fits in 256 bytes.
    for (let i = 0; ; i++) {
      const genuine = sign(pairs[1]!.privateKey, `paid ${i}`);
      const shifted = BigInt(`0x${Buffer.from(genuine).toString('hex')}`) + modulus;
      if (shifted >= 1n << 2048n) continue;
      const bytes = new Uint8Array(Buffer.from(shifted.toString(16).padStart(512, '0'), 'hex'));
      const data = new TextEncoder().encode(`paid ${i}`);
      expect(await subtle.verify('RSASSA-PKCS1-v1_5', key!, bytes, data).catch(() => false)).toBe(false);
      expect(couldBeSignature(bytes, loadedKey)).toBe(false);
      break;
    }
  });

  it('passes a signature that any one key of several may have made', async () => {
    const keys = both(await loaded(pairs[3]!.publicKey), await loaded(pairs[1]!.publicKey));
    expect(couldBeSignature(sign(pairs[1]!.privateKey, 'paid'), keys)).toBe(true);
    expect(couldBeSignature(sign(pairs[3]!.privateKey, 'paid'), keys)).toBe(true);
    expect(couldBeSignature(sign(pairs[2]!.privateKey, 'paid'), keys)).toBe(false);
  });

  it('says "maybe" for a key without numbers: a non-extractable CryptoKey, or an exponent over 32 bits', async () => {
    const der = Buffer.from(pairs[1]!.publicKey.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    const sealed = await withPublicNumbers([await subtle.importKey('spki', der, algorithm, false, ['verify'])]);
    expect(sealed.numbers).toEqual([undefined]);
    const random = new Uint8Array(randomBytes(256));
    expect(couldBeSignature(random, sealed)).toBe(true);
    expect(couldBeSignature(random, both(await loaded(pairs[1]!.publicKey), sealed))).toBe(true);
    // Its length is still checked: a signature no key's length fits is ruled out without numbers.
    expect(couldBeSignature(random.subarray(1), sealed)).toBe(false);
    expect(couldBeSignature(new Uint8Array([1, ...random]), sealed)).toBe(false);
    // An exponent of 33 bits or more: the check would cost a modular squaring
    // per bit. (importKeys refuses such a key; the filter stays safe without it.
    // Not a key pair: only the public numbers matter.)
    const jwk = { ...createPublicKey(pairs[1]!.publicKey).export({ format: 'jwk' }), e: 'AQAAAAE' };
    const wide = await withPublicNumbers([await subtle.importKey('jwk', jwk, algorithm, true, ['verify'])]);
    expect(wide.numbers).toEqual([undefined]);
    expect(couldBeSignature(random, wide)).toBe(true);
    // 32 bits exactly (0x01000001) is still checked.
    const jwk32 = { ...jwk, e: 'AQAAAQ' };
    const narrow = await withPublicNumbers(await importKeys(jwk32, {}));
    expect(narrow.numbers[0]?.e).toBe(0x01_00_00_01n);
    expect(couldBeSignature(random, narrow)).toBe(false);
  });
});
