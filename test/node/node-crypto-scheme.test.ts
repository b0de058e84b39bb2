// payhook/node checks signatures with node:crypto: the same verdicts as the
// core's Web Crypto scheme on every conformance vector and on hand-made
// encodings, and no large body parsed for a signature no key can have made.
import { constants, createHash, privateEncrypt } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { webCryptoScheme } from '../../src/lib/signature-scheme.js';
import { nodeCryptoScheme } from '../../src/node/node-crypto-scheme.js';
import { prepareVerifier, type VerifyWebhookOptions } from '../../src/verify-webhook.js';
import { fixtures } from '../conformance/fixtures.js';
import { PRIVATE_KEY, PUBLIC_KEY, signDelivery, webhookBody } from '../helpers/sign.js';
import { warmBinaryStrings } from '../helpers/fast-check.js';

beforeAll(warmBinaryStrings);

const privateEncryptRaw = (block: Buffer): Buffer =>
  privateEncrypt({ key: PRIVATE_KEY, padding: constants.RSA_NO_PADDING }, block);

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

  it('refuses a signature no key can have made, whatever the body, and never parses a large one for it', async () => {
    const verifier = prepareVerifier({ publicKeys: PUBLIC_KEY, now: 1_763_712_345_678 }, nodeCryptoScheme);
    const random = Buffer.from(crypto.getRandomValues(new Uint8Array(256))).toString('base64');
    const large = JSON.stringify(webhookBody({ fields: { note: 'x'.repeat(16_384) } }));
    for (const body of [JSON.stringify(webhookBody()), '{"a":', 'not json', '[1]', large, `${large.slice(0, -1)},`]) {
      const request = { method: 'POST', url: '/hook', headers: { host: 'h', signature: random }, body };
      const parse = vi.spyOn(JSON, 'parse');
      expect(await verifier.verify(request)).toMatchObject({ ok: false, error: { code: 'SIGNATURE_MISMATCH' } });
      if (body.length > 8_192) expect(parse).not.toHaveBeenCalled();
      parse.mockRestore();
    }
    // A signature the key made (over another delivery) may be genuine: the body is read, and its error reported.
    const replayed = signDelivery(webhookBody(), { timestamp: 1_763_712_345_678 }).headers['signature']!;
    const request = { method: 'POST', url: '/hook', headers: { host: 'h', signature: replayed }, body: '[1]' };
    expect(await verifier.verify(request)).toMatchObject({ ok: false, error: { code: 'INVALID_BODY' } });
  });

  it('checks early only the keys the core checks early: a non-extractable CryptoKey gives the same codes', async () => {
    // CONTRACT.md §4: a non-extractable CryptoKey skips the public-operation test, so a
    // signature of the right length over a body that cannot be read is INVALID_BODY in both.
    const der = Buffer.from(PUBLIC_KEY.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    const key = await crypto.subtle.importKey('spki', der, algorithm, false, ['verify']);
    const options: VerifyWebhookOptions = { publicKeys: key, now: 1_763_712_345_678 };
    const [viaWeb, viaNode] = [prepareVerifier(options), prepareVerifier(options, nodeCryptoScheme)];
    const random = Buffer.from(crypto.getRandomValues(new Uint8Array(256))).toString('base64');
    for (const body of ['not json', '[1]', JSON.stringify(webhookBody())]) {
      const request = { method: 'POST', url: '/hook', headers: { host: 'h', signature: random }, body };
      const web = await viaWeb.verify(request);
      expect([body, await viaNode.verify(request)]).toEqual([body, web]);
    }
    const request = { method: 'POST', url: '/hook', headers: { host: 'h', signature: random }, body: '[1]' };
    expect(await viaNode.verify(request)).toMatchObject({ ok: false, error: { code: 'INVALID_BODY' } });
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

describe('the node:crypto scheme decides as RSASSA-PKCS1-v1_5 / SHA-256 does', () => {
  // Signatures over hand-built encoded messages: the genuine one, and encodings Web Crypto refuses.
  const digestInfo = (hash: Buffer, prefixHex: string) => Buffer.concat([Buffer.from(prefixHex, 'hex'), hash]);
  const SHA256_PREFIX = '3031300d060960864801650304020105000420';
  const NO_NULL_PREFIX = '302f300b0609608648016503040201' + '0420';
  const signRaw = (t: Buffer, padding = 256 - 3 - t.length) => {
    const block = Buffer.concat([Buffer.from([0, 1]), Buffer.alloc(padding, 0xff), Buffer.from([0]), t]);
    const sized = block.length === 256 ? block : Buffer.concat([block, Buffer.alloc(256 - block.length)]);
    return privateEncryptRaw(sized).toString('base64');
  };

  it('agrees with Web Crypto on genuine, altered and oddly encoded signatures, for any canonical string', async () => {
    const web = await webCryptoScheme([PUBLIC_KEY], {});
    const node = await nodeCryptoScheme([PUBLIC_KEY], {});
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary' }), fc.nat(5), async (canonical, variant) => {
        const hash = createHash('sha256').update(canonical, 'utf8').digest();
        const otherHash = createHash('sha256').update(`${canonical}x`, 'utf8').digest();
        const header = [
          signRaw(digestInfo(hash, SHA256_PREFIX)),
          signRaw(digestInfo(otherHash, SHA256_PREFIX)),
          signRaw(digestInfo(hash, NO_NULL_PREFIX)),
          signRaw(Buffer.concat([Buffer.from([0]), digestInfo(hash, SHA256_PREFIX)]), 256 - 4 - 51),
          signRaw(digestInfo(hash, SHA256_PREFIX)).replace(/^./, (c) => (c === 'A' ? 'B' : 'A')),
          Buffer.from(crypto.getRandomValues(new Uint8Array(256))).toString('base64'),
        ][variant]!;
        const [webBytes, nodeBytes] = [web.decode(header), node.decode(header)];
        const webSays = webBytes !== null && (await web.verify(canonical, webBytes));
        const nodeSays = nodeBytes !== null && (await node.verify(canonical, nodeBytes));
        expect([variant, nodeSays]).toEqual([variant, webSays]);
        if (variant === 0) expect(nodeSays).toBe(true);
        // The early filter never refuses a signature that verifies.
        if (webSays) expect(node.couldBeSignature(nodeBytes!)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
