// What an unsigned or crafted request can make verifyWebhook do, and the
// verdicts that must not depend on how the body or the query reached it.
import { createPublicKey } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildCanonicalString } from '../src/canonical.js';
import { DEFAULT_MAX_BODY_BYTES, verifyWebhook, type VerifyWebhookOptions } from '../src/verify-webhook.js';
import { MAX_BODY_MEMBERS, MAX_BODY_NAMES_LENGTH } from '../src/lib/json-body.js';
import { fixtures } from './conformance/fixtures.js';
import { PUBLIC_KEY, signDelivery, webhookBody, type SignedDelivery } from './helpers/sign.js';

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
  it('is 32 KiB: a signed body one byte over is BODY_TOO_LARGE, one at the limit verifies', async () => {
    expect(DEFAULT_MAX_BODY_BYTES).toBe(32_768);
    const over = paddedDelivery(32_769);
    expect(over.body.length).toBe(32_769);
    expect(await codeOf(over)).toBe('BODY_TOO_LARGE');
    expect(await codeOf(paddedDelivery(32_768))).toBe('OK');
    expect(await codeOf(over, { ...base, maxBodyBytes: 1_048_576 })).toBe('OK');
  });
});

/** A key imported as not extractable: its RSA numbers cannot be read, so it is never filtered early. */
async function sealedOptions(): Promise<VerifyWebhookOptions> {
  const der = createPublicKey(PUBLIC_KEY).export({ type: 'spki', format: 'der' });
  const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  return { ...base, publicKeys: await crypto.subtle.importKey('spki', der, algorithm, false, ['verify']) };
}

const randomSignature = (): string => Buffer.from(crypto.getRandomValues(new Uint8Array(256))).toString('base64');
/** A signature the key really made, over another delivery: it could be genuine for any body. */
const replayedSignature = signDelivery(webhookBody(), { timestamp: NOW }).headers['signature']!;

function withSignature(signature: string, body: string | Uint8Array, target = '/webhooks/payments') {
  return {
    method: 'POST',
    target,
    headers: { host: 'shop.example.kg', 'x-api-timestamp': String(NOW), signature },
    body,
  };
}

describe('a signature no configured key can have made (CONTRACT §4)', () => {
  afterEach(() => vi.restoreAllMocks());

  it('is SIGNATURE_MISMATCH ahead of every body and head error, and a body that cannot verify is never parsed', async () => {
    const parse = vi.spyOn(JSON, 'parse');
    const deep = `{"a":${'['.repeat(5_000)}${']'.repeat(5_000)}}`;
    for (const signature of ['c2lnbmF0dXJl', 'not base64 !', randomSignature()]) {
      // A small JSON object under a full-length signature is the one body Web Crypto may read first: see
      // the next test.
      for (const body of ['not json', '[1,2]', '"text"', deep]) {
        for (const form of [body, new TextEncoder().encode(body)]) {
          expect(await codeOf(withSignature(signature, form))).toBe('SIGNATURE_MISMATCH');
          const noHost = { ...withSignature(signature, form, '/h%E0'), headers: { signature } };
          expect(await codeOf(noHost)).toBe('SIGNATURE_MISMATCH');
        }
      }
    }
    expect(parse).not.toHaveBeenCalled();
    // Web Crypto's filter costs more than a small object's parse, so such a body is read, then refused.
    const small = JSON.stringify(webhookBody());
    expect(await codeOf(withSignature('c2lnbmF0dXJl', small))).toBe('SIGNATURE_MISMATCH');
    expect(parse).not.toHaveBeenCalled();
    expect(await codeOf(withSignature(randomSignature(), small))).toBe('SIGNATURE_MISMATCH');
    const noHost = { ...withSignature(randomSignature(), small), headers: { signature: randomSignature() } };
    expect(await codeOf(noHost)).toBe('SIGNATURE_MISMATCH');
  });

  it('is decided before the body for a signature that could be genuine: body errors first, then head errors', async () => {
    expect(await codeOf(withSignature(replayedSignature, 'not json'))).toBe('INVALID_BODY');
    expect(await codeOf(withSignature(replayedSignature, '[1,2]'))).toBe('INVALID_BODY');
    expect(await codeOf(withSignature(replayedSignature, JSON.stringify(webhookBody())))).toBe('SIGNATURE_MISMATCH');
    const noHost = { ...withSignature(replayedSignature, '{}', '/hook'), headers: { signature: replayedSignature } };
    expect(await codeOf(noHost)).toBe('MISSING_HOST');
    expect(await codeOf({ ...noHost, body: '[1]' })).toBe('INVALID_BODY');
  });

  it('property: a random signature is SIGNATURE_MISMATCH for any body; a possible one gets what a full check gives', async () => {
    const sealed = await sealedOptions();
    const pad = 'x'.repeat(9_000);
    const body = fc.oneof(
      fc.json(),
      fc.string(),
      fc.jsonValue().map((value) => JSON.stringify({ pad, value })),
      fc.jsonValue().map((value) => JSON.stringify([pad, value])),
      fc.tuple(fc.jsonValue(), fc.nat(), fc.string({ maxLength: 2 })).map(([value, at, insert]) => {
        const text = JSON.stringify({ value, pad });
        const i = at % text.length;
        return text.slice(0, i) + insert + text.slice(i + 1);
      }),
      fc.integer({ min: 60, max: 70 }).map((depth) => `{"pad":"${pad}","a":${'['.repeat(depth)}${']'.repeat(depth)}}`),
    );
    await fc.assert(
      fc.asyncProperty(body, async (text) => {
        expect(await codeOf(withSignature(randomSignature(), text))).toBe('SIGNATURE_MISMATCH');
        // The sealed key is never filtered early: it takes the full path every time.
        const possible = withSignature(replayedSignature, text);
        expect(await codeOf(possible)).toBe(await codeOf(possible, sealed));
      }),
      { numRuns: 300 },
    );
  });
});

