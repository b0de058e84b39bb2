// The Web adapter's body reading: a deadline on the whole body, and the
// stream let go of when it passes.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { WebhookLogRecord } from '../../src/handler/hooks.js';
import { createWebhookHandler } from '../../src/web/index.js';
import { PUBLIC_KEY, signDelivery, webhookBody } from '../helpers/sign.js';
import { collectInto } from '../helpers/logs.js';

const WEBHOOK_URL = 'https://shop.example.kg/webhooks/payments';

const CHUNK_BYTES = 64 * 1_024;

/** An endless body of 64 KiB chunks, each a macrotask apart as from a socket (a stream that never yields would starve every timer), and how much was pulled from it. */
function endlessBody(): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  const chunk = new Uint8Array(CHUNK_BYTES);
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await new Promise((resolve) => setImmediate(resolve));
      pulled += chunk.length;
      controller.enqueue(chunk);
    },
  });
  return { stream, pulled: () => pulled };
}

/** A Web handler with these limits, and the ids onPayment received. */
/** A POST of `body` as a stream, with `headers`, as a platform hands the handler a request being received. */
function streamRequest(headers: HeadersInit, body: ReadableStream<Uint8Array>): Request {
  return new Request(WEBHOOK_URL, { method: 'POST', headers, body, duplex: 'half' } as RequestInit);
}

function handlerFor(options: { maxBodyBytes?: number; bodyTimeoutMs?: number } = {}) {
  const calls: string[] = [];
  const handler = createWebhookHandler({
    publicKeys: PUBLIC_KEY,
    webhookUrl: WEBHOOK_URL,
    ...options,
    onPayment: (webhook) => {
      calls.push(webhook.id);
    },
  });
  return { handler, calls };
}

/** A handler whose log records and onError codes are kept, to tell an aborted delivery from a reported failure. */
function watchedHandler(options: { bodyTimeoutMs?: number; maxBodyBytes?: number } = {}) {
  const logs: WebhookLogRecord[] = [];
  const errors: string[] = [];
  const handler = createWebhookHandler({
    publicKeys: PUBLIC_KEY,
    webhookUrl: WEBHOOK_URL,
    ...options,
    onPayment: () => {},
    logger: collectInto(logs),
    onError: (error) => {
      errors.push(error.code);
    },
  });
  return { handler, logs, errors };
}

describe('a body without Content-Length (Web handler)', () => {
  // Some Node-to-Request bridges abort the request's signal on req 'close', which Node emits once the body has been
  // read: the signal says "gone" only before the read begins, so a whole delivery is still handled.
  it('is handled when the signal aborts only once the whole body has been read', async () => {
    const { handler, calls } = handlerFor();
    const delivery = signDelivery(webhookBody());
    const controller = new AbortController();
    const bytes = new TextEncoder().encode(delivery.body);
    const body = new ReadableStream<Uint8Array>({
      pull(stream) {
        stream.enqueue(bytes);
        stream.close();
        controller.abort();
      },
    });
    const init = { method: 'POST', headers: delivery.headers, body, duplex: 'half', signal: controller.signal };
    const response = await handler(new Request(WEBHOOK_URL, init));
    expect([response.status, await response.json()]).toEqual([200, { ok: true }]);
    expect(calls).toEqual([delivery.id]);
  });
});

