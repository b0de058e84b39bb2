// The Node adapter on real node:http servers: what it takes from req.body
// and when it reads the stream itself.
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, createServer as createHttp2Server } from 'node:http2';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { WebhookLogRecord } from '../../src/handler/hooks.js';
import type { WebhookHandlerOptions } from '../../src/handler/options.js';
import { createNodeWebhookHandler } from '../../src/node/index.js';
import { listen, send, type RunningServer } from '../helpers/http.js';
import { PUBLIC_KEY, signDelivery, webhookBody } from '../helpers/sign.js';
import { collectInto } from '../helpers/logs.js';

const servers: RunningServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

const WEBHOOK_URL = 'https://shop.example.kg/webhooks/payments';

async function serve(
  options: Partial<WebhookHandlerOptions>,
  before: (req: IncomingMessage & { body?: unknown }) => void = () => {},
): Promise<{ port: number; calls: string[] }> {
  const calls: string[] = [];
  const handler = createNodeWebhookHandler({
    publicKeys: PUBLIC_KEY,
    webhookUrl: WEBHOOK_URL,
    onPayment: (webhook) => {
      calls.push(webhook.id);
    },
    ...options,
  });
  const server = await listen(
    createServer((req: IncomingMessage, res: ServerResponse) => {
      before(req);
      void handler(req, res);
    }),
  );
  servers.push(server);
  return { port: server.port, calls };
}

/** A handler without webhookUrl (the Host is what was signed), and the ids onPayment received. */
function anyHostHandler(): { handler: ReturnType<typeof createNodeWebhookHandler>; calls: string[] } {
  const calls: string[] = [];
  const handler = createNodeWebhookHandler({
    publicKeys: PUBLIC_KEY,
    allowAnyHost: true,
    onPayment: (webhook) => {
      calls.push(webhook.id);
    },
  });
  return { handler, calls };
}