/** `{"0":0,"1":0,…}`: as many keys as `bytes` of JSON text hold, the costliest body of that size to parse. */
function manyKeys(bytes: number): string {
  const parts: string[] = [];
  // The braces and the filler member `,"~":""` that pads to the size.
  for (let i = 0, size = 9; ; i++) {
    const member = `"${i.toString(36)}":0`;
    if (size + member.length + 1 > bytes) break;
    parts.push(member);
    size += member.length + 1;
  }
  const head = `{${parts.join(',')}`;
  return `${head},"~":"${'x'.repeat(bytes - head.length - 8)}"}`;
}

describe('a large body', () => {
  afterEach(() => vi.restoreAllMocks());

  it('under a signature no key can have made is refused without being parsed; a signed one is parsed once', async () => {
    const body = manyKeys(DEFAULT_MAX_BODY_BYTES);
    expect(body.length).toBe(DEFAULT_MAX_BODY_BYTES);
    const parse = vi.spyOn(JSON, 'parse');
    expect(await codeOf(withSignature(randomSignature(), body))).toBe('SIGNATURE_MISMATCH');
    expect(await codeOf(withSignature(randomSignature(), new TextEncoder().encode(body)))).toBe('SIGNATURE_MISMATCH');
    expect(parse).not.toHaveBeenCalled();
    // The same size of body, signed: parsed once, for the line and the payment (its thousands of members under
    // one key: more than MAX_BODY_MEMBERS at the top level are INVALID_BODY, below).
    const signed = signDelivery({ ...webhookBody(), extra: JSON.parse(body) as object }, { timestamp: NOW });
    parse.mockClear();
    expect(await codeOf(signed, { ...base, maxBodyBytes: 2 * DEFAULT_MAX_BODY_BYTES })).toBe('OK');
    expect(parse).toHaveBeenCalledTimes(1);
  });
});

/** The codes `delivery` gets as text, as bytes and parsed, each with the PEM key and with a sealed CryptoKey. */
async function codesOnEveryPath(delivery: SignedDelivery, sealed: VerifyWebhookOptions): Promise<string[]> {
  const codes = new Set<string>();
  for (const body of [delivery.body, new TextEncoder().encode(delivery.body), JSON.parse(delivery.body) as string]) {
    for (const options of [base, sealed]) codes.add(await codeOf({ ...delivery, body }, options));
  }
  return [...codes];
}

