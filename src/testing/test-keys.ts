import { PayhookError } from '../errors.js';
import { webCrypto } from '../lib/crypto-key.js';
import { derToPem } from '../lib/pem.js';
import { TEST_PUBLIC_KEY } from './test-public-key.js';

/**
 * An RSA key pair as PEM text: the public key as SPKI (`BEGIN PUBLIC KEY`),
 * which a receiver passes as `publicKeys`, and the private key as PKCS#8
 * (`BEGIN PRIVATE KEY`), which the testing helpers sign with.
 *
 * @example
 * ```ts
 * import { generateTestKeyPair, type TestKeyPair } from 'payhook/testing';
 *
 * const pair: TestKeyPair = await generateTestKeyPair();
 * ```
 */
export interface TestKeyPair {
  /** SPKI PEM: give it to the receiver (`publicKeys`). */
  readonly publicKey: string;
  /** PKCS#8 PEM: sign test deliveries with it. */
  readonly privateKey: string;
}

/**
 * A **test** key pair (RSA 2048), published with payhook so that demos and
 * merchants' tests need no key file. It is the `conformance-2048` pair of
 * payhook's conformance vectors — **not** the payment service's key: the
 * service's private key is never public, so a delivery signed with this key
 * verifies only on a receiver configured with `TEST_KEY_PAIR.publicKey`.
 * Because its private half is public, never accept it outside tests.
 *
 * @example
 * ```ts
 * import { verifyWebhook } from 'payhook';
 * import { createTestWebhook, signWebhook, TEST_KEY_PAIR } from 'payhook/testing';
 *
 * const signed = await signWebhook(createTestWebhook(), {
 *   privateKey: TEST_KEY_PAIR.privateKey,
 *   url: 'https://shop.example.kg/webhooks/payments',
 * });
 * const result = await verifyWebhook(signed, {
 *   publicKeys: TEST_KEY_PAIR.publicKey,
 *   webhookUrl: 'https://shop.example.kg/webhooks/payments',
 * });
 * ```
 */
export const TEST_KEY_PAIR: TestKeyPair = /* @__PURE__ */ Object.freeze({
  publicKey: TEST_PUBLIC_KEY,
  privateKey: `-----BEGIN PRIVATE KEY-----
MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDHvuKYo/by5W17
3w5mIxG2ExIeDTWgEzvEWaR7BXbih5Hdx7Oge+REPecYBNFFNUKpxX1E+MZW0jz2
1dG28JFp329hXBfbP9kQ8qbFNR7TbBvuHM1VwyF3/PzbAR++NpRxbhjO4OGILqzx
FCGKYI/NJerAkpa2tl1mvMkl537RMGbGliv/wKM8WqGqlhWURnGiFhr5XDZm3Lk6
+xQP/IBE1hp91WDNqGjqfU+fvX0FxuQjAKKW6a7A6S0klSO6G+FeEUqCXA69hQk7
9uh4cpWD+vwh8OxiCf9zd/rxHW28WgBUvdAQRNcwFL80GI1T3VsbfY09Ly9LC6X4
LjaUUKvPAgMBAAECggEABco7AxKwD1iZxL8kyZtXOzBjusETEcNM9oMxf3fOlOcG
67QkuR1H2VFacaAXuT2MfT0iXvPyuxFYDA2k1eLOTEPaR8R/VCJbKYcaUQzm1yXc
mP/dVRDIpEcOK09luw7ikBErB4aN2XOeg4eowaKZhU649pqpL/Dd7zyMr7Xj2RUH
y/ND19QquiEO4pdeNQKPRhzNJu9kARtYqt0oFDpREnPGW30oo0uAbbB8HTk93xDl
ad5uVr7MylVdQoHapKey1sTHNLB6Ahl/gFV7OHsYGaiPxOWPGf3gp+DSiF3BXPtO
x7EQzujcwRF0eilGUixB2ZkW14cqteHxmaqw1IbbcQKBgQD9R8cQZ4Hm6nMNAhFS
cnM0LcT+x3Y8gkpQhra/klRrsCTDQUi5u3Il/Qa+qmMwMBCIffpWtIyxpmBAceeI
0cC8Owi+SxuP1y5RTTeALH1MYbBt39rtevpNwHhsbGfM6iSoo9qYmB/SEaeUw/Wq
DNBHDMuhnFeqyshLwfB1RpyAkQKBgQDJ4/M8wm+9WDoM/ZkEQA5OhLvUcdy9aev1
kMFCLehEBRaR3Hb3aB1sH9V9SFe9i6Piqds9e1XeX9HzcJBeiOa3AOIlJMrdnGjb
V711pJK2cVGLwdwalqrcmUMtR0nRV7CxGmIvj/XYlzV6RD0S3iGgObDnhA5tJApy
Q8kfUmiWXwKBgFhooZecSb+svpQf0KQSxxvDjivQu/jLEd2h6FBeZ5FfXrW5KAWM
5H9WHvCW0SCU5nB+aM+zHhk0lgxotgUQElKh2J9z4B8JYWWHqoPXA7WRs9/mb6jN
cGmLcX2HKYRhhoJHD5qMHy9YckJ/VFUTO/BRCxNSW1eGiPvIqoKFL0PBAoGAVP1O
F0TvDzGF9pQHh3+DxlAgVjW8rExb1dujT73NqlzN/Idn2Y0N3cek8wGyVgvj6PaC
YeZ65otF8gpv7CwLm/yWNva/I/3FMplEG7M1Q/J+Vqw8gUDuGsG2QuhgzezxaAzo
Sod7AjvdemQhpcC3PSEsNLol7JIgh6u7jiD+AFcCgYEA2VbZPymxglZ9pU7Yflu+
wfuTNLJynTifuVgr5kr6ylE8G7Y9qVuAJWCwqcTOitJbrIPGjFZr12Ok/2zDXCJN
wFTOhp5b7saCnr1UwlQmTS8RjWcK77DrRX7cBMe708BoMCPb1KMekd+8ubpPwVov
IYlaJNwGYv5BdFAUEl2TLEw=
-----END PRIVATE KEY-----
`,
});

