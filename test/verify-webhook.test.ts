import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildCanonicalString } from '../src/canonical.js';
import { explainVerificationFailure } from '../src/explain/diagnose.js';
import { clearKeyCache } from '../src/keys.js';
import type { KeyInput } from '../src/lib/key-types.js';
import { webCryptoScheme, type SchemeFactory } from '../src/lib/signature-scheme.js';
import { BETA_PUBLIC_KEY, PRODUCTION_PUBLIC_KEY } from '../src/service-keys.js';
import {
  prepareVerifier,
  verifyWebhook,
  type VerifyWebhookOptions,
  type WebhookRequest,
} from '../src/verify-webhook.js';
import {
  PUBLIC_KEY,
  signDelivery,
  STRANGER_PRIVATE_KEY,
  STRANGER_PUBLIC_KEY,
  webhookBody,
  type SignedDelivery,
} from './helpers/sign.js';

const NOW = 1_763_712_345_678;
const base: VerifyWebhookOptions = { publicKeys: PUBLIC_KEY, now: NOW };

function asRequest(delivery: SignedDelivery, overrides: Partial<WebhookRequest> = {}): WebhookRequest {
  return {
    method: delivery.method,
    url: delivery.target,
    headers: delivery.headers,
    body: delivery.body,
    ...overrides,
  };
}

async function code(request: WebhookRequest, options: VerifyWebhookOptions = base): Promise<string> {
  const result = await verifyWebhook(request, options);
  return result.ok ? 'OK' : result.error.code;
}

afterEach(() => vi.restoreAllMocks());

