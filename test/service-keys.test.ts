import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { importPublicKey } from '../src/keys.js';
import { BETA_PUBLIC_KEY, PRODUCTION_PUBLIC_KEY, SERVICE_PUBLIC_KEYS } from '../src/service-keys.js';

const keys = JSON.parse(readFileSync(new URL('./fixtures/keys.json', import.meta.url), 'utf8')) as Record<
  string,
  { publicKeyPem: string }
>;

describe('the service public keys', () => {
  it("are the conformance fixtures' service-production and service-beta, byte for byte", () => {
    expect(PRODUCTION_PUBLIC_KEY).toBe(keys['service-production']!.publicKeyPem);
    expect(BETA_PUBLIC_KEY).toBe(keys['service-beta']!.publicKeyPem);
  });

  it('are two different keys', () => {
    expect(PRODUCTION_PUBLIC_KEY).not.toBe(BETA_PUBLIC_KEY);
  });

  it('import as 2048-bit RSA verification keys with exponent 65537', async () => {
    for (const pem of [PRODUCTION_PUBLIC_KEY, BETA_PUBLIC_KEY]) {
      const key = await importPublicKey(pem);
      expect(key.algorithm).toMatchObject({
        name: 'RSASSA-PKCS1-v1_5',
        modulusLength: 2048,
        hash: { name: 'SHA-256' },
      });
      expect([...(key.algorithm as RsaHashedKeyAlgorithm).publicExponent]).toEqual([1, 0, 1]);
      expect(createPublicKey(pem).asymmetricKeyDetails).toMatchObject({ modulusLength: 2048 });
    }
  });

  it('SERVICE_PUBLIC_KEYS maps each environment to its key and is frozen', () => {
    expect(SERVICE_PUBLIC_KEYS).toEqual({ production: PRODUCTION_PUBLIC_KEY, beta: BETA_PUBLIC_KEY });
    expect(Object.isFrozen(SERVICE_PUBLIC_KEYS)).toBe(true);
  });
});