describe('node:http2', () => {
  // HTTP/2 sends the authority as :authority and no Host header; it stands for Host in the signed string.
  it('reads the host from :authority, and still refuses a delivery signed for another host', async () => {
    const { handler, calls } = anyHostHandler();
    const server = createHttp2Server((req, res) => void handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const client = connect(`http://127.0.0.1:${port}`);
    const post = (signedHost: string, extra: Record<string, string> = {}) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const { headers, body } = signDelivery(webhookBody(), { host: `127.0.0.1:${port}`, signedHost });
        const { host: _host, ...rest } = headers;
        const stream = client.request({ ':method': 'POST', ':path': '/webhooks/payments', ...rest, ...extra });
        let text = '';
        let status = 0;
        stream.on('response', (head) => (status = Number(head[':status'])));
        stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
        stream.on('end', () => resolve({ status, body: text }));
        stream.on('error', reject);
        stream.end(body);
      });
    try {
      expect(await post(`127.0.0.1:${port}`)).toEqual({ status: 200, body: '{"ok":true}' });
      expect(calls).toHaveLength(1);
      const forged = await post('shop.example.kg');
      expect([forged.status, JSON.parse(forged.body).code]).toEqual([401, 'SIGNATURE_MISMATCH']);
      expect(calls).toHaveLength(1);
      // A Host header beside a different :authority (RFC 9113 §8.3.1: malformed): signed for the Host, refused.
      const both = await post('shop.example.kg', { ':authority': `127.0.0.1:${port}`, host: 'shop.example.kg' });
      expect([both.status, JSON.parse(both.body).code]).toEqual([400, 'MISSING_HOST']);
      // The same Host as :authority is one host: accepted.
      const same = { ':authority': `127.0.0.1:${port}`, host: `127.0.0.1:${port}` };
      expect((await post(`127.0.0.1:${port}`, same)).status).toBe(200);
      expect(calls).toHaveLength(2);
      // Letter case and a default port do not make another host (RFC 9113 §8.3.1 compares them normalised).
      const cased = { ':authority': 'Shop.Example.KG:443', host: 'shop.example.kg' };
      expect((await post('shop.example.kg', cased)).status).toBe(200);
      expect(calls).toHaveLength(3);
    } finally {
      client.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('node:http2 refusals', () => {
  // HTTP/2 has no Connection header: node:http2 drops `connection: close` with a process warning and the stream
  // stayed open, so a stalled body held it and an endless one was read on after the 413 (40 MiB in a test).
  it('close the stream of a 408 or 413, as HTTP/1.1 closes the connection, with no process warning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => void warnings.push(warning.message);
    process.on('warning', onWarning);
    const handler = createNodeWebhookHandler({
      publicKeys: PUBLIC_KEY,
      allowAnyHost: true,
      maxBodyBytes: 1024,
      bodyTimeoutMs: 200,
      logger: false,
      onPayment: () => {},
    });
    const server = createHttp2Server((req, res) => void handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const client = connect(`http://127.0.0.1:${port}`);
    /** Opens a delivery's stream, writes `first`, then 64 KiB chunks while the server takes them (at most 40 MiB). */
    const post = (first: string, endless: boolean) =>
      new Promise<{ status: number; code: string; closed: boolean; sent: number }>((resolve) => {
        const { host: _host, ...headers } = signDelivery(webhookBody(), { host: `127.0.0.1:${port}` }).headers;
        const stream = client.request({ ':method': 'POST', ':path': '/webhooks/payments', ...headers });
        let status = 0;
        let text = '';
        let sent = 0;
        stream.on('error', () => {});
        stream.on('response', (head) => (status = Number(head[':status'])));
        stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
        const chunk = Buffer.alloc(64 * 1024, 'a');
        const more = (): void => {
          if (stream.closed || sent >= 40 * 1_048_576) return;
          sent += chunk.length;
          stream.write(chunk, more);
        };
        stream.write(first, endless ? more : undefined);
        // Reset by the server, or not, half a second after the answer (a write it no longer takes never calls back).
        stream.on('end', () =>
          setTimeout(() => resolve({ status, code: JSON.parse(text).code, closed: stream.closed, sent }), 500),
        );
      });
    try {
      expect(await post('{"id":', false)).toMatchObject({ status: 408, code: 'BODY_TIMEOUT', closed: true });
      const tooLarge = await post('{"id":', true);
      expect(tooLarge).toMatchObject({ status: 413, code: 'BODY_TOO_LARGE', closed: true });
      // Read and dropped up to the limit and 8 MiB, as over HTTP/1.1, then no more.
      expect(tooLarge.sent).toBeLessThan(12 * 1_048_576);
      expect(warnings.filter((message) => message.includes('connection'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      client.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 30_000);
});

describe('headers of four letters', () => {
  it('are not Host lines: a delivery with Date and From headers is handled (allowAnyHost)', async () => {
    const { handler, calls } = anyHostHandler();
    const server = await listen(createServer((req, res) => void handler(req, res)));
    servers.push(server);
    const r = { port: server.port, calls };
    const delivery = signDelivery(webhookBody());
    const headers = { ...delivery.headers, date: new Date().toUTCString(), from: 'payments@service.example' };
    const answer = await send(r.port, { ...delivery, headers });
    expect([answer.status, answer.json]).toEqual([200, { ok: true }]);
    expect(r.calls).toEqual([delivery.id]);
  });
});

describe('middleware before the handler', () => {
  it('reads a body a middleware paused (req.pause(), at once or after a tick), as captureDelivery does', async () => {
    for (const resumeLater of [false, true]) {
      const { handler, calls } = anyHostHandler();
      const server = await listen(
        createServer((req, res) => {
          req.pause();
          if (resumeLater) setTimeout(() => void handler(req, res), 10);
          else void handler(req, res);
        }),
      );
      servers.push(server);
      const delivery = signDelivery(webhookBody(), { host: `127.0.0.1:${server.port}` });
      const answer = await send(server.port, delivery);
      expect([answer.status, answer.json]).toEqual([200, { ok: true }]);
      expect(calls).toEqual([delivery.id]);
    }
  });

  it('ends a response a middleware started and left open, instead of leaving the sender waiting', async () => {
    const { handler, calls } = anyHostHandler();
    const server = await listen(
      createServer((req, res) => {
        res.writeHead(202, { 'content-type': 'text/plain' });
        res.write('accepted');
        void handler(req, res);
      }),
    );
    servers.push(server);
    const delivery = signDelivery(webhookBody(), { host: `127.0.0.1:${server.port}` });
    const answer = await send(server.port, delivery);
    expect([answer.status, answer.text]).toEqual([202, 'accepted']);
    expect(calls).toEqual([delivery.id]);
  });
});

describe('req.body left by a body parser', () => {
  it('reads the stream itself when a middleware set req.body = {} without reading it (body-parser 1.x, unparsed type)', async () => {
    const r = await serve({}, (req) => {
      req.body = {};
    });
    const delivery = signDelivery(webhookBody(), { headers: { 'content-type': 'application/vnd.payment+json' } });
    const answer = await send(r.port, delivery);
    expect([answer.status, answer.json]).toEqual([200, { ok: true }]);
    expect(r.calls).toEqual([delivery.id]);
  });

  it('still takes req.body when a middleware read the stream to its end', async () => {
    const server = createServer((req: IncomingMessage & { body?: unknown }, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        // What express.json() leaves: the parsed object, the stream consumed.
        req.body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        void handler(req, res);
      });
    });
    const calls: string[] = [];
    const handler = createNodeWebhookHandler({
      publicKeys: PUBLIC_KEY,
      webhookUrl: WEBHOOK_URL,
      onPayment: (webhook) => {
        calls.push(webhook.id);
      },
    });
    const running = await listen(server);
    servers.push(running);
    const delivery = signDelivery(webhookBody());
    expect((await send(running.port, delivery)).status).toBe(200);
    expect(calls).toEqual([delivery.id]);
  });
});

describe('a body stream read to its end with nothing left on req.body', () => {
  it('is a misconfiguration (500 INVALID_ARGUMENT, logged as an error), not a body to wait for', async () => {
    const logs: WebhookLogRecord[] = [];
    const calls: string[] = [];
    const handler = createNodeWebhookHandler({
      publicKeys: PUBLIC_KEY,
      webhookUrl: WEBHOOK_URL,
      logger: collectInto(logs),
      onPayment: (webhook) => {
        calls.push(webhook.id);
      },
    });
    // A middleware that consumed the stream but left no req.body (a logger that buffers it, say).
    const running = await listen(
      createServer((req, res) => {
        req.on('data', () => {});
        req.on('end', () => void handler(req, res));
      }),
    );
    servers.push(running);
    const answer = await send(running.port, signDelivery(webhookBody()));
    expect([answer.status, answer.json?.code]).toEqual([500, 'INVALID_ARGUMENT']);
    expect(logs.map((record) => [record.event, record.level, record.status, record.code])).toEqual([
      ['misconfigured', 'error', 500, 'INVALID_ARGUMENT'],
    ]);
    expect(logs[0]?.message).toBe(
      'The request body was already read, and no body parser left it on req.body (Fastify: pass (request, reply), not request.raw; Koa with a body parser: set ctx.req.body = ctx.request.rawBody).',
    );
    expect(calls).toEqual([]);
  });
});

describe('a body stream a middleware began to read', () => {
  it('is a misconfiguration (500 INVALID_ARGUMENT), not what is left of it verified as the body', async () => {
    const logs: WebhookLogRecord[] = [];
    const handler = createNodeWebhookHandler({
      publicKeys: PUBLIC_KEY,
      webhookUrl: WEBHOOK_URL,
      logger: collectInto(logs),
      onPayment: () => {},
    });
    // Takes the first chunk, then hands the request on while the rest is still to come.
    const running = await listen(
      createServer((req, res) => {
        req.once('data', () => {
          req.pause();
          void handler(req, res);
        });
      }),
    );
    servers.push(running);
    const answer = await send(running.port, signDelivery(webhookBody()), { chunked: true, pauseMs: 100 });
    expect([answer.status, answer.json?.code]).toEqual([500, 'INVALID_ARGUMENT']);
    expect(logs.map((record) => [record.event, record.code])).toEqual([['misconfigured', 'INVALID_ARGUMENT']]);
    expect(logs[0]?.message).toContain('Part of the request body was read before the handler');
  });
});

describe('a body sent with a Content-Encoding', () => {
  it('is refused with a message that names it (400 INVALID_BODY), not as text that is not UTF-8', async () => {
    const handler = createNodeWebhookHandler({
      publicKeys: PUBLIC_KEY,
      webhookUrl: WEBHOOK_URL,
      logger: false,
      onPayment: () => {},
    });
    const running = await listen(createServer((req, res) => void handler(req, res)));
    servers.push(running);
    const delivery = signDelivery(webhookBody());
    const answer = await send(running.port, {
      ...delivery,
      headers: { ...delivery.headers, 'content-encoding': 'gzip' },
      body: gzipSync(delivery.body),
    });
    expect([answer.status, answer.json?.code]).toEqual([400, 'INVALID_BODY']);
    expect(answer.json?.message).toContain('Content-Encoding gzip');
    const identity = { ...delivery.headers, 'content-encoding': 'identity' };
    expect((await send(running.port, { ...delivery, headers: identity })).status).toBe(200);
  });
});

describe('maxBodyBytes for a body a parser left on req.body', () => {
  it('takes a body of exactly maxBodyBytes, and refuses one byte more (413), by its size', async () => {
    const delivery = signDelivery(webhookBody());
    const length = Buffer.byteLength(delivery.body);
    const answers: Array<[number, string | undefined]> = [];
    for (const maxBodyBytes of [length, length - 1]) {
      const calls: string[] = [];
      const handler = createNodeWebhookHandler({
        publicKeys: PUBLIC_KEY,
        webhookUrl: WEBHOOK_URL,
        maxBodyBytes,
        onPayment: (webhook) => {
          calls.push(webhook.id);
        },
      });
      // What express.raw() leaves: the bytes on req.body, the stream consumed.
      const running = await listen(
        createServer((req: IncomingMessage & { body?: unknown }, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (chunk: Buffer) => chunks.push(chunk));
          req.on('end', () => {
            req.body = Buffer.concat(chunks);
            void handler(req, res);
          });
        }),
      );
      servers.push(running);
      const answer = await send(running.port, delivery);
      answers.push([answer.status, answer.json?.code]);
    }
    expect(answers).toEqual([
      [200, undefined],
      [413, 'BODY_TOO_LARGE'],
    ]);
  });
});

describe('a hand-made request (a serverless shim)', () => {
  it('without a method is answered 405 with Allow: POST, not a 500', async () => {
    const errors: Array<[string, number]> = [];
    const handler = createNodeWebhookHandler({
      publicKeys: PUBLIC_KEY,
      webhookUrl: WEBHOOK_URL,
      logger: false,
      onError: (error) => {
        errors.push([error.code, error.status]);
      },
      onPayment: () => {},
    });
    const delivery = signDelivery(webhookBody());
    const headers: Record<string, string> = {};
    const res = {
      statusCode: 0,
      body: '',
      setHeader: (name: string, value: string) => void (headers[name] = value),
      end(chunk: string) {
        this.body = chunk;
      },
    };
    const req = { url: delivery.target, headers: delivery.headers, on: () => {}, removeListener: () => {} };
    await handler(req, res);
    expect([res.statusCode, headers['allow']]).toEqual([405, 'POST']);
    expect(JSON.parse(res.body)).toEqual({
      ok: false,
      code: 'METHOD_NOT_ALLOWED',
      message: 'Webhooks arrive as POST, not undefined.',
    });
    expect(errors).toEqual([['METHOD_NOT_ALLOWED', 405]]);
  });

  it('without headers is answered (401 MISSING_SIGNATURE), not left unanswered with a rejected promise', async () => {
    const { handler, req, res } = shim({ headers: undefined });
    await handler(req, res);
    expect([res.statusCode, JSON.parse(res.body).code]).toEqual([401, 'MISSING_SIGNATURE']);
  });

  /** A handler whose log records and onError codes are kept, a request stream made by hand, and a response that records. */
  function shim(extra: Record<string, unknown> = {}) {
    const logs: WebhookLogRecord[] = [];
    const errors: string[] = [];
    const handler = createNodeWebhookHandler({
      publicKeys: PUBLIC_KEY,
      webhookUrl: WEBHOOK_URL,
      bodyTimeoutMs: 1_000,
      logger: collectInto(logs),
      onError: (error) => {
        errors.push(error.code);
      },
      onPayment: () => {},
    });
    const delivery = signDelivery(webhookBody({ fields: { note: 'Ünïcödé € ✓' } }));
    const req = Object.assign(
      new EventEmitter(),
      { method: 'POST', url: delivery.target, headers: delivery.headers },
      extra,
    );
    const res = {
      statusCode: 0,
      body: '',
      setHeader: () => {},
      end(chunk: string) {
        this.body = chunk;
      },
    };
    return { handler, logs, errors, delivery, req, res };
  }

  it('tells a stream error of a client going away (logged aborted) from any other (a 500 that names it)', async () => {
    const gone: unknown[] = [
      Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
      Object.assign(new Error('connection aborted'), { code: 'ECONNABORTED' }),
      new Error('aborted'),
    ];
    for (const error of gone) {
      const { handler, logs, errors, req, res } = shim();
      const answered = handler(req, res);
      await vi.waitFor(() => expect(req.listenerCount('error')).toBe(1));
      req.emit('error', error);
      await answered;
      expect(
        logs.map((record) => [record.event, record.level]),
        String(error),
      ).toEqual([['aborted', 'info']]);
      expect(errors).toEqual([]);
      expect(req.listenerCount('data')).toBe(0);
    }
    // Closed before its end, with no error: the client went away too.
    const closed = shim();
    const pending = closed.handler(closed.req, closed.res);
    await vi.waitFor(() => expect(closed.req.listenerCount('close')).toBe(1));
    closed.req.emit('close');
    await pending;
    expect(closed.logs.map((record) => [record.event, record.level])).toEqual([['aborted', 'info']]);

    for (const error of [new Error('incorrect header check'), 'a string', null]) {
      const { handler, logs, errors, req, res } = shim();
      const answered = handler(req, res);
      await vi.waitFor(() => expect(req.listenerCount('error')).toBe(1));
      req.emit('error', error);
      await answered;
      expect(res.statusCode, String(error)).toBe(500);
      expect(errors).toEqual(['INVALID_ARGUMENT']);
      expect(logs[0]?.message).toMatch(/^The request body could not be read\. Cause: /);
    }
  });

  it('takes req.body as given from an object that is not a stream, or one whose whole message was read', async () => {
    const given = (extra: Record<string, unknown>) => {
      const made = shim(extra);
      made.req = Object.assign(made.req, { body: Buffer.from(made.delivery.body) });
      return made;
    };
    // Neither readableEnded nor complete: a serverless shim's request, its body as given (no stream event comes).
    for (const extra of [{}, { readableEnded: false, complete: true, readableLength: 0 }]) {
      const { handler, req, res } = given(extra);
      await handler(req, res);
      expect([res.statusCode, res.body], JSON.stringify(extra)).toEqual([200, '{"ok":true}']);
    }
    // Arrived whole but bytes still unread: the placeholder is not the body, the stream is read.
    const unread = given({ readableEnded: false, complete: true, readableLength: 12 });
    const answered = unread.handler(unread.req, unread.res);
    await vi.waitFor(() => expect(unread.req.listenerCount('data')).toBe(1));
    unread.req.emit('data', Buffer.from(unread.delivery.body));
    unread.req.emit('end');
    await answered;
    expect(unread.res.statusCode).toBe(200);
  });

  it('leaves a response another middleware already sent alone, and still resolves', async () => {
    const { handler, req, res, errors } = shim({ method: 'GET' });
    const sent = Object.assign(res, {
      headersSent: true,
      setHeader: () => {
        throw Object.assign(new Error('Cannot set headers after they are sent to the client'), {
          code: 'ERR_HTTP_HEADERS_SENT',
        });
      },
    });
    await expect(handler(req, sent)).resolves.toBeUndefined();
    expect([sent.statusCode, sent.body]).toEqual([0, '']);
    expect(errors).toEqual(['METHOD_NOT_ALLOWED']);
  });

  it('verifies a body whose stream hands out text (req.setEncoding), byte for byte', async () => {
    const { handler, req, res, delivery } = shim();
    const answered = handler(req, res);
    await vi.waitFor(() => expect(req.listenerCount('data')).toBe(1));
    const text = delivery.body;
    req.emit('data', text.slice(0, 40));
    req.emit('data', text.slice(40));
    req.emit('end');
    await answered;
    expect([res.statusCode, res.body]).toEqual([200, '{"ok":true}']);
  });
});

describe('bodyTimeoutMs', () => {
  it('refuses a bodyTimeoutMs that is not a positive number of milliseconds', () => {
    for (const bodyTimeoutMs of [0, -1, Number.NaN, Infinity]) {
      expect(() =>
        createNodeWebhookHandler({
          publicKeys: PUBLIC_KEY,
          webhookUrl: WEBHOOK_URL,
          onPayment: () => {},
          bodyTimeoutMs,
        }),
      ).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    }
  });
});
// The 408 of a stalled body and a client that goes away mid-body are in the
// shared behaviour suite (behaviour.ts), run against both adapters.
