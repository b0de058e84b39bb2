// Issue 12 (verify side) and issue 11's clock: what an unsigned or crafted
// request can make verifyWebhook do, and the verdicts that must not depend on
// how the body or the query reached it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCanonicalString } from '../src/canonical.js';
import { DEFAULT_MAX_BODY_BYTES, verifyWebhook, type VerifyWebhookOptions } from '../src/verify-webhook.js';
import { fixtures } from './conformance/fixtures.js';
import { PUBLIC_KEY, signDelivery, webhookBody } from './helpers/sign.js';

const NOW = 1_763_712_345_678;
const base: VerifyWebhookOptions = { publicKeys: PUBLIC_KEY, now: NOW };

async function codeOf(
  delivery: { method: string; target: string; headers: Record<string, string>; body: unknown },
  options: VerifyWebhookOptions = base,
): Promise<string> {
  const result = await verifyWebhook(
    { method: delivery.method, url: delivery.target, headers: delivery.headers, body: delivery.body as string },
    options,
  );
  return result.ok ? 'OK' : result.error.code;
}

/** A signed delivery whose body is padded to exactly `bytes` bytes of JSON text. */
function paddedDelivery(bytes: number): ReturnType<typeof signDelivery> {
  const body = webhookBody({ pad: '' });
  const pad = bytes - JSON.stringify(body).length;
  return signDelivery({ ...body, pad: 'x'.repeat(pad) }, { timestamp: NOW });
}

describe('default body limit', () => {
  it('is 64 KiB: a signed body one byte over is BODY_TOO_LARGE, one at the limit verifies', async () => {
    expect(DEFAULT_MAX_BODY_BYTES).toBe(65_536);
    const over = paddedDelivery(65_537);
    expect(over.body.length).toBe(65_537);
    expect(await codeOf(over)).toBe('BODY_TOO_LARGE');
    expect(await codeOf(paddedDelivery(65_536))).toBe('OK');
    expect(await codeOf(over, { ...base, maxBodyBytes: 1_048_576 })).toBe('OK');
  });
});