describe('nesting (CONTRACT §8)', () => {
  afterEach(() => vi.restoreAllMocks());
  const nested = (levels: number) => webhookBody({ extra: JSON.parse(`${'['.repeat(levels)}${']'.repeat(levels)}`) });

  it('a signed body nested 64 levels verifies as text, bytes or parsed; one level more is INVALID_BODY', async () => {
    // The body object is level 1, so `extra` holds 63 levels of arrays at most.
    const sealed = await sealedOptions();
    for (const [levels, code] of [
      [63, 'OK'],
      [64, 'INVALID_BODY'],
      [1_000, 'INVALID_BODY'],
    ] as const) {
      const delivery = signDelivery(nested(levels), { timestamp: NOW });
      expect([levels, await codesOnEveryPath(delivery, sealed)]).toEqual([levels, [code]]);
    }
  });

  it('a deep body is refused before it is parsed, ahead of a missing Host or a bad path', async () => {
    const parse = vi.spyOn(JSON, 'parse');
    const deep = '['.repeat(150) + ']'.repeat(150);
    for (const body of [`{"a":${deep},}`, `{"a":${deep}}`, `{"a":${deep}`]) {
      for (const form of [body, new TextEncoder().encode(body)]) {
        const noHost = { method: 'POST', target: '/hook', headers: { signature: replayedSignature }, body: form };
        expect(await codeOf(noHost)).toBe('INVALID_BODY');
        const badPath = { ...noHost, target: '/h%E0', headers: { signature: replayedSignature, host: 'h' } };
        expect(await codeOf(badPath)).toBe('INVALID_BODY');
      }
    }
    expect(parse).not.toHaveBeenCalled();
  });

  it('a parsed body with a cycle is INVALID_BODY, never a crash', async () => {
    const body: Record<string, unknown> = webhookBody();
    body['self'] = body;
    expect(await codeOf(withSignature(replayedSignature, body as unknown as string))).toBe('INVALID_BODY');
  });
});

