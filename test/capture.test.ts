import { describe, expect, it } from 'vitest';
import { captureDelivery } from '../src/capture.js';
import * as main from '../src/index.js';
import * as testing from '../src/testing/index.js';
import { verifyWebhook } from '../src/verify-webhook.js';
import { PUBLIC_KEY, signDelivery, webhookBody } from './helpers/sign.js';

const URL_ = 'https://shop.example.kg/webhooks/payments?shop=7';
const BODY = '{"id":"x_DEBIT", "amount": 100.50, "note":"é"}';

describe('captureDelivery', () => {
  it('is exported from payhook and payhook/testing', () => {
    expect(main.captureDelivery).toBe(captureDelivery);
    expect(testing.captureDelivery).toBe(captureDelivery);
  });

  it('reads a Web Request from a clone: method, absolute URL, every header, the body byte for byte', async () => {
    const headers = new Headers({ Host: 'shop.example.kg', 'X-Api-Timestamp': '1763712000000', signature: 'c2ln' });
    headers.append('x-api-note', 'a');
    headers.append('x-api-note', 'b');
    const request = new Request(URL_, { method: 'POST', headers, body: BODY });
    const capture = await captureDelivery(request);
    expect(capture).toEqual({
      method: 'POST',
      url: URL_,
      headers: {
        host: 'shop.example.kg',
        'x-api-timestamp': '1763712000000',
        signature: 'c2ln',
        'x-api-note': 'a, b',
        'content-type': 'text/plain;charset=UTF-8',
      },
      body: BODY,
    });
    // The handler can still read it.
    expect(await request.text()).toBe(BODY);
    expect(JSON.parse(JSON.stringify(capture))).toEqual(capture);
  });

  it('reads a Web Request no further than maxBodyBytes: BODY_TOO_LARGE past it, the stream left unread beyond', async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(16_384).fill(0x20));
      },
    });
    const request = new Request(URL_, { method: 'POST', body: endless, duplex: 'half' } as RequestInit);
    await expect(captureDelivery(request)).rejects.toMatchObject({ code: 'BODY_TOO_LARGE' });
    // The default limit is 32 KiB: a few chunks, not the endless body (the clone's tee may read a little ahead).
    expect(pulled).toBeLessThan(8);
    const small = new Request(URL_, { method: 'POST', body: BODY });
    await expect(captureDelivery(small, { maxBodyBytes: BODY.length })).rejects.toMatchObject({
      code: 'BODY_TOO_LARGE',
    });
    expect((await captureDelivery(small, { maxBodyBytes: new TextEncoder().encode(BODY).length })).body).toBe(BODY);
    const empty = await captureDelivery(new Request(URL_, { method: 'POST' }));
    expect(empty.body).toBe('');
  });

  it('reads a Request-like whose clone has no Web stream (node-fetch, a test double) whole, then holds it to the limit', async () => {
    const { Readable } = await import('node:stream');
    const requestLike = {
      method: 'POST',
      url: URL_,
      headers: new Headers({ host: 'shop.example.kg' }),
      bodyUsed: false,
      clone: () => ({
        body: Readable.from([Buffer.from(BODY)]), // a Node stream: no getReader()
        arrayBuffer: () => Promise.resolve(new TextEncoder().encode(BODY).buffer),
      }),
    };
    expect((await captureDelivery(requestLike as never)).body).toBe(BODY);
    await expect(captureDelivery(requestLike as never, { maxBodyBytes: 8 })).rejects.toMatchObject({
      code: 'BODY_TOO_LARGE',
    });
  });

  it('refuses a Web Request whose body was read, unless the body is given', async () => {
    const request = new Request(URL_, { method: 'POST', body: BODY });
    await request.text();
    await expect(captureDelivery(request)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: /\{ body \}/ });
    expect((await captureDelivery(request, { body: BODY })).body).toBe(BODY);
  });

  it.each([
    ['a Buffer', Buffer.from(BODY), BODY],
    ['a Uint8Array', new TextEncoder().encode(BODY), BODY],
    ['an ArrayBuffer', new TextEncoder().encode(BODY).buffer, BODY],
    ['a string', BODY, BODY],
    ['a parsed object (express.json())', JSON.parse(BODY) as object, JSON.stringify(JSON.parse(BODY))],
  ])('reads a Node request whose body is %s', async (_, body, expected) => {
    const capture = await captureDelivery({
      method: 'POST',
      url: '/payments',
      originalUrl: '/webhooks/payments?shop=7',
      headers: { host: 'app.internal:8080', 'x-api-note': ['a', 'b'], absent: undefined },
      body,
    });
    expect(capture).toEqual({
      method: 'POST',
      url: '/webhooks/payments?shop=7',
      headers: { host: 'app.internal:8080', 'x-api-note': 'a, b' },
      body: expected,
    });
  });

  it('keeps bytes that are not UTF-8 exactly, as base64 next to a readable body', async () => {
    const bytes = new Uint8Array([0x7b, 0xff, 0x7d]);
    const capture = await captureDelivery({ url: '/hook', headers: {}, body: bytes });
    expect(capture.body).toBe('{\uFFFD}');
    expect(capture.bodyBase64).toBe('e/99');
  });

  it('refuses a Node request without req.body (no parser ran) unless the body is given', async () => {
    const req = { method: 'POST', url: '/hook', headers: { host: 'h' } };
    await expect(captureDelivery(req)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: /req\.body/ });
    expect((await captureDelivery(req, { body: Buffer.from('{}') })).body).toBe('{}');
    // An empty body is a body.
    expect((await captureDelivery({ ...req, body: null })).body).toBe('');
  });

  it('refuses what is not a request with INVALID_ARGUMENT', async () => {
    for (const bad of [null, 'POST /hook', { url: '/hook' }, { headers: {} }]) {
      await expect(captureDelivery(bad as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    const circular: Record<string, unknown> = {};
    circular['self'] = circular;
    await expect(captureDelivery({ url: '/h', headers: {}, body: circular })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it('records the hosts of a Node request as payhook/node reads them: several Host lines, and an HTTP/2 :authority', async () => {
    const node = (headers: Record<string, string>, rawHeaders: string[]) =>
      captureDelivery({ method: 'POST', url: '/hook', headers, rawHeaders, body: '{}' });
    // Node keeps only the first Host line in `headers`.
    const twoHosts = await node({ host: 'o.example' }, ['Host', 'o.example', 'Host', 'v.example']);
    expect(twoHosts.headers['host']).toBe('o.example, v.example');
    const oneHost = await node({ host: 'o.example' }, ['Host', 'o.example']);
    expect(oneHost.headers['host']).toBe('o.example');
    const http2 = await node({ ':authority': 'o.example' }, [':authority', 'o.example']);
    expect(http2.headers['host']).toBe('o.example');
    const both = await node({ ':authority': 'v.example', host: 'o.example' }, [
      ':authority',
      'v.example',
      'host',
      'o.example',
    ]);
    expect(both.headers['host']).toBe('o.example, v.example');
    // Judged as the handler judged the request: two hosts are refused, one is read.
    const options = { publicKeys: PUBLIC_KEY, allowAnyHost: true } as const;
    // A genuine signature of another delivery: past the early check, so the request's head is read.
    const signature = signDelivery(webhookBody()).headers['signature']!;
    for (const [capture, code] of [
      [twoHosts, 'MISSING_HOST'],
      [both, 'MISSING_HOST'],
      [http2, 'SIGNATURE_MISMATCH'],
    ] as const) {
      const result = await verifyWebhook({ ...capture, headers: { ...capture.headers, signature } }, options);
      expect(result.ok ? 'OK' : result.error.code).toBe(code);
    }
  });
});
