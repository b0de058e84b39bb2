import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runInNewContext } from 'node:vm';
import { describe, expect, it, vi } from 'vitest';
import { buildCanonicalString } from '../../src/canonical.js';
import { verifySignature } from '../../src/signature.js';
import { verifyWebhook } from '../../src/verify-webhook.js';
import { createWebhookHandler } from '../../src/web/index.js';
import {
  createTestWebhook,
  generateTestKeyPair,
  sendWebhook,
  signWebhook,
  TEST_KEY_PAIR,
  toRequest,
} from '../../src/testing/index.js';
import { fixtures } from '../conformance/fixtures.js';

const conformanceKey = fixtures.keys['conformance-2048']!;
const URL_ = 'https://shop.example.kg/webhooks/payments';
const RS256 = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };

describe('TEST_KEY_PAIR', () => {
  it('is the conformance-2048 test pair, never a service key', () => {
    expect(TEST_KEY_PAIR.publicKey).toBe(conformanceKey.publicKeyPem);
    expect(TEST_KEY_PAIR.publicKey).not.toBe(fixtures.keys['service-production']!.publicKeyPem);
    expect(TEST_KEY_PAIR.publicKey).not.toBe(fixtures.keys['service-beta']!.publicKeyPem);
    expect(TEST_KEY_PAIR.privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(Object.isFrozen(TEST_KEY_PAIR)).toBe(true);
  });
});

describe('signWebhook', () => {
  // RSASSA-PKCS1-v1_5 is deterministic: the same canonical string and key give
  // the same signature, so this proves the signed string is byte-identical.
  const valid = fixtures.requests.filter((entry) => entry.expect['ok'] === true);
  it.each(valid.map((entry) => [entry.name, entry] as const))(
    'reproduces the service signature of %s byte for byte',
    async (_name, entry) => {
      const { request } = entry;
      const signed = await signWebhook(request.body, {
        privateKey: conformanceKey.privateKeyPem!, // PKCS#1, as in the fixtures
        url: request.url,
        host: request.headers['host']!,
        timestamp: request.headers['x-api-timestamp']!,
      });
      expect(signed.headers['signature']).toBe(request.headers['signature']);
      expect(signed.body).toBe(request.body);
    },
  );

  it('gives method, absolute url, the four headers and the body', async () => {
    const body = createTestWebhook();
    const signed = await signWebhook(body, { url: URL_, timestamp: 1763712000000 });
    expect(signed.method).toBe('POST');
    expect(signed.url).toBe(URL_);
    expect(Object.keys(signed.headers).sort()).toEqual(['content-type', 'host', 'signature', 'x-api-timestamp']);
    expect(signed.headers['host']).toBe('shop.example.kg');
    expect(signed.headers['content-type']).toBe('application/json');
    expect(signed.headers['x-api-timestamp']).toBe('1763712000000');
    expect(JSON.parse(signed.body)).toEqual(body);
    expect(signed.canonical).toBe(
      buildCanonicalString({ method: 'POST', path: '/webhooks/payments', headers: signed.headers, body: signed.body }),
    );
    expect(await verifySignature(signed.canonical, signed.headers['signature']!, TEST_KEY_PAIR.publicKey)).toBe(true);
  });

  it('controls the timestamp: number, Date, string as given, or none', async () => {
    const body = createTestWebhook();
    const at = (timestamp: number | Date | string | null) => signWebhook(body, { url: URL_, timestamp });
    expect((await at(5)).headers['x-api-timestamp']).toBe('5');
    expect((await at(new Date(1763712000123))).headers['x-api-timestamp']).toBe('1763712000123');
    // A Date from another realm (a vm context, an iframe) fails `instanceof Date` but is a Date.
    const foreign = runInNewContext('new Date(1763712000123)') as Date;
    expect((await at(foreign)).headers['x-api-timestamp']).toBe('1763712000123');
    expect((await at('17637e9')).headers['x-api-timestamp']).toBe('17637e9');
    const none = await at(null);
    expect('x-api-timestamp' in none.headers).toBe(false);
    expect(none.canonical.split('\n')[2]).toBe('host:shop.example.kg');
    const before = Date.now();
    const now = Number((await signWebhook(body, { url: URL_ })).headers['x-api-timestamp']);
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
    await expect(at(-1)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(at(Number.NaN)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('signs a Host given in headers as given, and refuses it with the host option too', async () => {
    const body = createTestWebhook();
    const signed = await signWebhook(body, { url: URL_, headers: { Host: 'proxy.internal' } });
    expect(signed.canonical.split('\n')[2]).toMatch(/^host:proxy\.internal&/);
    for (const name of ['host', 'Host']) {
      await expect(
        signWebhook(body, { url: '/hook', host: 'shop.example.kg', headers: { [name]: 'proxy.internal' } }),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('given twice') as string });
    }
  });

  it('signs an x-api-timestamp given in headers as given, and refuses it with the timestamp option too', async () => {
    const body = createTestWebhook();
    const signed = await signWebhook(body, { url: URL_, headers: { 'X-Api-Timestamp': '1763712000000' } });
    expect(signed.headers['x-api-timestamp']).toBe('1763712000000');
    expect(signed.canonical.split('\n')[2]).toBe('host:shop.example.kg&x-api-timestamp:1763712000000');
    const result = await verifyWebhook(signed, { publicKeys: TEST_KEY_PAIR.publicKey, now: 1763712000000 });
    expect(result.ok).toBe(true);
    for (const timestamp of [1763712000000, '1763712000000', null]) {
      await expect(
        signWebhook(body, { url: URL_, timestamp, headers: { 'x-api-timestamp': '1763712000000' } }),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('given twice') as string });
    }
  });

  it('signs the query, a host with port, extra x-api headers, and paths given with a host', async () => {
    const signed = await signWebhook(createTestWebhook(), {
      url: '/api/hook?b=2&a=1',
      host: 'internal:8080',
      headers: { 'X-Api-Trace': 't-1', 'user-agent': 'payment-service' },
    });
    expect(signed.url).toBe('https://internal:8080/api/hook?b=2&a=1');
    const lines = signed.canonical.split('\n');
    expect(lines[1]).toBe('/api/hook');
    expect(lines[2]).toMatch(/^host:internal:8080&x-api-timestamp:\d+&x-api-trace:t-1$/);
    expect(lines[3]).toBe('a=1&b=2');
    expect(signed.headers['user-agent']).toBe('payment-service');
    const port = await signWebhook(createTestWebhook(), { url: 'http://127.0.0.1:3000/hook' });
    expect(port.headers['host']).toBe('127.0.0.1:3000');
  });

  it('accepts PKCS#8 and PKCS#1 PEM, a private JWK and a CryptoKey', async () => {
    const body = createTestWebhook();
    const reference = await signWebhook(body, { url: URL_, timestamp: 1 });
    const jwk = await crypto.subtle.exportKey(
      'jwk',
      await crypto.subtle.importKey(
        'pkcs8',
        pemBytes(TEST_KEY_PAIR.privateKey) as BufferSource,
        { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
        true,
        ['sign'],
      ),
    );
    const cryptoKey = await crypto.subtle.importKey('jwk', jwk, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, [
      'sign',
    ]);
    for (const privateKey of [conformanceKey.privateKeyPem!, jwk, cryptoKey]) {
      const signed = await signWebhook(body, { url: URL_, timestamp: 1, privateKey });
      expect(signed.headers['signature']).toBe(reference.headers['signature']);
    }
  });

  it("signs '', null and 'null' as a delivery without a body, whose body line is empty", async () => {
    for (const delivery of ['', null, 'null']) {
      const signed = await signWebhook(delivery as string, { url: URL_, timestamp: 1 });
      expect(signed.canonical.split('\n').at(-1)).toBe('');
      // The signature verifies; only then is the missing payment refused.
      const result = await verifyWebhook(signed, { publicKeys: TEST_KEY_PAIR.publicKey, now: 1 });
      expect(result.ok ? null : result.error.code).toBe('INVALID_PAYLOAD');
    }
  });

  it('refuses what it cannot sign with a coded error', async () => {
    const body = createTestWebhook();
    await expect(signWebhook(body, { url: URL_, privateKey: TEST_KEY_PAIR.publicKey })).rejects.toMatchObject({
      code: 'INVALID_KEY',
    });
    await expect(
      signWebhook(body, { url: URL_, privateKey: '-----BEGIN PRIVATE KEY-----\n!!\n-----END PRIVATE KEY-----' }),
    ).rejects.toMatchObject({ code: 'INVALID_KEY' });
    const { kty: _kty, ...withoutKty } = await crypto.subtle.exportKey(
      'jwk',
      await crypto.subtle.importKey('pkcs8', pemBytes(TEST_KEY_PAIR.privateKey) as BufferSource, RS256, true, ['sign']),
    );
    for (const privateKey of [withoutKty, { ...withoutKty, kty: 'EC' }, { ...withoutKty, kty: 'oct' }]) {
      // A JWK, whatever it lacks, is told what a JWK needs (not what a CryptoKey does).
      await expect(signWebhook(body, { url: URL_, privateKey })).rejects.toMatchObject({
        code: 'INVALID_KEY',
        message: expect.stringContaining('JSON Web Key') as string,
      });
    }
    // An object with no JWK member (a node:crypto KeyObject) is told what a key may be, and how to pass one.
    const { KeyObject } = await import('node:crypto');
    const keyObject = KeyObject.from(
      await crypto.subtle.importKey('pkcs8', pemBytes(TEST_KEY_PAIR.privateKey) as BufferSource, RS256, true, ['sign']),
    );
    await expect(signWebhook(body, { url: URL_, privateKey: keyObject as never })).rejects.toMatchObject({
      code: 'INVALID_KEY',
      message: expect.stringContaining('KeyObject: pass its PEM') as string,
    });
    await expect(signWebhook(body, { url: '/hook' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(signWebhook(body, { url: '' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(signWebhook('[1,2]', { url: URL_ })).rejects.toMatchObject({ code: 'INVALID_BODY' });
    await expect(signWebhook('{nope', { url: URL_ })).rejects.toMatchObject({ code: 'INVALID_BODY' });
    const cycle: Record<string, unknown> = { ...body };
    cycle['self'] = cycle;
    for (const delivery of [{ ...body, amount: 100n }, cycle]) {
      await expect(signWebhook(delivery, { url: URL_ })).rejects.toMatchObject({
        code: 'INVALID_BODY',
        message: expect.stringContaining('cannot be written as JSON') as string,
      });
    }
  });

  it('names the host option, not the url, when the host a path is signed with is no host', async () => {
    const body = createTestWebhook();
    // The URL parser takes a path, query, fragment or user into what it reads as the host: none is a Host header.
    for (const host of [
      'bad host',
      'shop.example.kg:port',
      '',
      42 as never,
      'shop.kg/x',
      'shop.kg?x',
      'shop.kg#f',
      'user@shop.kg',
    ]) {
      await expect(signWebhook(body, { url: '/hook', host })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringMatching(/^The "host" option /) as string,
      });
    }
    await expect(signWebhook(body, { url: '//bad host/hook', host: 'shop.example.kg' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: 'The url "//bad host/hook" is not a valid URL.',
    });
  });

  it('refuses a CryptoKey with another hash than SHA-256, whose signatures could never verify', async () => {
    const { privateKey } = await crypto.subtle.generateKey(
      { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-512' },
      false,
      ['sign', 'verify'],
    );
    await expect(signWebhook(createTestWebhook(), { url: URL_, privateKey })).rejects.toMatchObject({
      code: 'INVALID_KEY',
      message: expect.stringContaining('SHA-256') as string,
    });
  });

  it('signs for a Host given in headers, as the host option does (a receiver pinned to webhookUrl verifies it)', async () => {
    const body = createTestWebhook();
    const signed = await signWebhook(body, { url: 'http://127.0.0.1:3000/h', headers: { Host: 'shop.example.kg' } });
    expect(signed.headers['host']).toBe('shop.example.kg');
    const result = await verifyWebhook(signed, {
      publicKeys: TEST_KEY_PAIR.publicKey,
      webhookUrl: 'https://shop.example.kg/h',
    });
    expect(result.ok).toBe(true);
  });
});

describe('generateTestKeyPair', () => {
  it('makes a fresh 2048-bit pair whose halves match, unlike the embedded one', async () => {
    const pair = await generateTestKeyPair();
    expect(pair.publicKey).toMatch(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+-----END PUBLIC KEY-----\n$/);
    expect(pair.privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----\n[\s\S]+-----END PRIVATE KEY-----\n$/);
    const signed = await signWebhook(createTestWebhook(), { url: URL_, privateKey: pair.privateKey });
    expect(await verifySignature(signed.canonical, signed.headers['signature']!, pair.publicKey)).toBe(true);
    expect(await verifySignature(signed.canonical, signed.headers['signature']!, TEST_KEY_PAIR.publicKey)).toBe(false);
  });

  it('rejects an unusable modulus length', async () => {
    await expect(generateTestKeyPair({ modulusLength: 1000 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(generateTestKeyPair({ modulusLength: 512 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});

describe('toRequest and sendWebhook', () => {
  it('toRequest carries url, method, signed headers and body', async () => {
    const signed = await signWebhook(createTestWebhook(), { url: `${URL_}?shop=7` });
    const request = toRequest(signed);
    expect(request.url).toBe(`${URL_}?shop=7`);
    expect(request.method).toBe('POST');
    expect(request.headers.get('signature')).toBe(signed.headers['signature']);
    expect(request.headers.get('x-api-timestamp')).toBe(signed.headers['x-api-timestamp']);
    expect(await request.text()).toBe(signed.body);
  });

  it("toRequest where a Request keeps no Host (browsers): the URL's host arrives, and a pinned receiver verifies", async () => {
    // A browser's Request keeps no Host header, silently; some runtimes throw instead.
    class HostlessRequest extends Request {
      constructor(url: string, init: RequestInit & { headers: Record<string, string> }) {
        const { host: _dropped, ...headers } = init.headers;
        super(url, { ...init, headers });
      }
    }
    const handler = createWebhookHandler({
      publicKeys: TEST_KEY_PAIR.publicKey,
      webhookUrl: 'https://shop.example.kg/webhooks/payments',
      logger: false,
      onPayment: () => {},
    });
    const signed = await signWebhook(createTestWebhook(), {
      url: 'http://127.0.0.1:3000/webhooks/payments',
      host: 'shop.example.kg',
    });
    vi.stubGlobal('Request', HostlessRequest);
    let request: Request;
    try {
      request = toRequest(signed);
    } finally {
      vi.unstubAllGlobals();
    }
    expect(request.headers.get('host')).toBeNull();
    expect((await handler(request)).status).toBe(200);
  });

  it('sendWebhook delivers to the signed URL, or to another origin with the signed path', async () => {
    const received: Array<{ url: string | undefined; headers: IncomingHttpHeaders; body: string }> = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        received.push({ url: req.url, headers: req.headers, body });
        res.writeHead(202).end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const direct = await signWebhook(createTestWebhook(), { url: `http://127.0.0.1:${port}/hook?x=1` });
      expect((await sendWebhook(direct)).status).toBe(202);
      const elsewhere = await signWebhook(createTestWebhook(), { url: 'https://shop.example.kg/api/hook' });
      expect((await sendWebhook(elsewhere, `http://127.0.0.1:${port}/ignored`)).status).toBe(202);
      expect(received[0]).toMatchObject({ url: '/hook?x=1', body: direct.body });
      expect(received[0]!.headers['signature']).toBe(direct.headers['signature']);
      expect(received[0]!.headers['host']).toBe(`127.0.0.1:${port}`);
      expect(received[1]!.url).toBe('/api/hook');
      expect(received[1]!.body).toBe(elsewhere.body);
      await expect(sendWebhook(direct, 'not a url')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    } finally {
      server.close();
    }
  });
});

describe('sendWebhook with a signal', () => {
  it('gives up on an endpoint that never answers when the signal aborts, and refuses a signal that is none', async () => {
    const server = createServer(() => {}); // takes the request and never answers
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const signed = await signWebhook(createTestWebhook(), { url: `http://127.0.0.1:${port}/hook` });
      await expect(sendWebhook(signed, undefined, { signal: AbortSignal.timeout(200) })).rejects.toMatchObject({
        name: 'TimeoutError',
      });
      await expect(sendWebhook(signed, undefined, { signal: AbortSignal.abort() })).rejects.toMatchObject({
        name: 'AbortError',
      });
      await expect(sendWebhook(signed, undefined, { signal: 'soon' as never })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining('"signal"') as string,
      });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }, 5_000);
});

describe('toRequest and sendWebhook refuse what HTTP would change', () => {
  it('refuses a header value with whitespace around it, naming the header; verifyWebhook still takes it directly', async () => {
    for (const [options, name] of [
      [{ timestamp: ' 1763712000000' }, 'x-api-timestamp'],
      [{ timestamp: '1763712000000\t' }, 'x-api-timestamp'],
      [{ headers: { 'x-api-shop': 'seven ' } }, 'x-api-shop'],
    ] as const) {
      const signed = await signWebhook(createTestWebhook(), { url: URL_, ...options });
      expect(() => toRequest(signed)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining(`"${name}"`) }),
      );
      await expect(sendWebhook(signed, 'http://127.0.0.1:9')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    // Inner whitespace is kept by HTTP, so it is sent; a padded value is for verifyWebhook alone.
    const inner = await signWebhook(createTestWebhook(), { url: URL_, headers: { 'x-api-shop': 'seven shops' } });
    expect(toRequest(inner).headers.get('x-api-shop')).toBe('seven shops');
    const padded = await signWebhook(createTestWebhook(), { url: URL_, timestamp: ' 1763712000000' });
    const { verifyWebhook } = await import('../../src/verify-webhook.js');
    const result = await verifyWebhook(
      { method: 'POST', url: padded.url, headers: padded.headers, body: padded.body },
      { publicKeys: TEST_KEY_PAIR.publicKey, now: 1763712000000 },
    );
    expect(result.ok ? null : result.error.code).toBe('MALFORMED_TIMESTAMP');
  });

  it('refuses, naming the header, a value HTTP cannot carry and a name that is no HTTP token', async () => {
    for (const [headers, name] of [
      [{ 'x-api-shop': 'ключ' }, 'x-api-shop'],
      [{ 'x-api-shop': 'a\u0000b' }, 'x-api-shop'],
      [{ 'x-api-shop': 'a\r\nx-api-evil: 1' }, 'x-api-shop'],
      [{ 'x-api-shop': 'a\u0001b' }, 'x-api-shop'],
      [{ 'x api shop': 'seven' }, 'x api shop'],
      [{ 'x-api-shop:': 'seven' }, 'x-api-shop:'],
    ] as const) {
      const signed = await signWebhook(createTestWebhook(), { url: URL_, headers });
      expect(() => toRequest(signed)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining(JSON.stringify(name)) }),
      );
      await expect(sendWebhook(signed, 'http://127.0.0.1:9')).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining(JSON.stringify(name)) as string,
      });
    }
    // Latin-1 text is bytes HTTP carries as they are.
    const latin1 = await signWebhook(createTestWebhook(), { url: URL_, headers: { 'x-api-shop': 'Müller' } });
    expect(toRequest(latin1).headers.get('x-api-shop')).toBe('Müller');
  });

  it('refuses a GET or HEAD with a body, and sends one without a body as it was signed', async () => {
    for (const method of ['GET', 'HEAD', 'get']) {
      const signed = await signWebhook(createTestWebhook(), { url: URL_, method });
      expect(() => toRequest(signed)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('cannot carry a body') }),
      );
      await expect(sendWebhook(signed, 'http://127.0.0.1:9')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    const empty = await signWebhook('', { url: URL_, method: 'GET' });
    const request = toRequest(empty);
    expect(request.method).toBe('GET');
    expect(await request.text()).toBe('');
  });

  it('refuses a URL with credentials, and a method the runtime does not send', async () => {
    const withCredentials = await signWebhook(createTestWebhook(), { url: 'https://user:pw@shop.example.kg/hook' });
    expect(() => toRequest(withCredentials)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('credentials') }),
    );
    await expect(sendWebhook(withCredentials)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    const trace = await signWebhook(createTestWebhook(), { url: URL_, method: 'TRACE' });
    expect(() => toRequest(trace)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    await expect(sendWebhook(trace, 'http://127.0.0.1:9')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});

function pemBytes(pem: string): Uint8Array {
  return Uint8Array.from(atob(pem.replace(/-----[^-]+-----|\s/g, '')), (c) => c.charCodeAt(0));
}

// A browser page outside a secure context (http:// on another host than localhost) has no crypto.subtle: that is
// what each helper says, never that the key is bad.
describe('a runtime without Web Crypto', () => {
  it('is named as such by signWebhook, generateTestKeyPair and verifyWebhook, not blamed on the key', async () => {
    const { privateKey, publicKey } = await generateTestKeyPair();
    vi.stubGlobal('crypto', {});
    try {
      const expected = {
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining(
          "No Web Crypto (crypto.subtle) in this runtime: a page outside a secure context, or Jest's jsdom",
        ),
      };
      await expect(
        signWebhook(createTestWebhook(), { url: 'https://shop.example.kg/hooks', privateKey }),
      ).rejects.toMatchObject(expected);
      await expect(generateTestKeyPair()).rejects.toMatchObject(expected);
      const request = {
        method: 'POST',
        url: 'https://shop.example.kg/hooks',
        headers: { signature: 'AA==' },
        body: '{}',
      };
      await expect(verifyWebhook(request, { publicKeys: publicKey, webhookUrl: request.url })).rejects.toMatchObject(
        expected,
      );
    } finally {
      vi.unstubAllGlobals();
    }
  });
});

// A missing await, or Jest's jsdom environment (no Request), gave errors that blamed the URL or the delivery.
describe('a mistake around the helpers', () => {
  it('says to await what signWebhook resolves to, and refuses a promise of a body', async () => {
    const pending = signWebhook(createTestWebhook(), { url: URL_ });
    const expected = { code: 'INVALID_ARGUMENT', message: expect.stringContaining('(await it), not a promise') };
    expect(() => toRequest(pending as never)).toThrow(expect.objectContaining(expected));
    await expect(sendWebhook(pending as never, 'http://127.0.0.1:1')).rejects.toMatchObject(expected);
    await pending;
    await expect(signWebhook(Promise.resolve(createTestWebhook()), { url: URL_ })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('not a promise of it'),
    });
  });

  it('names an environment without Request, not the delivery', async () => {
    const signed = await signWebhook(createTestWebhook(), { url: URL_ });
    vi.stubGlobal('Request', undefined);
    try {
      const expected = { code: 'INVALID_ARGUMENT', message: expect.stringContaining('No global Request') };
      expect(() => toRequest(signed)).toThrow(expect.objectContaining(expected));
      await expect(sendWebhook(signed)).rejects.toMatchObject(expected);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