describe('top-level members (bounded like nesting)', () => {
  /** The delivery's own members, then `_0`, `_1`… `_z`, `_10`… until the body has `members` top-level members. */
  const wide = (members: number) => {
    const body: Record<string, unknown> = webhookBody();
    for (let i = 0; Object.keys(body).length < members; i++) body[`_${i.toString(36)}`] = i;
    return body;
  };

  it(`a signed body of ${MAX_BODY_MEMBERS} top-level members verifies as text, bytes or parsed; one more is INVALID_BODY`, async () => {
    const sealed = await sealedOptions();
    for (const [members, code] of [
      [MAX_BODY_MEMBERS, 'OK'],
      [MAX_BODY_MEMBERS + 1, 'INVALID_BODY'],
    ] as const) {
      const delivery = signDelivery(wide(members), { timestamp: NOW });
      expect([members, await codesOnEveryPath(delivery, sealed)]).toEqual([members, [code]]);
    }
    const { method, target, headers, body } = signDelivery(wide(MAX_BODY_MEMBERS + 1), { timestamp: NOW });
    const result = await verifyWebhook({ method, url: target, headers, body }, base);
    expect(result.ok ? '' : result.error.message).toBe(
      `The body has more than ${MAX_BODY_MEMBERS} top-level members, or their names add up to more than ${MAX_BODY_NAMES_LENGTH} characters.`,
    );
  });

  it(`top-level names of ${MAX_BODY_NAMES_LENGTH} characters in all verify; one more is INVALID_BODY, on every path`, async () => {
    const sealed = await sealedOptions();
    for (const [length, code] of [
      [MAX_BODY_NAMES_LENGTH, 'OK'],
      [MAX_BODY_NAMES_LENGTH + 1, 'INVALID_BODY'],
    ] as const) {
      const body: Record<string, unknown> = webhookBody();
      const used = Object.keys(body).reduce((sum, name) => sum + name.length, 0);
      // One long name of combining marks out of canonical order: the costliest text to collate.
      body['\u0327\u0301'.repeat(length).slice(0, length - used)] = 1;
      const delivery = signDelivery(body, { timestamp: NOW });
      expect([length, await codesOnEveryPath(delivery, sealed)]).toEqual([length, [code]]);
    }
  });

  it('members under a key are not counted: only the top level is sorted', async () => {
    const body = webhookBody({ extra: wide(2 * MAX_BODY_MEMBERS) });
    expect(await codeOf(signDelivery(body, { timestamp: NOW }))).toBe('OK');
  });

  it('a wide body under a signature no key can have made is SIGNATURE_MISMATCH, as any body is', async () => {
    const delivery = signDelivery(wide(MAX_BODY_MEMBERS + 1), { timestamp: NOW });
    const forged = {
      ...delivery,
      headers: { ...delivery.headers, signature: Buffer.alloc(256, 7).toString('base64') },
    };
    expect(await codeOf(forged)).toBe('SIGNATURE_MISMATCH');
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

  it('cannot tell an escaped "&" from a separator without webhookUrl; with it, the re-split query is refused', async () => {
    // The contract signs the decoded parameters: ref=x%26shop%3D8 and ref=x&shop=8 sign alike.
    const resplit = signedFor('?ref=x%26shop%3D8', '?ref=x&shop=8');
    expect(await codeOf(resplit)).toBe('OK');
    const webhookUrl = 'https://shop.example.kg/hook?ref=x%26shop%3D8';
    expect(await codeOf(resplit, { ...base, webhookUrl })).toBe('URL_MISMATCH');
    expect(await codeOf(signedFor('?ref=x%26shop%3D8', '?ref=x%26shop%3D8'), { ...base, webhookUrl })).toBe('OK');
  });

  it('refuses a name holding "&", "=" or an escape left once decoded: its signed line is another query\'s', async () => {
    const lineOf = (query: string): string =>
      buildCanonicalString({ method: 'POST', path: '/hook', headers: { host: 'h' }, query, body: '{}' });
    const pairs: Array<[signed: string, sent: string]> = [
      ['a=b%3Dc', 'a%3Db=c'], // the app reads {a: "b=c"} and {"a=b": "c"}
      ['a=x%26b%3D2', 'a%3Dx%26b=2'], // {a: "x&b=2"} and {"a=x&b": "2"}
      ['shop=7', 'sh%256Fp=7'], // {shop: "7"} and {"sh%6Fp": "7"}
    ];
    for (const [signed, sent] of pairs) {
      // The same line, so the signature alone would verify either.
      expect(lineOf(sent)).toBe(lineOf(signed));
      expect([sent, await codeOf(signedFor(`?${signed}`, `?${sent}`))]).toEqual([sent, 'MALFORMED_QUERY']);
      expect([signed, await codeOf(signedFor(`?${signed}`, `?${signed}`))]).toEqual([signed, 'OK']);
    }
  });

  it('accepts values holding an escaped "&" or an escape (the service signs them); webhookUrl tells them apart', async () => {
    // Signed for env=prod&shop=7; the app would read env="prod&shop=7" and shop="%37": the same signed line.
    for (const sent of ['?env=prod%26shop%3D7', '?env=prod&shop=%2537']) {
      const delivery = signedFor('?env=prod&shop=7', sent);
      expect([sent, await codeOf(delivery)]).toEqual([sent, 'OK']);
      const webhookUrl = 'https://shop.example.kg/hook?env=prod&shop=7';
      expect([sent, await codeOf(delivery, { ...base, webhookUrl })]).toEqual([sent, 'URL_MISMATCH']);
    }
  });

  it('refuses a Host holding "&": the signed x-api-* headers could be moved into it', async () => {
    const delivery = signDelivery(webhookBody(), { timestamp: NOW, headers: { 'x-api-key': 'K' } });
    const { 'x-api-key': _moved, ...rest } = delivery.headers;
    const moved = { ...delivery, headers: { ...rest, host: `${delivery.headers['host']}&x-api-key:K` } };
    expect(await codeOf(moved)).toBe('MISSING_HOST');
    expect(await codeOf(delivery)).toBe('OK');
  });

  it('refuses several Host lines naming several hosts (a Web Headers joins them with ", "), even one signed that way', async () => {
    const delivery = signDelivery(webhookBody(), { timestamp: NOW, host: 'other.example, shop.example.kg' });
    const headers = new Headers(delivery.headers);
    headers.set('host', 'other.example');
    headers.append('host', 'shop.example.kg');
    expect(headers.get('host')).toBe('other.example, shop.example.kg');
    const result = await verifyWebhook({ method: 'POST', url: delivery.target, headers, body: delivery.body }, base);
    expect(result.ok ? 'OK' : [result.error.code, result.error.message]).toEqual([
      'MISSING_HOST',
      'The request names more than one host ("other.example, shop.example.kg"); a request has one Host.',
    ]);
    // Lines naming one host (letter case and a default port aside) are that host, as first written.
    const same = signDelivery(webhookBody(), { timestamp: NOW });
    const repeated = new Headers(same.headers);
    repeated.append('host', 'SHOP.example.kg:443');
    expect(repeated.get('host')).toBe('shop.example.kg, SHOP.example.kg:443');
    const verified = await verifyWebhook(
      { method: 'POST', url: same.target, headers: repeated, body: same.body },
      base,
    );
    expect(verified.ok ? verified.canonical.split('\n')[2] : verified.error.code).toBe(
      `host:shop.example.kg&x-api-timestamp:${NOW}`,
    );
    // So is an absolute URL's authority (read when there is no Host header) naming one host twice.
    const { host: _host, ...noHost } = same.headers;
    for (const [authority, code] of [
      ['shop.example.kg,SHOP.example.kg:443', 'OK'],
      ['shop.example.kg,other.example', 'MISSING_HOST'],
    ] as const) {
      const url = `https://${authority}${same.target}`;
      expect([authority, await codeOf({ ...same, target: url, headers: noHost })]).toEqual([authority, code]);
    }
    // Pinned by webhookUrl, the request's Host is not what was signed, so it does not matter.
    const pinned = signDelivery(webhookBody(), { timestamp: NOW, host: 'a, b', signedHost: 'shop.example.kg' });
    expect(await codeOf(pinned, { ...base, webhookUrl: `https://shop.example.kg${pinned.target}` })).toBe('OK');
  });

  it('accepts a repeat with the same value, empty pieces, and a query the app reads as signed', async () => {
    expect(await codeOf(signedFor('?shop=7', '?shop=7&shop=7'))).toBe('OK');
    expect(await codeOf(signedFor('?shop=7&a=1', '?shop=7&&a=1&'))).toBe('OK');
    expect(await codeOf(signedFor('?shop=7&test', '?test&shop=7'))).toBe('OK');
    expect(await codeOf(signedFor('', '?'))).toBe('OK');
  });

  it('is not applied when webhookUrl pins the query (the request query is not signed then)', async () => {
    // The request carries the registered parameter, as it must, inside a query that is ambiguous unpinned.
    const delivery = signDelivery(webhookBody(), {
      timestamp: NOW,
      signedTarget: '/hook?shop=7',
      target: '/x??y&shop=7',
    });
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
    // Values the service can sign and the app reads as signed: every escape complete and decoding to UTF-8
    // (%80 alone does not), and what URLSearchParams decodes left as it is by the query line's decodeURI
    // (CONTRACT §1): %25 alone decodes to a bare "%", which cannot be signed (MALFORMED_QUERY), and %2541
    // to "%41", which the line would decode once more to "A" (refused: the app reads another value).
    const decodes = (v: string) => {
      try {
        const read = new URLSearchParams(`a=${v}`).get('a') ?? '';
        return decodeURI(read) === read;
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
          // The same value as the app reads it (URLSearchParams) is a harmless repeat.
          const read = (v: string) => new URLSearchParams(`a=${v}`).get('a');
          if (read(other) === read(firstValue)) return;
          const repeated = `${text}&${firstName}=${other}`;
          expect(await codeOf(signDelivery(webhookBody(), { timestamp: NOW, target: `/hook?${repeated}` }))).toBe(
            'MALFORMED_QUERY',
          );
        },
      ),
      { numRuns: 60 },
    );
  });

  it('property: an accepted query whose values hold no "&" and no escape once decoded reads back as the app reads it', async () => {
    // Pieces that make separators, escapes and double escapes likely, besides any text.
    const piece = fc.oneof(
      fc.string({ maxLength: 3 }),
      fc.constantFrom('&', '=', '%', '%25', '%26', '%3D', '%2541', '%41', '+', ' ', 'é', '%C3%A9'),
    );
    const part = fc.array(piece, { maxLength: 3 }).map((pieces) => pieces.join(''));
    // Mostly plain names, so that many queries are accepted and the property has something to check.
    const name = fc.oneof({ weight: 3, arbitrary: fc.stringMatching(/^[a-z]{1,4}$/) }, { weight: 2, arbitrary: part });
    const encoding = fc.constantFrom<(text: string) => string>((text) => text, encodeURIComponent, encodeURI);
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.tuple(name, part, encoding), { minLength: 1, maxLength: 4, selector: ([n]) => n }),
        async (pairs) => {
          const text = pairs
            .map(([name, value, encode]) => `${encode(name)}=${encode(value)}`)
            .join('&')
            // A "#" would start the fragment, which is not sent.
            .replaceAll('#', '%23');
          const app = new Map<string, string>();
          new URLSearchParams(text).forEach((value, name) => app.set(name, value));
          const { headers, body } = signDelivery(webhookBody(), { timestamp: NOW, target: `/hook?${text}` });
          const result = await verifyWebhook({ method: 'POST', url: `/hook?${text}`, headers, body }, base);
          if (!result.ok) {
            expect(result.error.code).toBe('MALFORMED_QUERY');
            return;
          }
          // Values may hold those (the service signs them): only webhookUrl tells such a query apart.
          const ambiguous = (value: string): boolean => value.includes('&') || decodeURI(value) !== value;
          if ([...app.values()].some(ambiguous)) return;
          accepted++;
          const lines = result.canonical.split('\n');
          const fromLine = new Map<string, string>();
          // Line 4 is there only for a query with a parameter (CONTRACT §1).
          if (lines.length === 5) {
            for (const pair of lines[3]!.split('&')) {
              const eq = pair.indexOf('=');
              fromLine.set(decodeURI(pair.slice(0, eq)), decodeURI(pair.slice(eq + 1)));
            }
          }
          expect(fromLine).toEqual(app);
        },
      ),
      { numRuns: 400 },
    );
    // The property is about accepted queries: make sure there were enough of them.
    expect(accepted).toBeGreaterThan(50);
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