describe('maxBodyBytes for a body without Content-Length (Web handler)', () => {
  /** A Request whose body stream hands out `bytes` in chunks of `size`, without a declared length. */
  const streamed = (headers: Record<string, string>, bytes: Uint8Array, size = 100) =>
    new Request(WEBHOOK_URL, {
      method: 'POST',
      headers,
      body: new ReadableStream<Uint8Array>({
        start(controller) {
          for (let offset = 0; offset < bytes.length; offset += size)
            controller.enqueue(bytes.slice(offset, offset + size));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);

  it('takes a body of exactly maxBodyBytes, and refuses one byte more (413)', async () => {
    const delivery = signDelivery(webhookBody());
    const bytes = new TextEncoder().encode(delivery.body);
    const statuses: number[] = [];
    for (const maxBodyBytes of [bytes.length, bytes.length - 1]) {
      const { handler } = handlerFor({ maxBodyBytes });
      statuses.push((await handler(streamed(delivery.headers, bytes))).status);
    }
    expect(statuses).toEqual([200, 413]);
  });

  it('stops reading an endless body once 8 MiB past the limit have been dropped, and answers 413', async () => {
    const { handler, calls } = handlerFor({ maxBodyBytes: 1_024, bodyTimeoutMs: 2_000 });
    const delivery = signDelivery(webhookBody());
    const endless = endlessBody();
    const response = await handler(streamRequest(delivery.headers, endless.stream));
    expect(response.status).toBe(413);
    // Read to the limit and the 8 MiB dropped past it (the stream pulls a chunk or two ahead), not until the deadline.
    expect(endless.pulled()).toBeGreaterThan(1_024 + 8 * 1_048_576);
    expect(endless.pulled()).toBeLessThanOrEqual(1_024 + 8 * 1_048_576 + 4 * CHUNK_BYTES);
    expect(calls).toEqual([]);
  });

  it('refuses a body sent with Content-Encoding gzip with a message that names it', async () => {
    const { handler, calls } = handlerFor();
    const delivery = signDelivery(webhookBody());
    const headers = { ...delivery.headers, 'content-encoding': 'GZip ' };
    const response = await handler(
      new Request(WEBHOOK_URL, { method: 'POST', headers, body: new Uint8Array(gzipSync(delivery.body)) }),
    );
    const answer = (await response.json()) as { code: string; message: string };
    expect([response.status, answer.code]).toEqual([400, 'INVALID_BODY']);
    expect(answer.message).toContain('Content-Encoding gzip');
    expect(calls).toEqual([]);
  });

  it('refuses a request without a signature before reading its body: 401 at once, neither 408 nor 413', async () => {
    const { handler, calls } = handlerFor({ maxBodyBytes: 1_024, bodyTimeoutMs: 10_000 });
    const { signature: _signature, ...unsigned } = signDelivery(webhookBody()).headers;
    let pulls = 0;
    const stalled = new ReadableStream<Uint8Array>({
      pull() {
        pulls++;
        return new Promise(() => {}); // never sends a byte
      },
    });
    const started = Date.now();
    for (const body of [stalled, new Blob([new Uint8Array(100 * 1_024)]).stream()]) {
      const response = await handler(streamRequest(unsigned, body));
      expect([response.status, ((await response.json()) as { code: string }).code]).toEqual([401, 'MISSING_SIGNATURE']);
      expect(response.headers.get('connection')).toBe('close');
    }
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(pulls).toBeLessThanOrEqual(1); // the stream's own first pull, at most
    expect(calls).toEqual([]);
  });

  it('reads a body sent with both Transfer-Encoding and a small Content-Length in bounded chunks (workerd)', async () => {
    const { handler, calls } = handlerFor({ maxBodyBytes: 1_024, bodyTimeoutMs: 5_000 });
    const delivery = signDelivery(webhookBody());
    const endless = endlessBody();
    // The declared 100 bytes are no bound once a Transfer-Encoding is there: taken for one, the body was read whole.
    const headers = { ...delivery.headers, 'content-length': '100', 'transfer-encoding': 'chunked' };
    const response = await handler(streamRequest(headers, endless.stream));
    expect(response.status).toBe(413);
    expect(endless.pulled()).toBeLessThanOrEqual(1_024 + 8 * 1_048_576 + 4 * CHUNK_BYTES);
    expect(calls).toEqual([]);
  });

  it('answers 413, not 408, to a body that declares more than the limit and stalls before it', async () => {
    const { handler, calls } = handlerFor({ maxBodyBytes: 1_024, bodyTimeoutMs: 200 });
    const delivery = signDelivery(webhookBody());
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"id":'));
      },
    });
    const headers = { ...delivery.headers, 'content-length': '100000' };
    const response = await handler(streamRequest(headers, stalled));
    expect([response.status, ((await response.json()) as { code: string }).code]).toEqual([413, 'BODY_TOO_LARGE']);
    expect(calls).toEqual([]);
  });

  it('answers a body that breaks once past the limit 413, reported to onError, not as a client gone', async () => {
    const { handler, logs, errors } = watchedHandler({ maxBodyBytes: 1_024 });
    const delivery = signDelivery(webhookBody());
    const broken = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new Uint8Array(2_048));
        await new Promise((resolve) => setTimeout(resolve, 20));
        controller.error(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
      },
    });
    const response = await handler(streamRequest(delivery.headers, broken));
    expect(response.status).toBe(413);
    expect(errors).toEqual(['BODY_TOO_LARGE']);
    expect(logs.map((record) => [record.event, record.level, record.status])).toEqual([['rejected', 'warn', 413]]);
  });
});