/**
 * Options for {@link generateTestKeyPair}.
 *
 * @example
 * ```ts
 * import { generateTestKeyPair, type GenerateTestKeyPairOptions } from 'payhook/testing';
 *
 * const options: GenerateTestKeyPairOptions = { modulusLength: 3072 };
 * const { publicKey } = await generateTestKeyPair(options);
 * ```
 */
export interface GenerateTestKeyPairOptions {
  /**
   * The RSA modulus length in bits. Receivers refuse keys under 2048 bits
   * unless `allowWeakKeys` is set.
   * @defaultValue 2048
   */
  modulusLength?: number | undefined;
}

/**
 * Generates a fresh RSA key pair (RSASSA-PKCS1-v1_5, SHA-256) with Web
 * Crypto, as PEM text, for tests that must not share the published
 * {@link TEST_KEY_PAIR} (for example, to check that a delivery signed with
 * another key is refused).
 *
 * @throws PayhookError `INVALID_ARGUMENT` for a modulus length that is
 * not a multiple of 8 between 1024 and 8192.
 *
 * @example
 * ```ts
 * import { generateTestKeyPair } from 'payhook/testing';
 *
 * const { publicKey, privateKey } = await generateTestKeyPair();
 * ```
 */
export async function generateTestKeyPair(options?: GenerateTestKeyPairOptions): Promise<TestKeyPair> {
  const modulusLength = options?.modulusLength ?? 2048;
  if (!Number.isInteger(modulusLength) || modulusLength < 1024 || modulusLength > 8192 || modulusLength % 8 !== 0) {
    throw new PayhookError('INVALID_ARGUMENT', 'modulusLength must be a multiple of 8 between 1024 and 8192.');
  }
  const subtle = webCrypto();
  const pair = await subtle.generateKey(
    { name: 'RSASSA-PKCS1-v1_5', modulusLength, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
    true,
    ['sign', 'verify'],
  );
  const [spki, pkcs8] = await Promise.all([
    subtle.exportKey('spki', pair.publicKey),
    subtle.exportKey('pkcs8', pair.privateKey),
  ]);
  return {
    publicKey: derToPem(new Uint8Array(spki), 'PUBLIC KEY'),
    privateKey: derToPem(new Uint8Array(pkcs8), 'PRIVATE KEY'),
  };
}