describe('a signature no configured key can verify', () => {
  const junk = (body: string): { method: string; target: string; headers: Record<string, string>; body: string } => ({
    method: 'POST',
    target: '/webhooks/payments',
    headers: { host: 'shop.example.kg', 'x-api-timestamp': String(NOW), signature: 'c2lnbmF0dXJl' },
    body,
  });

  it('is SIGNATURE_MISMATCH for a JSON object body, but INVALID_BODY still comes first (CONTRACT §4 order)', async () => {
    expect(await codeOf(junk(JSON.stringify(webhookBody())))).toBe('SIGNATURE_MISMATCH');
    expect(await codeOf(junk('not json'))).toBe('INVALID_BODY');
    expect(await codeOf(junk('[1,2]'))).toBe('INVALID_BODY');
    // JSON.parse reads this nesting, JSON.stringify cannot write it back: the
    // body line cannot be built, whatever the signature.
    const deep = `{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    expect(await codeOf(junk(deep), { ...base, maxBodyBytes: 1_048_576 })).toBe('INVALID_BODY');
    expect(
      await codeOf(
        { ...junk(deep), body: new TextEncoder().encode(deep) },
        {
          ...base,
          maxBodyBytes: 1_048_576,
        },
      ),
    ).toBe('INVALID_BODY');
  });

  it('gives the same code as a full-length wrong signature for any body (the shortcut changes no verdict)', async () => {
    const fullLength = Buffer.alloc(256, 7).toString('base64');
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.json(), fc.string()), async (body) => {
        const short = await codeOf(junk(body));
        const long = await codeOf({ ...junk(body), headers: { ...junk(body).headers, signature: fullLength } });
        expect(short).toBe(long);
      }),
      { numRuns: 200 },
    );
  });
});

describe('a byte-order mark', () => {
  it('gets the same verdict as text and as bytes: both verify (the WHATWG UTF-8 decode drops it)', async () => {
    const delivery = signDelivery(webhookBody(), { timestamp: NOW });
    const withBom = `\uFEFF${delivery.body}`;
    expect(await codeOf({ ...delivery, body: new TextEncoder().encode(withBom) })).toBe('OK');
    expect(await codeOf({ ...delivery, body: withBom })).toBe('OK');
  });

  it('is dropped once only: a second one is not JSON, as text and as bytes', async () => {
    const delivery = signDelivery(webhookBody(), { timestamp: NOW });
    const twice = `\uFEFF\uFEFF${delivery.body}`;
    expect(await codeOf({ ...delivery, body: twice })).toBe('INVALID_BODY');
    expect(await codeOf({ ...delivery, body: new TextEncoder().encode(twice) })).toBe('INVALID_BODY');
  });
});

describe('the signed query is the query the app reads (no webhookUrl)', () => {
  const signedFor = (signed: string, sent: string): ReturnType<typeof signDelivery> =>
    signDelivery(webhookBody(), { timestamp: NOW, signedTarget: `/hook${signed}`, target: `/hook${sent}` });

  it('refuses a leading "?" in the query (`??shop=7` signed as `?shop=7`)', async () => {
    expect(await codeOf(signedFor('?shop=7', '??shop=7'))).toBe('MALFORMED_QUERY');
  });

  it('refuses a repeated name whose values differ (the app may read either)', async () => {
    expect(await codeOf(signedFor('?shop=7', '?shop=8&shop=7'))).toBe('MALFORMED_QUERY');
    expect(await codeOf(signedFor('?shop=7', '?shop=7&shop=8&shop=7'))).toBe('MALFORMED_QUERY');
    expect(await codeOf(signedFor('?shop=7', '?shop&shop=7'))).toBe('MALFORMED_QUERY');
  });

  it('refuses an empty name', async () => {
    expect(await codeOf(signedFor('?=7&shop=7', '?=7&shop=7'))).toBe('MALFORMED_QUERY');
    expect(await codeOf(signedFor('?=&shop=7', '?=&shop=7'))).toBe('MALFORMED_QUERY');
  });

  it('accepts a repeat with the same value, empty pieces, and a query the app reads as signed', async () => {
    expect(await codeOf(signedFor('?shop=7', '?shop=7&shop=7'))).toBe('OK');
    expect(await codeOf(signedFor('?shop=7&a=1', '?shop=7&&a=1&'))).toBe('OK');
    expect(await codeOf(signedFor('?shop=7&test', '?test&shop=7'))).toBe('OK');
    expect(await codeOf(signedFor('', '?'))).toBe('OK');
  });

  it('is not applied when webhookUrl pins the query (the request query is not signed then)', async () => {
    const delivery = signDelivery(webhookBody(), { timestamp: NOW, signedTarget: '/hook?shop=7', target: '/x??y' });
    const options = { ...base, webhookUrl: 'https://shop.example.kg/hook?shop=7' };
    expect(await codeOf(delivery, options)).toBe('OK');
  });

  it('accepts every query of the canonical vectors, sent as the raw text a client writes', async () => {
    let checked = 0;
    for (const vector of fixtures.canonical) {
      const query = vector.request.query;
      if (query === null || query === undefined || Object.keys(query).length === 0) continue;
      const text = Object.entries(query)
        .map(([name, value]) => (value === null ? encodeURIComponent(name) : `${name}=${value}`))
        .join('&');
      let signable = true;
      try {
        buildCanonicalString({ method: 'POST', path: '/hook', headers: { host: 'h' }, query: text, body: '{}' });
      } catch {
        signable = false; // a vector about a malformed escape: MALFORMED_QUERY either way
      }
      if (!signable) continue;
      const delivery = signDelivery(webhookBody(), { timestamp: NOW, target: `/hook?${text}` });
      expect([vector.name, await codeOf(delivery)]).toEqual([vector.name, 'OK']);
      checked++;
    }
    expect(checked).toBeGreaterThan(5);
  });

  it('property: any query built from distinct non-empty names verifies; adding a differing repeat refuses it', async () => {
    const name = fc.stringMatching(/^[a-z0-9_.~-]{1,8}$/);
    // Values the service can sign: every escape complete and decoding to UTF-8 (%80 alone does not).
    const decodes = (v: string) => {
      try {
        decodeURIComponent(v);
        return true;
      } catch {
        return false;
      }
    };
    const value = fc.stringMatching(/^[a-zA-Z0-9_.~%-]{0,8}$/).filter((v) => !/%(?![0-9A-F]{2})/.test(v) && decodes(v));
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.tuple(name, value), { selector: ([n]) => n, minLength: 1, maxLength: 5 }),
        fc.string({ minLength: 1, maxLength: 3 }).map((s) => encodeURIComponent(s)),
        async (pairs, other) => {
          const text = pairs.map(([n, v]) => `${n}=${v}`).join('&');
          expect(await codeOf(signDelivery(webhookBody(), { timestamp: NOW, target: `/hook?${text}` }))).toBe('OK');
          const [firstName, firstValue] = pairs[0]!;
          if (decodeURIComponent(other) === decodeURIComponent(firstValue)) return;
          const repeated = `${text}&${firstName}=${other}`;
          expect(await codeOf(signDelivery(webhookBody(), { timestamp: NOW, target: `/hook?${repeated}` }))).toBe(
            'MALFORMED_QUERY',
          );
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('the clock option', () => {
  it('takes a function, read per delivery, with one options object', async () => {
    let now = NOW;
    const options: VerifyWebhookOptions = { publicKeys: PUBLIC_KEY, now: () => now };
    const delivery = signDelivery(webhookBody(), { timestamp: NOW });
    expect(await codeOf(delivery, options)).toBe('OK');
    now = NOW + 300_001;
    expect(await codeOf(delivery, options)).toBe('TIMESTAMP_OUT_OF_WINDOW');
    now = NOW - 300_000;
    expect(await codeOf(delivery, options)).toBe('OK');
  });

  it('accepts a function returning a Date; a function returning no time is a misuse', async () => {
    const delivery = signDelivery(webhookBody(), { timestamp: NOW });
    expect(await codeOf(delivery, { publicKeys: PUBLIC_KEY, now: () => new Date(NOW) })).toBe('OK');
    const bad = { publicKeys: PUBLIC_KEY, now: (() => 'soon') as unknown as () => number };
    await expect(codeOf(delivery, bad)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});
