// payhook/node checks signatures with node:crypto: the same verdicts as the
// core's Web Crypto scheme on every conformance vector, and no body read for
// a signature no key can have made, since Node's RSA operation is cheap.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { nodeCryptoScheme } from '../../src/node/node-crypto-scheme.js';
import { prepareVerifier, type VerifyWebhookOptions } from '../../src/verify-webhook.js';
import { fixtures } from '../conformance/fixtures.js';
import { PUBLIC_KEY, signDelivery, webhookBody } from '../helpers/sign.js';

const keyPem = (name: string): string => {
  const key = (fixtures.keys as Record<string, { publicKeyPem: string }>)[name];
  if (!key) throw new Error(`no key ${name} in keys.json`);
  return key.publicKeyPem;
};

describe('the node:crypto scheme', () => {
  afterEach(() => vi.restoreAllMocks());

  it('gives every request vector its expected verdict, as the Web Crypto scheme does', async () => {
    expect(fixtures.requests.length).toBeGreaterThan(40);
    for (const vector of fixtures.requests) {
      const options: VerifyWebhookOptions = { publicKeys: vector.publicKeys.map(keyPem), now: vector.now };
      const request = { ...vector.request, url: vector.request.url };
      const viaNode = await prepareVerifier(options, nodeCryptoScheme).verify(request);
      const viaWeb = await prepareVerifier(options).verify(request);
      const expected = vector.expect['ok'] === true ? 'OK' : vector.expect['code'];
      expect([vector.name, viaNode.ok ? 'OK' : viaNode.error.code]).toEqual([vector.name, expected]);
      expect(viaNode).toEqual(viaWeb);
    }
  });

  it('never parses the body of a signature no key can have made, whatever its size', async () => {
    const verifier = prepareVerifier({ publicKeys: PUBLIC_KEY, now: 1_763_712_345_678 }, nodeCryptoScheme);
    const parse = vi.spyOn(JSON, 'parse');
    const random = Buffer.from(crypto.getRandomValues(new Uint8Array(256))).toString('base64');
    for (const body of [JSON.stringify(webhookBody()), '{"a":', 'not json', '[1]']) {
      const request = { method: 'POST', url: '/hook', headers: { host: 'h', signature: random }, body };
      expect(await verifier.verify(request)).toMatchObject({ ok: false, error: { code: 'SIGNATURE_MISMATCH' } });
    }
    expect(parse).not.toHaveBeenCalled();
    // A signature the key made (over another delivery) may be genuine: the body is read, and its error reported.
    const replayed = signDelivery(webhookBody(), { timestamp: 1_763_712_345_678 }).headers['signature']!;
    const request = { method: 'POST', url: '/hook', headers: { host: 'h', signature: replayed }, body: '[1]' };
    expect(await verifier.verify(request)).toMatchObject({ ok: false, error: { code: 'INVALID_BODY' } });
  });

  it('refuses the same keys with the same codes as the core', async () => {
    const weak = keyPem('weak-1024');
    await expect(prepareVerifier({ publicKeys: weak }, nodeCryptoScheme).ready()).rejects.toMatchObject({
      code: 'WEAK_KEY',
    });
    await expect(prepareVerifier({ publicKeys: 'not a key' }, nodeCryptoScheme).ready()).rejects.toMatchObject({
      code: 'INVALID_KEY',
    });
  });
});