describe('a client gone before the read, on a Request the platform built for a bridge (Web handler)', () => {
  // React Router's Node adapter (@mjackson/node-fetch-server) builds the platform's own Request, with a signal it
  // aborts when the client goes away and a body stream that then never ends: the signal is all that tells.
  it('is logged as aborted at once, not a 408 after bodyTimeoutMs reported to onError', async () => {
    const { handler, logs, errors } = watchedHandler({ bodyTimeoutMs: 2_000 });
    const delivery = signDelivery(webhookBody());
    const bytes = new TextEncoder().encode(delivery.body);
    const neverEnds = new ReadableStream<Uint8Array>({
      start(stream) {
        stream.enqueue(bytes.subarray(0, 40));
      },
    });
    const controller = new AbortController();
    controller.abort();
    const init = {
      method: 'POST',
      headers: delivery.headers,
      body: neverEnds,
      duplex: 'half',
      signal: controller.signal,
    };
    const request = new Request(WEBHOOK_URL, init);
    expect(Object.getPrototypeOf(request)).toBe(Request.prototype);
    const started = Date.now();
    await handler(request);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(logs.map((record) => [record.event, record.level])).toEqual([['aborted', 'info']]);
    expect(errors).toEqual([]);
  });
});

describe('bodyTimeoutMs (Web handler)', () => {
  it('answers 408 BODY_TIMEOUT when half a body arrives and the rest never does, and cancels the stream', async () => {
    const { handler, calls } = handlerFor({ bodyTimeoutMs: 150 });
    const delivery = signDelivery(webhookBody());
    const bytes = new TextEncoder().encode(delivery.body);
    let cancelled: unknown = 'not cancelled';
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.subarray(0, bytes.length >> 1));
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    const started = Date.now();
    const response = await handler(streamRequest(delivery.headers, stalled));
    expect(response.status).toBe(408);
    expect(await response.json()).toMatchObject({ ok: false, code: 'BODY_TIMEOUT' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(cancelled).not.toBe('not cancelled');
    expect(calls).toEqual([]);
  });

  it('does not time out a body that arrives in time', async () => {
    const handler = createWebhookHandler({
      publicKeys: PUBLIC_KEY,
      webhookUrl: WEBHOOK_URL,
      bodyTimeoutMs: 1_000,
      onPayment: () => {},
    });
    const delivery = signDelivery(webhookBody());
    const bytes = new TextEncoder().encode(delivery.body);
    const slow = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(bytes.subarray(0, 10));
        await new Promise((resolve) => setTimeout(resolve, 100));
        controller.enqueue(bytes.subarray(10));
        controller.close();
      },
    });
    const response = await handler(streamRequest(delivery.headers, slow));
    expect(response.status).toBe(200);
  });
});

describe('a client that goes away while the body is read (Web handler)', () => {
  it('is logged as aborted (info) and not reported to onError', async () => {
    const { handler, logs, errors } = watchedHandler();
    const delivery = signDelivery(webhookBody());
    const bytes = new TextEncoder().encode(delivery.body);
    const reset = Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
    const broken = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(bytes.subarray(0, bytes.length >> 1));
        await new Promise((resolve) => setTimeout(resolve, 20));
        controller.error(reset);
      },
    });
    await handler(streamRequest(delivery.headers, broken));
    expect(logs.map((record) => [record.event, record.level])).toEqual([['aborted', 'info']]);
    // The record says what happened and carries the stream's error.
    expect(logs[0]?.message).toBe(
      'The client went away while sending the body; nothing was processed (the service retries).',
    );
    expect(logs[0]?.error).toBe(reset);
    expect(errors).toEqual([]);
  });
});