describe('verifyWebhook', () => {
  it('accepts a signed, fresh webhook and returns it with the canonical string and timestamp', async () => {
    const body = webhookBody({ status: 'success' });
    const delivery = signDelivery(body, { timestamp: NOW - 1000 });
    const result = await verifyWebhook(asRequest(delivery), base);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.webhook.id).toBe(body['id']);
    expect(result.webhook.status).toBe('SUCCEEDED');
    expect(result.webhook.rawStatus).toBe('success');
    expect(result.timestamp).toBe(NOW - 1000);
    expect(
      result.canonical.startsWith(`post\n/webhooks/payments\nhost:shop.example.kg&x-api-timestamp:${NOW - 1000}\n{`),
    ).toBe(true);
    // Without the webhookUrl option there is no registered URL to name: no key at all, not one set to undefined.
    expect(result).not.toHaveProperty('webhookUrl');
  });

  it('accepts text, bytes, ArrayBuffer and pre-parsed bodies, Headers and records, relative and absolute URLs', async () => {
    const delivery = signDelivery(webhookBody(), { timestamp: NOW, target: '/hook?b=2&a=%20x' });
    const bytes = new TextEncoder().encode(delivery.body);
    const bodies = [delivery.body, bytes, bytes.buffer, JSON.parse(delivery.body) as object];
    for (const body of bodies) {
      for (const headers of [delivery.headers, new Headers(delivery.headers)]) {
        for (const url of [delivery.target, `https://shop.example.kg${delivery.target}`, `${delivery.target}#frag`]) {
          expect(await code({ method: 'POST', url, headers, body }), `${typeof body} ${url}`).toBe('OK');
        }
      }
    }
  });

  it('reads an options object once (as documented): a change needs a new object', async () => {
    const options: VerifyWebhookOptions = { ...base };
    const delivery = signDelivery(webhookBody(), { timestamp: NOW });
    expect(await code(asRequest(delivery), options)).toBe('OK');
    options.publicKeys = STRANGER_PUBLIC_KEY;
    options.now = NOW + 10 * 60_000;
    expect(await code(asRequest(delivery), options)).toBe('OK'); // the first reading stands
    expect(await code(asRequest(delivery), { ...options })).toBe('SIGNATURE_MISMATCH'); // key rotation: a new object
    expect(await code(asRequest(delivery), { ...options, publicKeys: [STRANGER_PUBLIC_KEY, PUBLIC_KEY] })).toBe(
      'TIMESTAMP_OUT_OF_WINDOW',
    );
    // A body limit is never lifted: zero, a fraction or Infinity is misuse, as captureDelivery says too.
    for (const maxBodyBytes of [0, 0.5, Number.POSITIVE_INFINITY, Number.NaN]) {
      await expect(verifyWebhook(asRequest(delivery), { ...base, maxBodyBytes })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: 'verifyWebhook: maxBodyBytes must be a whole number of bytes, at least 1.',
      });
    }
    // A misconfigured object is not remembered: every call reports it.
    const bad: VerifyWebhookOptions = { ...base, maxBodyBytes: 0 };
    await expect(verifyWebhook(asRequest(delivery), bad)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(verifyWebhook(asRequest(delivery), bad)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('refuses a body not yet read (a Web Request, a stream) as misuse, not as a signature mismatch', async () => {
    const delivery = signDelivery(webhookBody(), { timestamp: NOW });
    const request = new Request(`https://shop.example.kg${delivery.target}`, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
    });
    await expect(verifyWebhook(request, base)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('await request.text()'),
    });
    const { method, url, headers } = request;
    expect(await code({ method, url, headers, body: await request.text() }, base)).toBe('OK');
    const signedUrl = `https://shop.example.kg${delivery.target}`;
    for (const unread of [
      new Blob([delivery.body]),
      new Response(delivery.body).body,
      // The likeliest slip: the Request (or a Response) itself as the body.
      new Request(signedUrl, { method: 'POST', body: delivery.body }),
      new Response(delivery.body),
    ]) {
      await expect(verifyWebhook({ ...asRequest(delivery), body: unread }, base)).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
      // Every reader of what was signed refuses it alike, rather than reading it as an empty object.
      const unreadRequest = { ...asRequest(delivery), body: unread as never };
      const parts = { method: 'POST', path: '/webhooks/payments', headers: delivery.headers };
      expect(buildCanonicalString({ ...parts, body: delivery.body })).toContain('/webhooks/payments');
      expect(() => buildCanonicalString({ ...parts, body: unread })).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('must be read first') }),
      );
      // A diagnosis never throws: it names the misuse instead of blaming a changed body.
      expect(await explainVerificationFailure(unreadRequest, base)).toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining('must be read first'),
      });
    }
  });

  it('refuses headers given as an array of pairs as misuse, not as a request without a signature', async () => {
    const delivery = signDelivery(webhookBody(), { timestamp: NOW });
    const pairs = Object.entries(delivery.headers) as never; // as `[...new Headers(…)]` gives them
    await expect(verifyWebhook({ ...asRequest(delivery), headers: pairs }, base)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('not an array'),
    });
    const parts = { method: 'POST', path: '/webhooks/payments', body: delivery.body };
    expect(() => buildCanonicalString({ ...parts, headers: pairs })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });

  it('counts a string body in UTF-8 bytes against maxBodyBytes', async () => {
    // 2-, 3- and 4-byte characters (a surrogate pair is one 4-byte character).
    const body = JSON.stringify({ ...webhookBody(), note: 'é€😀'.repeat(40) });
    const bytes = new TextEncoder().encode(body).length;
    const delivery = signDelivery(body, { timestamp: NOW });
    expect(body.length * 3).toBeGreaterThan(bytes); // the counting path, not the shortcut
    expect(await code(asRequest(delivery), { ...base, maxBodyBytes: bytes })).toBe('OK');
    expect(await code(asRequest(delivery), { ...base, maxBodyBytes: bytes - 1 })).toBe('BODY_TOO_LARGE');
  });

  it('parses the body exactly once per delivery', async () => {
    const delivery = signDelivery(webhookBody(), { timestamp: NOW });
    await verifyWebhook(asRequest(delivery), base); // warm the key cache
    const parse = vi.spyOn(JSON, 'parse');
    expect(await code(asRequest(delivery))).toBe('OK');
    expect(parse).toHaveBeenCalledTimes(1);
  });

  it('imports a PEM key once, however many deliveries use it', async () => {
    clearKeyCache();
    const importKey = vi.spyOn(globalThis.crypto.subtle, 'importKey');
    // A fresh options object: one already used keeps the keys it imported.
    const options = { ...base };
    for (let i = 0; i < 5; i++) {
      expect(await code(asRequest(signDelivery(webhookBody(), { timestamp: NOW })), options)).toBe('OK');
    }
    expect(importKey).toHaveBeenCalledTimes(1);
    // Another options object with the same PEM finds it in the process-wide cache.
    expect(await code(asRequest(signDelivery(webhookBody(), { timestamp: NOW })), { ...base })).toBe('OK');
    expect(importKey).toHaveBeenCalledTimes(1);
  });

  describe('checks in the pinned order', () => {
    const signedBad = (body: string, options = {}) => signDelivery(body, { timestamp: NOW, ...options });

    it('MISSING_SIGNATURE before everything else', async () => {
      const delivery = signDelivery('x'.repeat(2000), { timestamp: 'stale' });
      const { signature: _drop, ...headers } = delivery.headers;
      expect(await code(asRequest(delivery, { headers }), { ...base, maxBodyBytes: 10 })).toBe('MISSING_SIGNATURE');
      expect(await code(asRequest(delivery, { headers: { ...headers, signature: '' } }))).toBe('MISSING_SIGNATURE');
    });

    it('BODY_TOO_LARGE before parsing', async () => {
      const delivery = signedBad('not json at all, and long');
      expect(await code(asRequest(delivery), { ...base, maxBodyBytes: 10 })).toBe('BODY_TOO_LARGE');
    });

    it('the canonical-string errors before the signature', async () => {
      const notJson = signedBad('{"a":');
      expect(await code(asRequest(notJson))).toBe('INVALID_BODY');
      expect(await code(asRequest(signedBad('[1,2]')))).toBe('INVALID_BODY');
      const valid = signDelivery(webhookBody(), { timestamp: NOW });
      const { host: _host, ...noHost } = valid.headers;
      expect(await code(asRequest(valid, { headers: noHost }))).toBe('MISSING_HOST');
      expect(await code(asRequest(valid, { url: '/webhooks/%E0%A4%A' }))).toBe('MALFORMED_PATH');
      expect(await code(asRequest(valid, { url: '/webhooks/payments?a=%ZZ' }))).toBe('MALFORMED_QUERY');
      // Several at once: the first in CONTRACT §4's order.
      const badPathAndQuery = '/webhooks/%E0%A4%A?a=%ZZ';
      expect(await code(asRequest(valid, { headers: noHost, url: badPathAndQuery }))).toBe('MISSING_HOST');
      expect(await code(asRequest(valid, { url: badPathAndQuery }))).toBe('MALFORMED_PATH');
      expect(await code(asRequest(notJson, { headers: { ...notJson.headers, host: undefined } }))).toBe('INVALID_BODY');
    });

    it('SIGNATURE_MISMATCH before the timestamp checks', async () => {
      const stale = signDelivery(webhookBody(), { timestamp: NOW - 3_600_000, privateKey: STRANGER_PRIVATE_KEY });
      expect(await code(asRequest(stale))).toBe('SIGNATURE_MISMATCH');
      const valid = signDelivery(webhookBody(), { timestamp: NOW });
      expect(await code(asRequest(valid, { headers: { ...valid.headers, 'x-api-timestamp': String(NOW + 1) } }))).toBe(
        'SIGNATURE_MISMATCH',
      );
      expect(await code(asRequest(valid, { method: 'PUT' }))).toBe('SIGNATURE_MISMATCH');
      expect(await code(asRequest(valid, { headers: { ...valid.headers, 'x-api-extra': '1' } }))).toBe(
        'SIGNATURE_MISMATCH',
      );
      expect(await code(asRequest(valid, { headers: { ...valid.headers, signature: 'not base64 !' } }))).toBe(
        'SIGNATURE_MISMATCH',
      );
    });

    it('the timestamp checks before the payload', async () => {
      const notAWebhook = { hello: 'world' };
      expect(await code(asRequest(signDelivery(notAWebhook, { timestamp: NOW - 300_001 })))).toBe(
        'TIMESTAMP_OUT_OF_WINDOW',
      );
      expect(await code(asRequest(signDelivery(notAWebhook, { timestamp: NOW + 300_001 })))).toBe(
        'TIMESTAMP_OUT_OF_WINDOW',
      );
      expect(await code(asRequest(signDelivery(notAWebhook, { timestamp: null })))).toBe('MISSING_TIMESTAMP');
      expect(await code(asRequest(signDelivery(notAWebhook, { timestamp: '17637e9' })))).toBe('MALFORMED_TIMESTAMP');
      expect(await code(asRequest(signDelivery(notAWebhook, { timestamp: NOW - 300_000 })))).toBe('INVALID_PAYLOAD');
    });

    it('INVALID_PAYLOAD last, with the issues', async () => {
      const result = await verifyWebhook(
        asRequest(signDelivery(webhookBody({ amount: 'ten' }), { timestamp: NOW })),
        base,
      );
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.error.code).toBe('INVALID_PAYLOAD');
      expect(result.error.issues?.map((issue) => issue.path)).toContain('amount');
      expect(await code(asRequest(signDelivery('', { timestamp: NOW })))).toBe('INVALID_PAYLOAD');
    });

    // JSON.parse reads 1e400 as Infinity, which the canonical string writes as null: the signature of a body with null
    // there covers it, but what would be acted on is not what was signed.
    it('INVALID_PAYLOAD for a number beyond range where the signed body has null, as text or parsed', async () => {
      const genuine = JSON.stringify(webhookBody({ data: { tip: null, note: 'null' }, extra: [0, null] }));
      const delivery = signDelivery(genuine, { timestamp: NOW });
      expect(await code(asRequest(delivery), base)).toBe('OK');
      for (const [forged, path] of [
        [genuine.replace('"tip":null', '"tip":1e400'), 'data.tip'],
        [genuine.replace('"tip":null', '"tip":-1e400'), 'data.tip'],
        [genuine.replace('[0,null]', `[0,1${'0'.repeat(400)}]`), 'extra.1'],
      ] as const) {
        for (const body of [forged, JSON.parse(forged) as object]) {
          const result = await verifyWebhook(asRequest(delivery, { body }), base);
          expect(result).toMatchObject({ ok: false, error: { code: 'INVALID_PAYLOAD', issues: [{ path }] } });
        }
      }
    });

    // `now: Date.now()` meant as a clock refuses every delivery from minute five on, and the message sent the
    // merchant to check the server's clock.
    it('says a fixed now is fixed when a delivery is out of the window, and only then', async () => {
      const stale = asRequest(signDelivery(webhookBody(), { timestamp: NOW - 360_000 }));
      for (const now of [NOW, new Date(NOW)]) {
        const result = await verifyWebhook(stale, { publicKeys: PUBLIC_KEY, now });
        expect(result).toMatchObject({ ok: false, error: { code: 'TIMESTAMP_OUT_OF_WINDOW' } });
        expect(result.ok ? '' : result.error.message).toContain('But now is fixed: pass now: () => Date.now().');
      }
      const moving = await verifyWebhook(stale, { publicKeys: PUBLIC_KEY, now: () => NOW });
      expect(moving.ok ? '' : moving.error.message).not.toContain('fixed');
      const malformed = await verifyWebhook(asRequest(signDelivery(webhookBody(), { timestamp: 'x' })), base);
      expect(malformed.ok ? '' : malformed.error.message).not.toContain('fixed');
    });

    it('INVALID_PAYLOAD for a signed delivery without a body, however the absent body is given', async () => {
      const delivery = signDelivery('', { timestamp: NOW });
      for (const body of ['', undefined, null, new Uint8Array(0)]) {
        const result = await verifyWebhook(asRequest(delivery, { body: body as WebhookRequest['body'] }), base);
        expect(result).toEqual({
          ok: false,
          error: {
            code: 'INVALID_PAYLOAD',
            message: expect.stringContaining('empty') as string,
            issues: [{ path: '', message: 'the body is empty' }],
          },
        });
      }
    });

    it('reads numeric text in fields.amount as its number, but refuses it in amount (vector signed-amount-string)', async () => {
      const request = asRequest(signDelivery(webhookBody({ fields: { amount: '100' } }), { timestamp: NOW }));
      const result = await verifyWebhook(request, base);
      if (!result.ok) throw new Error(result.error.message);
      expect(result.webhook.fields.amount).toBe(100);
      expect(await code(request, { ...base, strict: true })).toBe('INVALID_PAYLOAD');
      const topLevel = asRequest(signDelivery(webhookBody({ amount: '100' }), { timestamp: NOW }));
      expect(await code(topLevel, base)).toBe('INVALID_PAYLOAD');
    });

    it('honours toleranceMs and now as a Date', async () => {
      const delivery = signDelivery(webhookBody(), { timestamp: NOW - 10_000 });
      expect(await code(asRequest(delivery), { ...base, toleranceMs: 9_999 })).toBe('TIMESTAMP_OUT_OF_WINDOW');
      expect(await code(asRequest(delivery), { publicKeys: PUBLIC_KEY, now: new Date(NOW), toleranceMs: 10_000 })).toBe(
        'OK',
      );
    });
  });

  describe('maxBodyBytes', () => {
    it('counts UTF-8 bytes of text, the boundary included', async () => {
      const body = JSON.stringify(webhookBody({ fields: { amount: 100, note: 'é'.repeat(50) } }));
      const bytes = new TextEncoder().encode(body).byteLength;
      expect(bytes).toBeGreaterThan(body.length);
      const delivery = signDelivery(body, { timestamp: NOW });
      expect(await code(asRequest(delivery), { ...base, maxBodyBytes: bytes })).toBe('OK');
      expect(await verifyWebhook(asRequest(delivery), { ...base, maxBodyBytes: bytes - 1 })).toMatchObject({
        ok: false,
        error: { code: 'BODY_TOO_LARGE', message: expect.stringContaining(`the limit is ${bytes - 1}`) as string },
      });
      expect(
        await code(asRequest(delivery, { body: new TextEncoder().encode(body) }), { ...base, maxBodyBytes: bytes - 1 }),
      ).toBe('BODY_TOO_LARGE');
      // A parsed body was already limited by its parser.
      expect(await code(asRequest(delivery, { body: JSON.parse(body) as object }), { ...base, maxBodyBytes: 10 })).toBe(
        'OK',
      );
    });

    it('refuses a 1 MiB body by default (the default limit is 32 KiB)', async () => {
      const delivery = signDelivery(webhookBody({ fields: { amount: 1, pad: 'x'.repeat(1_048_576) } }), {
        timestamp: NOW,
      });
      expect(await code(asRequest(delivery))).toBe('BODY_TOO_LARGE');
    });
  });

  describe('keys and environments', () => {
    const delivery = signDelivery(webhookBody(), { timestamp: NOW });

    it('accepts any key of a list and refuses a delivery signed by another key', async () => {
      expect(await code(asRequest(delivery), { now: NOW, publicKeys: [STRANGER_PUBLIC_KEY, PUBLIC_KEY] })).toBe('OK');
      expect(await code(asRequest(delivery), { now: NOW, publicKeys: [STRANGER_PUBLIC_KEY] })).toBe(
        'SIGNATURE_MISMATCH',
      );
    });

    it('uses the shipped keys of the named environment(s), alone or with publicKeys', async () => {
      expect(await code(asRequest(delivery), { now: NOW, environment: 'production' })).toBe('SIGNATURE_MISMATCH');
      expect(await code(asRequest(delivery), { now: NOW, environment: ['beta'] })).toBe('SIGNATURE_MISMATCH');
      expect(await code(asRequest(delivery), { now: NOW, environment: 'beta', publicKeys: PUBLIC_KEY })).toBe('OK');
      expect(await code(asRequest(delivery), { now: NOW, publicKeys: BETA_PUBLIC_KEY })).toBe('SIGNATURE_MISMATCH');
    });

    it('maps each environment to its own shipped key', async () => {
      // No delivery can be signed with the shipped keys: read the keys the verifier imports.
      const keysOf = async (options: VerifyWebhookOptions): Promise<readonly KeyInput[]> => {
        let imported: readonly KeyInput[] = [];
        const recording: SchemeFactory = (keys, keyOptions) => {
          imported = keys;
          return webCryptoScheme(keys, keyOptions);
        };
        await prepareVerifier(options, recording).ready();
        return imported;
      };
      expect(PRODUCTION_PUBLIC_KEY).not.toBe(BETA_PUBLIC_KEY);
      expect(await keysOf({ environment: 'production' })).toEqual([PRODUCTION_PUBLIC_KEY]);
      expect(await keysOf({ environment: 'beta' })).toEqual([BETA_PUBLIC_KEY]);
      expect(await keysOf({ environment: ['beta', 'beta'] })).toEqual([BETA_PUBLIC_KEY, BETA_PUBLIC_KEY]);
      expect(await keysOf({ environment: 'production', publicKeys: STRANGER_PUBLIC_KEY })).toEqual([
        STRANGER_PUBLIC_KEY,
        PRODUCTION_PUBLIC_KEY,
      ]);
    });

    // PUBLIC_KEY is payhook's published test key (TEST_KEY_PAIR), whose private half anyone has.
    it("refuses the published test key beside the production key, in any spelling, but not beside beta's", async () => {
      const jwk = createPublicKey(PUBLIC_KEY).export({ format: 'jwk' }) as { kty: string; n: string; e: string };
      const modulus = Buffer.from(jwk.n, 'base64url');
      const spellings: KeyInput[] = [
        PUBLIC_KEY,
        PUBLIC_KEY.replace(/\n/g, '\r\n'),
        jwk,
        { ...jwk, n: `${jwk.n}=` }, // padded
        { ...jwk, n: modulus.toString('base64') }, // standard alphabet
        { ...jwk, n: Buffer.concat([Buffer.from([0]), modulus]).toString('base64url') }, // a leading zero
        { ...jwk, n: jwk.n.replace(/.{64}/g, '$&\n') }, // wrapped, as Node's import takes it
        { ...jwk, n: `${jwk.n}=\r\n` }, // padded, then a line break
      ];
      // The production key given by hand: as a file read on Windows, or as a JWK.
      const production: KeyInput[] = [
        PRODUCTION_PUBLIC_KEY,
        PRODUCTION_PUBLIC_KEY.replace(/\n/g, '\r\n'),
        createPublicKey(PRODUCTION_PUBLIC_KEY).export({ format: 'jwk' }),
      ];
      const delivery = asRequest(signDelivery(webhookBody(), { timestamp: NOW }));
      for (const key of spellings) {
        for (const options of [
          { environment: 'production' as const, publicKeys: key },
          ...production.map((productionKey) => ({ publicKeys: [STRANGER_PUBLIC_KEY, key, productionKey] })),
        ]) {
          await expect(verifyWebhook(delivery, { now: NOW, ...options })).rejects.toMatchObject({
            code: 'INVALID_ARGUMENT',
            message: expect.stringContaining("payhook's published test key (TEST_KEY_PAIR) beside the production key"),
          });
        }
        expect(await code(delivery, { now: NOW, environment: 'beta', publicKeys: key })).toBe('OK');
      }
      expect(await code(delivery, { now: NOW, environment: 'production', publicKeys: STRANGER_PUBLIC_KEY })).toBe(
        'SIGNATURE_MISMATCH',
      );
    });

    // The sandbox signs a SUCCEEDED for whatever URL a sandbox account names, and nothing tells it from a real one.
    it('refuses the beta key beside the production key, in any spelling, through environment or publicKeys', async () => {
      const jwk = (pem: string) => createPublicKey(pem).export({ format: 'jwk' });
      const wrapped = { ...jwk(BETA_PUBLIC_KEY), n: String(jwk(BETA_PUBLIC_KEY).n).replace(/.{64}/g, '$& ') };
      const betas: KeyInput[] = [
        BETA_PUBLIC_KEY,
        BETA_PUBLIC_KEY.replace(/\n/g, '\r\n'),
        jwk(BETA_PUBLIC_KEY),
        wrapped,
      ];
      const productions: KeyInput[] = [PRODUCTION_PUBLIC_KEY, jwk(PRODUCTION_PUBLIC_KEY)];
      const both: VerifyWebhookOptions[] = [
        { environment: ['production', 'beta'] },
        { environment: ['beta', 'production'], publicKeys: STRANGER_PUBLIC_KEY },
        ...betas.map((beta) => ({ environment: 'production' as const, publicKeys: beta })),
        ...productions.map((production) => ({
          environment: 'beta' as const,
          publicKeys: [STRANGER_PUBLIC_KEY, production],
        })),
        ...betas.flatMap((beta) => productions.map((production) => ({ publicKeys: [beta, production] }))),
      ];
      const delivery = asRequest(signDelivery(webhookBody(), { timestamp: NOW }));
      for (const options of both) {
        await expect(verifyWebhook(delivery, { now: NOW, ...options })).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
          message: expect.stringContaining('the production and beta (sandbox) keys together'),
        });
      }
      // Each alone, or with keys of your own, is taken.
      for (const options of [
        { environment: 'beta' as const },
        { publicKeys: [...betas, STRANGER_PUBLIC_KEY] },
        { environment: 'production' as const },
      ]) {
        expect(await code(delivery, { now: NOW, ...options })).toBe('SIGNATURE_MISMATCH');
      }
    });

    it('passes allowWeakKeys on: a 1024-bit key is refused (WEAK_KEY) unless it is set, then it verifies', async () => {
      const weak = generateKeyPairSync('rsa', { modulusLength: 1024 });
      const weakPublic = weak.publicKey.export({ type: 'spki', format: 'pem' }) as string;
      const weakPrivate = weak.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
      const signed = asRequest(signDelivery(webhookBody(), { timestamp: NOW, privateKey: weakPrivate }));
      await expect(verifyWebhook(signed, { now: NOW, publicKeys: weakPublic })).rejects.toMatchObject({
        code: 'WEAK_KEY',
      });
      expect(await code(signed, { now: NOW, publicKeys: weakPublic, allowWeakKeys: true })).toBe('OK');
    });

    it('throws for misuse, never for a delivery', async () => {
      const request = asRequest(delivery);
      await expect(verifyWebhook(request, {})).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining("{ environment: 'production' }") as string,
      });
      await expect(verifyWebhook(request, { publicKeys: [] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(verifyWebhook(request, { environment: 'staging' as never })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
      await expect(verifyWebhook(request, { publicKeys: 'not a key' })).rejects.toMatchObject({ code: 'INVALID_KEY' });
      // A key that failed is not kept: the same options object fails again, it never verifies without keys.
      const badKey: VerifyWebhookOptions = { publicKeys: STRANGER_PUBLIC_KEY.replace(/[A-Za-z]{8}/, '!!!!!!!!') };
      await expect(verifyWebhook(request, badKey)).rejects.toMatchObject({ code: 'INVALID_KEY' });
      await expect(verifyWebhook(request, badKey)).rejects.toMatchObject({ code: 'INVALID_KEY' });
      await expect(verifyWebhook(request, { ...base, maxBodyBytes: 0 })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
      await expect(verifyWebhook(request, { ...base, toleranceMs: -1 })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
      await expect(verifyWebhook(request, { ...base, webhookUrl: '/webhooks/payments' })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
      await expect(verifyWebhook(null as never, base)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(verifyWebhook({ ...request, url: undefined as never }, base)).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
      for (const wrong of [{ method: 1 }, { headers: null }, { headers: 'host: shop.example.kg' }]) {
        await expect(
          verifyWebhook({ ...request, ...wrong } as never, base),
          JSON.stringify(wrong),
        ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      }
    });

    it('checks every option when it is first read, before any delivery is: a bad one throws even for an unsigned request', async () => {
      const { signature: _drop, ...headers } = delivery.headers;
      const unsigned = asRequest(delivery, { headers });
      expect(await code(unsigned)).toBe('MISSING_SIGNATURE');
      const misuses: VerifyWebhookOptions[] = [
        { ...base, now: Number.NaN },
        { ...base, toleranceMs: -1 },
        { ...base, maxBodyBytes: '32768' as never },
        { ...base, webhookUrl: 'mailto:payments@shop.example.kg' },
      ];
      for (const options of misuses) {
        await expect(verifyWebhook(unsigned, options), JSON.stringify(options)).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
        });
      }
    });

    it('never throws for any delivery', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            method: fc.constantFrom('POST', 'GET', 'post', ''),
            url: fc.oneof(fc.string(), fc.webUrl(), fc.constant('/webhooks/payments')),
            headers: fc.dictionary(
              fc.constantFrom(
                'host',
                'signature',
                'x-api-timestamp',
                'x-api-x',
                'Host',
                'SIGNATURE',
                'x-forwarded-host',
              ),
              fc.string(),
            ),
            body: fc.oneof(fc.string(), fc.json(), fc.uint8Array(), fc.object()),
          }),
          async (request) => {
            const result = await verifyWebhook(request, { ...base, trustForwardedHeaders: true });
            expect(result.ok).toBe(false);
            if (!result.ok) expect(result.error.message.length).toBeGreaterThan(0);
          },
        ),
        { numRuns: 300 },
      );
    });
  });

  describe('behind a proxy', () => {
    // The service signed for its view of the URL; the app sees another.
    const signed = () =>
      signDelivery(webhookBody(), {
        timestamp: NOW,
        host: 'app.internal:8080',
        target: '/payments?shop=7',
        signedHost: 'shop.example.kg',
        signedTarget: '/api/webhooks/payments?shop=7',
      });

    it('fails without help, and verifies with webhookUrl', async () => {
      const delivery = signed();
      expect(await code(asRequest(delivery))).toBe('SIGNATURE_MISMATCH');
      expect(
        await code(asRequest(delivery), {
          ...base,
          webhookUrl: 'https://shop.example.kg/api/webhooks/payments?shop=7',
        }),
      ).toBe('OK');
      expect(
        await code(asRequest(delivery), {
          ...base,
          webhookUrl: 'https://SHOP.example.kg:443/api/webhooks/payments?shop=7',
        }),
      ).toBe('OK');
      expect(
        await code(asRequest(delivery), { ...base, webhookUrl: 'https://shop.example.kg/api/webhooks/payments' }),
      ).toBe('SIGNATURE_MISMATCH');
    });

    it('may rewrite the path, but a query the registered URL has must reach the app (URL_MISMATCH)', async () => {
      const stripped = { ...asRequest(signed()), url: '/payments' };
      const options = { ...base, webhookUrl: 'https://shop.example.kg/api/webhooks/payments?shop=7' };
      expect(await code(stripped, options)).toBe('URL_MISMATCH');
    });

    it('pins the host: a delivery signed for another endpoint never verifies', async () => {
      const forOther = signDelivery(webhookBody(), { timestamp: NOW, host: 'other-merchant.example.kg' });
      expect(await code(asRequest(forOther))).toBe('OK'); // Host as sent decides without a pin
      expect(
        await code(asRequest(forOther), { ...base, webhookUrl: 'https://shop.example.kg/webhooks/payments' }),
      ).toBe('SIGNATURE_MISMATCH');
    });

    it('uses X-Forwarded-Host (first value) only when trusted; webhookUrl wins', async () => {
      const delivery = signDelivery(webhookBody(), {
        timestamp: NOW,
        host: 'app.internal:8080',
        signedHost: 'shop.example.kg',
        headers: { 'x-forwarded-host': 'shop.example.kg, edge.example.kg', 'x-forwarded-proto': 'https' },
      });
      expect(await code(asRequest(delivery))).toBe('SIGNATURE_MISMATCH');
      expect(await code(asRequest(delivery), { ...base, trustForwardedHeaders: true })).toBe('OK');
      expect(
        await code(asRequest(delivery), {
          ...base,
          trustForwardedHeaders: true,
          webhookUrl: 'https://elsewhere.example.kg/webhooks/payments',
        }),
      ).toBe('SIGNATURE_MISMATCH');
      const noForwarded = signDelivery(webhookBody(), { timestamp: NOW });
      expect(await code(asRequest(noForwarded), { ...base, trustForwardedHeaders: true })).toBe('OK');
    });

    it("takes an absolute URL's authority when there is no Host header", async () => {
      const delivery = signDelivery(webhookBody(), { timestamp: NOW, host: 'shop.example.kg:8443' });
      const { host: _host, ...headers } = delivery.headers;
      expect(await code(asRequest(delivery, { headers, url: `https://shop.example.kg:8443${delivery.target}` }))).toBe(
        'OK',
      );
      expect(
        await code(asRequest(delivery, { headers, url: `https://user:pw@shop.example.kg:8443${delivery.target}` })),
      ).toBe('OK');
      expect(await code(asRequest(delivery, { headers }))).toBe('MISSING_HOST');
    });

    it('refuses a Host of commas alone, which names no host (MISSING_HOST)', async () => {
      const delivery = signDelivery(webhookBody(), { timestamp: NOW });
      for (const host of [',', ' , ', ',,']) {
        expect(await code(asRequest(delivery, { headers: { ...delivery.headers, host } }))).toBe('MISSING_HOST');
      }
    });
  });
});
