import { Buffer } from 'node:buffer';
import { createSign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { importPublicKey } from '../src/keys.js';
import { verifySignature } from '../src/signature.js';
import { warmBinaryStrings } from './helpers/fast-check.js';

beforeAll(warmBinaryStrings);

// Verification never says yes to anything but the exact signature over the
// exact canonical bytes. Signatures are made with node:crypto and the
// conformance-2048 test key, independently of the code under test.

const keys = JSON.parse(readFileSync(new URL('./fixtures/keys.json', import.meta.url), 'utf8')) as Record<
  string,
  { publicKeyPem: string; privateKeyPem?: string }
>;
const publicPem = keys['conformance-2048']!.publicKeyPem;
const privatePem = keys['conformance-2048']!.privateKeyPem!;
const sign = (text: string): Buffer => createSign('sha256').update(text, 'utf8').sign(privatePem);

const canonical = fc.string({ unit: 'grapheme', maxLength: 200 });
// One fixed signature for the tampering properties: signing is the slow part.
const fixedText =
  'post\n/webhooks/payments\nhost:shop.example.kg&x-api-timestamp:1763712000000\n{"amount":100,"status":"SUCCEEDED"}';
const fixedSignature = sign(fixedText);

beforeAll(async () => {
  await importPublicKey(publicPem);
});

describe('verifySignature (property)', () => {
  it('accepts the signature of any string (sanity check of the properties below)', async () => {
    await fc.assert(
      fc.asyncProperty(canonical, async (text) => {
        expect(await verifySignature(text, sign(text).toString('base64'), publicPem)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('refuses a signature with one bit flipped', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: fixedSignature.length * 8 - 1 }), async (bit) => {
        const altered = Buffer.from(fixedSignature);
        altered[bit >> 3]! ^= 1 << (bit & 7);
        expect(await verifySignature(fixedText, altered.toString('base64'), publicPem)).toBe(false);
      }),
      { numRuns: 400 },
    );
  });

  it('refuses a signature with one byte replaced by any other value', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: fixedSignature.length - 1 }),
        fc.integer({ min: 1, max: 255 }),
        async (index, delta) => {
          const altered = Buffer.from(fixedSignature);
          altered[index] = (altered[index]! + delta) & 0xff;
          expect(await verifySignature(fixedText, altered.toString('base64'), publicPem)).toBe(false);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('refuses a base64 text with one character changed, unless it decodes to the same bytes', async () => {
    const text = fixedSignature.toString('base64');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    await fc.assert(
      // Often the last three characters: the spare bits and the padding.
      fc.asyncProperty(
        fc.oneof(fc.nat({ max: text.length - 1 }), fc.integer({ min: text.length - 3, max: text.length - 1 })),
        fc.constantFrom(...alphabet.split(''), '-', '_', '=', ' ', '.'),
        async (index, char) => {
          fc.pre(text[index] !== char);
          const altered = text.slice(0, index) + char + text.slice(index + 1);
          // The last data character carries 4 unused bits: changing only those
          // spells the same signature, which must (and does) still verify. The
          // two alphabets may be mixed ('_' reads as '/'), as node's decoder does.
          const standard = altered.replace(/-/g, '+').replace(/_/g, '/');
          const same =
            /^[A-Za-z0-9+/]+={0,2}$/.test(standard) && Buffer.from(standard, 'base64').equals(fixedSignature);
          expect(await verifySignature(fixedText, altered, publicPem)).toBe(same);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('refuses a truncated or extended signature', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: -8, max: 8 }).filter((n) => n !== 0),
        fc.uint8Array({ minLength: 8, maxLength: 8 }),
        async (change, extra) => {
          const altered =
            change < 0
              ? fixedSignature.subarray(0, fixedSignature.length + change)
              : Buffer.concat([fixedSignature, extra.subarray(0, change)]);
          expect(await verifySignature(fixedText, altered.toString('base64'), publicPem)).toBe(false);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('refuses the signature once the canonical string changes in one character', async () => {
    const original = Buffer.from(fixedText, 'utf8');
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: fixedText.length - 1 }),
        fc.string({ unit: 'binary', minLength: 0, maxLength: 2 }),
        async (index, replacement) => {
          const altered = fixedText.slice(0, index) + replacement + fixedText.slice(index + 1);
          // Web Crypto signs UTF-8 bytes; a lone surrogate encodes as U+FFFD.
          fc.pre(!Buffer.from(altered, 'utf8').equals(original));
          expect(await verifySignature(altered, fixedSignature.toString('base64'), publicPem)).toBe(false);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('refuses random bytes as a signature', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 256, maxLength: 256 }), async (bytes) => {
        expect(await verifySignature(fixedText, Buffer.from(bytes).toString('base64'), publicPem)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('resolves a boolean, never throws, for any signature text', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 400 }), async (signature) => {
        expect(await verifySignature(fixedText, signature, publicPem)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
