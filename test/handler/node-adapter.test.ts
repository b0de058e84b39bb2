// The Node adapter on real node:http servers: what it takes from req.body,
// how it reads the stream itself, and what a client that stalls or goes away
// gets.
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import type { WebhookHandlerOptions, WebhookLogRecord } from '../../src/handler/options.js';
import { createNodeWebhookHandler } from '../../src/node/index.js';
import { listen, send, type RunningServer } from '../helpers/http.js';
import { PUBLIC_KEY, signDelivery, webhookBody } from '../helpers/sign.js';

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

/**
 * Sends the headers and the first half of a signed delivery's body, then
 * stalls; resolves with the answer and whether the server then closed the
 * connection.
 */
function sendHalfAndStall(port: number): Promise<{ status: number; body: string; closed: Promise<void> }> {
  const delivery = signDelivery(webhookBody());
  const bytes = Buffer.from(delivery.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: delivery.target,
        setHost: false,
        headers: { ...delivery.headers, 'content-length': String(bytes.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        const closed = new Promise<void>((done) => req.socket?.once('close', () => done()));
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), closed }),
        );
      },
    );
    req.on('error', reject);
    req.write(bytes.subarray(0, bytes.length >> 1));
    // …and never the rest.
  });
}

describe('bodyTimeoutMs', () => {
  it('answers 408 BODY_TIMEOUT to a client that sends half a body and stalls, and closes the connection', async () => {
    const errors: Array<[string, number]> = [];
    const r = await serve({
      bodyTimeoutMs: 200,
      onError: (error) => {
        errors.push([error.code, error.status]);
      },
    });
    const started = Date.now();
    const answer = await sendHalfAndStall(r.port);
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body)).toMatchObject({ ok: false, code: 'BODY_TIMEOUT' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    await answer.closed;
    expect(errors).toEqual([['BODY_TIMEOUT', 408]]);
    expect(r.calls).toEqual([]);
  });

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

describe('a client that goes away while the body is read', () => {
  it('is logged as aborted (info), not reported to onError, and not answered', async () => {
    const logs: WebhookLogRecord[] = [];
    const errors: string[] = [];
    const r = await serve({
      logger: (record) => logs.push(record),
      onError: (error) => {
        errors.push(error.code);
      },
    });
    const delivery = signDelivery(webhookBody());
    const bytes = Buffer.from(delivery.body);
    let answered = false;
    await new Promise<void>((resolve) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: r.port,
          method: 'POST',
          path: delivery.target,
          setHost: false,
          headers: { ...delivery.headers, 'content-length': String(bytes.length) },
        },
        () => {
          answered = true;
        },
      );
      req.on('error', () => resolve());
      req.write(bytes.subarray(0, bytes.length >> 1), () => setTimeout(() => req.destroy(), 50));
    });
    const deadline = Date.now() + 2_000;
    while (!logs.some((record) => record.event === 'aborted') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(logs.map((record) => [record.event, record.level])).toEqual([['aborted', 'info']]);
    expect(errors).toEqual([]);
    expect(answered).toBe(false);
    expect(r.calls).toEqual([]);
  });
});