describe('a body of declared length (Web handler)', () => {
  it('is read in one call, without building request.body (which some adapters make per request)', async () => {
    const { handler, calls } = handlerFor();
    const delivery = signDelivery(webhookBody());
    const length = String(new TextEncoder().encode(delivery.body).byteLength);
    const request = new Request(WEBHOOK_URL, {
      method: 'POST',
      headers: { ...delivery.headers, 'content-length': length },
      body: delivery.body,
    });
    Object.defineProperty(request, 'body', {
      get() {
        throw new Error('request.body was built');
      },
    });
    const response = await handler(request);
    expect(response.status).toBe(200);
    expect(calls).toHaveLength(1);
  });

  it('is still refused 413 when the request carries more bytes than it declares', async () => {
    const { handler, calls } = handlerFor({ maxBodyBytes: 1_024 });
    const delivery = signDelivery(webhookBody({ fields: { note: 'x'.repeat(4_096) } }));
    const request = new Request(WEBHOOK_URL, {
      method: 'POST',
      headers: { ...delivery.headers, 'content-length': '100' },
      body: delivery.body,
    });
    const response = await handler(request);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: 'BODY_TOO_LARGE' });
    expect(calls).toEqual([]);
  });

  it('is refused 413 at once, its body never read, when it declares more than the limit and the 8 MiB dropped past it', async () => {
    const { handler, calls } = handlerFor({ maxBodyBytes: 1_024 });
    const delivery = signDelivery(webhookBody());
    let pulls = 0;
    // A body that never ends: reading it at all would end in a 408 after bodyTimeoutMs.
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls++;
        controller.enqueue(new Uint8Array(64));
      },
    });
    const declared = 1_024 + 8 * 1_048_576 + 1;
    const response = await handler(streamRequest({ ...delivery.headers, 'content-length': String(declared) }, endless));
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: 'BODY_TOO_LARGE', message: 'The body exceeds 1024 bytes.' });
    expect(response.headers.get('connection')).toBe('close');
    expect(pulls).toBeLessThanOrEqual(1); // the stream's own first pull, at most: nothing was read from it
    expect(calls).toEqual([]);
  });

  it('is refused 413, not 408, when it declares more than the limit and stalls past it: the bytes over it are counted as they come', async () => {
    const { handler, calls } = handlerFor({ maxBodyBytes: 1_024, bodyTimeoutMs: 150 });
    const delivery = signDelivery(webhookBody());
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(2_048));
      },
    });
    const response = await handler(streamRequest({ ...delivery.headers, 'content-length': '4096' }, stalled));
    expect(response.status).toBe(413);
    expect(calls).toEqual([]);
  });

  it('times out (408) when the declared bytes never all arrive', async () => {
    const { handler, calls } = handlerFor({ bodyTimeoutMs: 150 });
    const delivery = signDelivery(webhookBody());
    const bytes = new TextEncoder().encode(delivery.body);
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.subarray(0, bytes.length >> 1));
      },
    });
    const response = await handler(
      streamRequest({ ...delivery.headers, 'content-length': String(bytes.byteLength) }, stalled),
    );
    expect(response.status).toBe(408);
    expect(calls).toEqual([]);
  });
});

describe('a POST without a body (Web handler)', () => {
  it('is refused as a bad delivery (4xx, reported), not answered 500 as a misconfiguration', async () => {
    const { handler, logs, errors } = watchedHandler();
    const { headers } = signDelivery(webhookBody());
    const request = new Request(WEBHOOK_URL, { method: 'POST', headers });
    expect(request.body).toBeNull();
    const response = await handler(request);
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect(logs.map((record) => [record.event, record.level])).toEqual([['rejected', 'warn']]);
    expect(errors).toHaveLength(1);
  });
});

describe('waitUntil (Web handler)', () => {
  it('is handed nothing when no bookkeeping is left after the answer', async () => {
    const { handler } = handlerFor();
    const handed: unknown[] = [];
    const context = { waitUntil: (promise: Promise<unknown>) => void handed.push(promise) };
    const delivery = signDelivery(webhookBody());
    const toRequest = () =>
      new Request(WEBHOOK_URL, { method: 'POST', headers: delivery.headers, body: delivery.body });
    expect((await handler(toRequest(), context)).status).toBe(200);
    expect((await handler(toRequest(), context)).status).toBe(200);
    expect((await handler(new Request(WEBHOOK_URL, { method: 'GET' }), context)).status).toBe(405);
    expect(handed).toEqual([]);
  });
});

describe('a body disturbed before the handler (Web handler)', () => {
  const read = (request: Request) => request.text();
  const lock = (request: Request) => request.body?.getReader();
  // h3 v2 (srvx): once its readBody ran, the request's body is null and bodyUsed true; read as no body at all, a
  // chunked delivery was a 401 SIGNATURE_MISMATCH for an empty body.
  const readToNull = async (request: Request) => {
    await request.text();
    Object.defineProperty(request, 'body', { value: null });
  };
  it.each([
    ['read by a body parser, length declared', read, true],
    ['read by a body parser, no length (the stream path)', read, false],
    ['read by a framework that then shows no body (h3 v2), no length', readToNull, false],
    ['locked by something else and never read, length declared', lock, true],
    ['locked by something else and never read, no length (the stream path)', lock, false],
  ])('%s: a misconfiguration (500), not a client that went away', async (_, disturb, declared) => {
    const { handler, logs } = watchedHandler();
    const delivery = signDelivery(webhookBody());
    const length = declared ? { 'content-length': String(delivery.body.length) } : {};
    const request = new Request(WEBHOOK_URL, {
      method: 'POST',
      headers: { ...delivery.headers, ...length },
      body: delivery.body,
    });
    await disturb(request);
    expect((await handler(request)).status).toBe(500);
    expect(logs.map((record) => record.event)).toEqual(['misconfigured']);
    // The platform's own error is named, for whoever reads the log.
    expect(logs[0]).toMatchObject({
      level: 'error',
      message: expect.stringMatching(/^The request body .+\. Cause: \S/),
    });
  });
});
