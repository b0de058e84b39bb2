// One behaviour suite for both adapters: every test here runs once against
// payhook/node on a node:http server and once against payhook/web on a real
// Web server (@hono/node-server), with the same expectations — answers, log
// records and hook calls — so the two cannot drift apart.
import { getRequestListener } from '@hono/node-server';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import type { CapturedDelivery } from '../../src/capture.js';
import { createMemoryStore } from '../../src/dedup/memory.js';
import type { DedupStore } from '../../src/dedup/store.js';
import type { DeadLetterDelivery, InvalidPayloadDelivery, WebhookLogRecord } from '../../src/handler/hooks.js';
import type { WebhookHandlerOptions } from '../../src/handler/options.js';
import { createNodeWebhookHandler } from '../../src/node/index.js';
import { PayhookError } from '../../src/lib/errors.js';
import { MAX_BODY_MEMBERS, MAX_BODY_NAMES_LENGTH } from '../../src/lib/json-body.js';
import { park } from '../../src/park.js';
import { verifyWebhook } from '../../src/verify-webhook.js';
import type { PaymentWebhook } from '../../src/webhook/types.js';
import { createWebhookHandler } from '../../src/web/index.js';
import { listen, send, type HttpAnswer, type RunningServer } from '../helpers/http.js';
import { PUBLIC_KEY, signDelivery, webhookBody, type SignedDelivery } from '../helpers/sign.js';
import { collectInto } from '../helpers/logs.js';

export type AdapterKind = 'node' | 'web';

const WEBHOOK_URL = 'https://shop.example.kg/webhooks/payments';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Receiver {
  port: number;
  calls: string[];
  logs: WebhookLogRecord[];
  errors: Array<[string, number]>;
}

/** What the suite compares across adapters: the shape of each log record. */
const shape = (record: WebhookLogRecord) => [record.event, record.level, record.status, record.code];

async function waitFor(condition: () => boolean, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await sleep(10);
}

/**
 * Sends raw bytes on a fresh socket and resolves with everything read until
 * the server closes (or resets). Like most HTTP clients, it reads the answer
 * only once the whole request is written (`readAfterWrite`): an answer that
 * arrives before a reset is then lost, as a real sender loses it.
 */
function rawExchange(port: number, parts: readonly Buffer[], readAfterWrite = false): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let error = '';
    if (readAfterWrite) socket.pause();
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', (cause: NodeJS.ErrnoException) => {
      error = ` [${cause.code ?? cause.message}]`;
    });
    socket.on('close', () => resolve(Buffer.concat(received).toString('latin1') + error));
    socket.on('connect', () => {
      // The head first, the body a moment later, as it leaves a slower link.
      const [head, ...body] = parts;
      socket.write(head as Buffer);
      setTimeout(() => {
        body.forEach((part, index) =>
          socket.write(part, index === body.length - 1 && readAfterWrite ? () => socket.resume() : undefined),
        );
      }, 20);
    });
    setTimeout(() => socket.destroy(), 5_000).unref();
  });
}

export function behaviourSuite(kind: AdapterKind): void {
  const servers: RunningServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
  });

  /** `delayMs`: an async step before the handler, as a middleware (an auth or tenant lookup) takes. */
  async function serve(
    options: Partial<WebhookHandlerOptions> = {},
    onPayment: WebhookHandlerOptions['onPayment'] = () => {},
    delayMs = 0,
  ): Promise<Receiver> {
    const receiver: Receiver = { port: 0, calls: [], logs: [], errors: [] };
    const all: WebhookHandlerOptions = {
      publicKeys: PUBLIC_KEY,
      webhookUrl: WEBHOOK_URL,
      logger: collectInto(receiver.logs),
      onError: (error) => {
        receiver.errors.push([error.code, error.status]);
      },
      ...options,
      onPayment: async (webhook, context) => {
        receiver.calls.push(webhook.id);
        return await onPayment(webhook, context);
      },
    };
    let server: RunningServer;
    if (kind === 'node') {
      const handler = createNodeWebhookHandler(all);
      server = await listen(
        createServer((req: IncomingMessage, res: ServerResponse) => void sleep(delayMs).then(() => handler(req, res))),
      );
    } else {
      const handler = createWebhookHandler(all);
      const listener = getRequestListener((req: Request) => sleep(delayMs).then(() => handler(req)));
      server = await listen((req, res) => void listener(req, res));
    }
    servers.push(server);
    receiver.port = server.port;
    return receiver;
  }

  describe(`behaviour of payhook/${kind}`, () => {
    it('answers 200 once, then 200 duplicate without calling onPayment again', async () => {
      const r = await serve();
      const delivery = signDelivery(webhookBody());
      const first = await send(r.port, delivery);
      expect(first.json).toEqual({ ok: true });
      // JSON, and never cached by a proxy between the service and the handler.
      expect([first.headers['content-type'], first.headers['cache-control']]).toEqual([
        'application/json; charset=utf-8',
        'no-store',
      ]);
      expect((await send(r.port, delivery)).json).toEqual({ ok: true, duplicate: true });
      expect(r.calls).toEqual([delivery.id]);
      expect(r.logs.map(shape)).toEqual([
        ['handled', 'info', 200, undefined],
        ['duplicate', 'info', 200, undefined],
      ]);
    });

    it('answers 400 INVALID_BODY, 401 SIGNATURE_MISMATCH and 405 (with Allow) with their log records', async () => {
      const mismatches: string[] = [];
      const r = await serve({ onSignatureMismatch: (req) => void mismatches.push(req.method) });
      const valid = signDelivery(webhookBody());
      const tampered = { ...valid, body: valid.body.replace('"amount":100', '"amount":900') };
      const cases: Array<[Parameters<typeof send>[1], number, string]> = [
        [signDelivery('{oops'), 400, 'INVALID_BODY'],
        [tampered, 401, 'SIGNATURE_MISMATCH'],
        [{ ...valid, method: 'GET', body: '' }, 405, 'METHOD_NOT_ALLOWED'],
      ];
      const answers: HttpAnswer[] = [];
      for (const [delivery, status, code] of cases) {
        const answer = await send(r.port, delivery);
        answers.push(answer);
        expect([answer.status, answer.json]).toEqual([status, { ok: false, code, message: expect.any(String) }]);
      }
      expect(answers[2]?.headers['allow']).toBe('POST');
      await waitFor(() => mismatches.length > 0);
      expect(mismatches).toEqual(['POST']);
      expect(r.logs.map(shape)).toEqual([
        ['rejected', 'warn', 400, 'INVALID_BODY'],
        ['rejected', 'warn', 401, 'SIGNATURE_MISMATCH'],
        ['rejected', 'warn', 405, 'METHOD_NOT_ALLOWED'],
      ]);
      expect(r.errors).toEqual([
        ['INVALID_BODY', 400],
        ['SIGNATURE_MISMATCH', 401],
        ['METHOD_NOT_ALLOWED', 405],
      ]);
      expect(r.calls).toEqual([]);
    });

    it('handles a signed body at the bounds on its top-level members, and answers 400 INVALID_BODY one past them', async () => {
      const r = await serve();
      const namesLength = (body: object) => Object.keys(body).reduce((sum, name) => sum + name.length, 0);
      const members = (count: number) => {
        const body: Record<string, unknown> = webhookBody();
        for (let i = 0; Object.keys(body).length < count; i++) body[`m${i}`] = i;
        return body;
      };
      const names = (length: number) => {
        const body: Record<string, unknown> = webhookBody();
        body['n'.repeat(length - namesLength(body))] = 1;
        return body;
      };
      const cases: Array<[Record<string, unknown>, number]> = [
        [members(MAX_BODY_MEMBERS), 200],
        [members(MAX_BODY_MEMBERS + 1), 400],
        [names(MAX_BODY_NAMES_LENGTH), 200],
        [names(MAX_BODY_NAMES_LENGTH + 1), 400],
      ];
      for (const [body, status] of cases) {
        const answer = await send(r.port, signDelivery(body));
        expect([Object.keys(body).length, namesLength(body), answer.status, answer.json]).toEqual([
          Object.keys(body).length,
          namesLength(body),
          status,
          status === 200 ? { ok: true } : { ok: false, code: 'INVALID_BODY', message: expect.any(String) },
        ]);
      }
      expect(r.calls).toHaveLength(2);
    });

    it("answers 401 URL_MISMATCH naming the parameter, never the registered URL's password or query values", async () => {
      // Anyone holding one genuine delivery (for their own shop) can send it here without the registered query.
      const r = await serve({
        webhookUrl: 'https://hook:Pa55w0rd@shop.example.kg/webhooks/payments?shop=7&token=S3CRET',
      });
      const lacking = await send(r.port, signDelivery(webhookBody()));
      const guessed = await send(r.port, signDelivery(webhookBody(), { target: '/webhooks/payments?shop=7&token=x' }));
      expect([lacking.status, lacking.json?.code, guessed.status, guessed.json?.code]).toEqual([
        401,
        'URL_MISMATCH',
        401,
        'URL_MISMATCH',
      ]);
      // What the merchant needs to fix it: the parameter, and what is wrong with it.
      expect(lacking.json?.message).toContain('lacks the parameter "shop"');
      expect(guessed.json?.message).toContain('gives the parameter "token"');
      expect(guessed.json?.message).toContain('another value');
      await waitFor(() => r.logs.length === 2);
      const said = [lacking.text, guessed.text, ...r.logs.map((record) => record.message)].join('\n');
      expect(said).not.toMatch(/Pa55w0rd|S3CRET|shop=7/);
    });

    it('answers 401 URL_MISMATCH without naming a registered parameter that has no value (it may be the secret)', async () => {
      const r = await serve({ webhookUrl: 'https://shop.example.kg/webhooks/payments?S3CRETTOKEN' });
      const lacking = await send(r.port, signDelivery(webhookBody()));
      expect([lacking.status, lacking.json?.code]).toEqual([401, 'URL_MISMATCH']);
      expect(lacking.json?.message).toContain('lacks a parameter without a value');
      await waitFor(() => r.logs.length === 1);
      expect([lacking.text, ...r.logs.map((record) => record.message)].join('\n')).not.toContain('S3CRETTOKEN');
    });

    it('hands onSignatureMismatch a lossless capture of the refused delivery', async () => {
      const captures: CapturedDelivery[] = [];
      const r = await serve({ onSignatureMismatch: (_req, { capture }) => void captures.push(capture) });
      // Signed for another path (a router that stripped a prefix, say), with a body verify must not rewrite.
      const body = JSON.stringify(webhookBody()).replace('"amount":100', '"amount":100.50');
      const delivery = signDelivery(body, { signedTarget: '/api/webhooks/payments' });
      expect((await send(r.port, delivery)).status).toBe(401);
      await waitFor(() => captures.length > 0);
      const [capture] = captures;
      expect(capture?.body).toBe(body);
      expect(capture?.headers['signature']).toBe(delivery.headers['signature']);
      // The handler's webhookUrl is recorded, so `payhook verify --request` judges it as the receiver did.
      expect(capture?.webhookUrl).toBe(WEBHOOK_URL);
      // Written as JSON and read back, the capture verifies once the URL it was signed for is given.
      const copy = JSON.parse(JSON.stringify(capture)) as CapturedDelivery;
      const result = await verifyWebhook(copy, {
        publicKeys: PUBLIC_KEY,
        webhookUrl: 'https://shop.example.kg/api/webhooks/payments',
      });
      expect(result.ok).toBe(true);
    });

    // The second case: the delivery's one timer is armed for the shortest deadline (100 ms), then re-armed for the body's.
    it.each([
      ['', { bodyTimeoutMs: 200 }],
      [
        ', not at a shorter store or handler deadline',
        { bodyTimeoutMs: 400, storeTimeoutMs: 100, handlerTimeoutMs: 100 },
      ],
    ])(
      'answers 408 BODY_TIMEOUT to a body that stalls, at the body deadline%s, and closes the connection',
      async (_, options) => {
        const r = await serve(options);
        const delivery = signDelivery(webhookBody());
        const bytes = Buffer.from(delivery.body);
        const head =
          `POST ${delivery.target} HTTP/1.1\r\n` +
          Object.entries({ ...delivery.headers, 'content-length': String(bytes.length) })
            .map(([name, value]) => `${name}: ${value}\r\n`)
            .join('') +
          '\r\n';
        const started = Date.now();
        const text = await rawExchange(r.port, [Buffer.from(head), bytes.subarray(0, bytes.length >> 1)]);
        expect(text).toMatch(/^HTTP\/1\.1 408 /);
        expect(text).toContain('"code":"BODY_TIMEOUT"');
        expect(Date.now() - started).toBeGreaterThanOrEqual(options.bodyTimeoutMs - 10);
        expect(Date.now() - started).toBeLessThan(4_000);
        expect(r.logs.map(shape)).toEqual([['rejected', 'warn', 408, 'BODY_TIMEOUT']]);
        expect(r.errors).toEqual([['BODY_TIMEOUT', 408]]);
        expect(r.calls).toEqual([]);
      },
    );

    it('answers 409 to a copy that arrives while the first is being handled', async () => {
      let open: () => void = () => {};
      const gate = new Promise<void>((resolve) => (open = resolve));
      const r = await serve({}, () => gate);
      const delivery = signDelivery(webhookBody());
      const first = send(r.port, delivery);
      await waitFor(() => r.calls.length === 1);
      const second = await send(r.port, delivery);
      expect([second.status, second.json?.code]).toEqual([409, 'DELIVERY_IN_PROGRESS']);
      open();
      expect((await first).status).toBe(200);
      expect(r.calls).toHaveLength(1);
      expect(r.logs.map(shape)).toEqual([
        ['in-progress', 'info', 409, 'DELIVERY_IN_PROGRESS'],
        ['handled', 'info', 200, undefined],
      ]);
    });

    describe('413: the sender receives it (raw socket, 50 times each)', () => {
      // Larger than what the kernel's socket buffers absorb, so a server that
      // stops reading makes the sender's writes fail before it reads.
      const oversized = Buffer.alloc(4 * 1024 * 1024, 'a');
      const head = (extra: string) =>
        Buffer.from(`POST /webhooks/payments HTTP/1.1\r\nhost: shop.example.kg\r\nsignature: x\r\n${extra}\r\n`);
      const chunked = [head('transfer-encoding: chunked\r\n')];
      for (let offset = 0; offset < oversized.length; offset += 65536) {
        chunked.push(Buffer.from('10000\r\n'), oversized.subarray(offset, offset + 65536), Buffer.from('\r\n'));
      }
      chunked.push(Buffer.from('0\r\n\r\n'));
      const cases: Array<[string, Buffer[]]> = [
        ['declared length', [head(`content-length: ${oversized.length}\r\n`), oversized]],
        ['chunked, no length', chunked],
      ];
      for (const [name, parts] of cases) {
        it(
          name,
          async () => {
            const r = await serve({ maxBodyBytes: 1024 });
            const answers: string[] = [];
            for (let batch = 0; batch < 5; batch++) {
              const texts = await Promise.all(Array.from({ length: 10 }, () => rawExchange(r.port, parts, true)));
              answers.push(...texts.map((text) => text.slice(0, 12)));
            }
            expect(answers).toEqual(Array.from({ length: 50 }, () => 'HTTP/1.1 413'));
            expect(r.calls).toEqual([]);
          },
          30_000,
        );
      }
    });

    it('answers 500 with the code and a generic message when onPayment throws; its text only in the logs', async () => {
      const r = await serve({}, () => {
        throw new Error('db down at 10.0.0.5');
      });
      const answer = await send(r.port, signDelivery(webhookBody()));
      expect(answer.status).toBe(500);
      expect(answer.json).toMatchObject({ ok: false, code: 'HANDLER_FAILED' });
      expect(answer.text).not.toContain('db down');
      expect(r.logs.map(shape)).toEqual([['handler-failed', 'error', 500, 'HANDLER_FAILED']]);
      expect(r.logs[0]?.message).toContain('db down at 10.0.0.5');
      // The claim was released: the retry is processed.
      expect(r.errors).toEqual([['HANDLER_FAILED', 500]]);
    });

    it('answers 503 when onPayment throws STORE_UNAVAILABLE (the inbox could not reach its database), claim released', async () => {
      let fail = true;
      const r = await serve({}, () => {
        if (fail) throw new PayhookError('STORE_UNAVAILABLE', 'PostgreSQL inbox insert failed: connect ECONNREFUSED');
      });
      const delivery = signDelivery(webhookBody());
      const answer = await send(r.port, delivery);
      expect([answer.status, answer.json?.code]).toEqual([503, 'STORE_UNAVAILABLE']);
      expect(r.logs.map(shape)).toEqual([['handler-failed', 'error', 503, 'STORE_UNAVAILABLE']]);
      // Released: once the database is back the retry is applied.
      fail = false;
      expect((await send(r.port, delivery)).json).toEqual({ ok: true });
      expect(r.calls).toEqual([delivery.id, delivery.id]);
    });

    it('puts the exception text in the 500 body only with exposeErrors: true', async () => {
      const r = await serve({ exposeErrors: true }, () => {
        throw new Error('db down at 10.0.0.5');
      });
      const answer = await send(r.port, signDelivery(webhookBody()));
      expect(answer.status).toBe(500);
      expect(answer.json?.message).toContain('db down at 10.0.0.5');
    });

    it('answers 500 when onPayment misses its deadline, and a duplicate once the late handler finished', async () => {
      const r = await serve({ handlerTimeoutMs: 100 }, () => sleep(250));
      const delivery = signDelivery(webhookBody());
      const answer = await send(r.port, delivery);
      expect([answer.status, answer.json?.code]).toEqual([500, 'HANDLER_FAILED']);
      await waitFor(() => r.logs.some((record) => record.event === 'late-handler-settled'));
      expect((await send(r.port, delivery)).json).toEqual({ ok: true, duplicate: true });
      expect(r.calls).toHaveLength(1);
      expect(r.logs.map(shape)).toEqual([
        ['handler-timeout', 'error', 500, 'HANDLER_FAILED'],
        ['late-handler-settled', 'warn', undefined, undefined],
        ['duplicate', 'info', 200, undefined],
      ]);
      expect(r.logs[0]?.message).toBe('onPayment did not finish within 100 ms; the service will retry.');
    });

    const downStores: Array<[string, () => DedupStore]> = [
      [
        'rejects',
        () => ({
          claim: () => Promise.reject(new Error('connection refused by 10.0.0.7')),
          complete: async () => {},
          release: async () => {},
        }),
      ],
      ['hangs', () => ({ claim: () => new Promise(() => {}), complete: async () => {}, release: async () => {} })],
    ];
    for (const [name, make] of downStores) {
      it(`answers 503 STORE_UNAVAILABLE when the store ${name}, without its error text`, async () => {
        const r = await serve({ store: make(), storeTimeoutMs: 200 });
        const answer = await send(r.port, signDelivery(webhookBody()));
        expect([answer.status, answer.json?.code]).toEqual([503, 'STORE_UNAVAILABLE']);
        expect(answer.text).not.toContain('10.0.0.7');
        expect(r.logs.map(shape)).toEqual([['store-unavailable', 'error', 503, 'STORE_UNAVAILABLE']]);
        expect(r.calls).toEqual([]);
      });
    }

    it('answers 500 INVALID_ARGUMENT (misconfigured), not 503, when the store says it is not set up', async () => {
      const message =
        'PostgreSQL claim failed: relation "payhook_deliveries" does not exist. Run `await store.migrate()` once.';
      const store: DedupStore = {
        claim: () => Promise.reject(new PayhookError('INVALID_ARGUMENT', message)),
        complete: async () => {},
        release: async () => {},
      };
      const r = await serve({ store });
      const answer = await send(r.port, signDelivery(webhookBody()));
      expect([answer.status, answer.json?.code]).toEqual([500, 'INVALID_ARGUMENT']);
      expect(r.logs.map(shape)).toEqual([['misconfigured', 'error', 500, 'INVALID_ARGUMENT']]);
      expect(r.errors).toEqual([['INVALID_ARGUMENT', 500]]);
      expect(r.calls).toEqual([]);
    });

    it('answers 500 INVALID_ARGUMENT (misconfigured), not 409 for ever, when the store claims with no claim result', async () => {
      const results: Array<[unknown, string]> = [
        [{ status: 'CLAIMED', token: 't-1' }, 'status "CLAIMED"'],
        [{ status: 'done' }, 'status "done"'],
        [{ state: 'claimed', token: 't-1' }, 'status undefined'],
        // The token is missing, which the message's list says.
        [{ status: 'claimed' }, 'status "claimed" with token of type undefined'],
        // An empty token: complete() would refuse it, and the delivery would be handled again after the lease.
        [{ status: 'claimed', token: '' }, 'status "claimed" with token ""'],
        [{ status: 'claimed', token: 42 }, 'status "claimed" with token of type number'],
        [undefined, 'undefined'],
      ];
      for (const [result, what] of results) {
        const store: DedupStore = {
          claim: () => Promise.resolve(result as never),
          complete: async () => {},
          release: async () => {},
        };
        const r = await serve({ store });
        const answer = await send(r.port, signDelivery(webhookBody()));
        expect([answer.status, answer.json?.code], what).toEqual([500, 'INVALID_ARGUMENT']);
        expect(r.logs.map(shape)).toEqual([['misconfigured', 'error', 500, 'INVALID_ARGUMENT']]);
        expect(r.logs[0]?.message).toBe(
          `The deduplication store's claim resolved ${what}, not a claim result: ` +
            'its status must be "claimed" (with a non-empty string token), "in-progress" or "completed".',
        );
        expect(r.errors).toEqual([['INVALID_ARGUMENT', 500]]);
        expect(r.calls).toEqual([]);
      }
    });

    it('releases a claim that lands after storeTimeoutMs with its own token, so the retry is processed', async () => {
      const memory = createMemoryStore();
      let slow = true;
      const store: DedupStore = {
        claim: async (key, options) => {
          if (slow) {
            slow = false;
            await sleep(300);
          }
          return memory.claim(key, options);
        },
        complete: (key, token, options) => memory.complete(key, token, options),
        release: (key, token) => memory.release(key, token),
      };
      const r = await serve({ store, storeTimeoutMs: 100 });
      const delivery = signDelivery(webhookBody());
      expect((await send(r.port, delivery)).status).toBe(503);
      await waitFor(() => r.logs.some((record) => record.event === 'late-claim-released'));
      const retry = await send(r.port, delivery);
      expect([retry.status, retry.json]).toEqual([200, { ok: true }]);
      expect(r.calls).toEqual([delivery.id]);
      expect(r.logs.map(shape)).toEqual([
        ['store-unavailable', 'error', 503, 'STORE_UNAVAILABLE'],
        ['late-claim-released', 'warn', undefined, undefined],
        ['handled', 'info', 200, undefined],
      ]);
    });

    it('logs bookkeeping-failed, never an unhandled rejection, when a claim answered 503 lands as no claim result', async () => {
      const unhandled: unknown[] = [];
      const listener = (reason: unknown): void => void unhandled.push(reason);
      process.on('unhandledRejection', listener);
      try {
        const unreadable = {
          get status(): never {
            throw new Error('row decoder broke');
          },
        };
        const landings: Array<[unknown, string]> = [
          [undefined, 'undefined'],
          [null, 'null'],
          [unreadable, 'a status that cannot be read (row decoder broke)'],
        ];
        for (const [late, what] of landings) {
          const store: DedupStore = {
            // The claim lands 100 ms after storeTimeoutMs, as something that is not a claim result.
            claim: async () => {
              await sleep(150);
              return late as never;
            },
            complete: async () => {},
            release: async () => {},
          };
          const r = await serve({ store, storeTimeoutMs: 50 });
          expect((await send(r.port, signDelivery(webhookBody()))).status).toBe(503);
          await waitFor(() => r.logs.length > 1);
          expect(r.logs.map(shape), what).toEqual([
            ['store-unavailable', 'error', 503, 'STORE_UNAVAILABLE'],
            ['bookkeeping-failed', 'error', undefined, undefined],
          ]);
          expect(r.logs[1]?.message).toBe(
            `The claim answered 503 landed later; nothing was released: The deduplication store's claim resolved ${what}, ` +
              'not a claim result: its status must be "claimed" (with a non-empty string token), "in-progress" or "completed".',
          );
          expect(r.logs[1]?.error).toMatchObject({ code: 'INVALID_ARGUMENT' });
        }
        // A rejection left unhandled would end a Node process; give one the time to surface.
        await sleep(50);
        expect(unhandled).toEqual([]);
      } finally {
        process.off('unhandledRejection', listener);
      }
    });

    it('logs a client that goes away mid-body as aborted (info), reports no error, and handles nothing', async () => {
      const r = await serve();
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
        req.on('close', () => resolve());
        req.write(bytes.subarray(0, bytes.length >> 1), () => setTimeout(() => req.destroy(), 50));
      });
      await waitFor(() => r.logs.length > 0);
      await sleep(50);
      expect(r.logs.map(shape)).toEqual([['aborted', 'info', undefined, undefined]]);
      expect(answered).toBe(false);
      expect(r.errors).toEqual([]);
      expect(r.calls).toEqual([]);
    });

    // Gone while a middleware before payhook still awaited: no body event is left to come (Node), or the adapter
    // ends the body stream as if it were whole (@hono/node-server, chunked). Once taken for a 408 after
    // bodyTimeoutMs, or a SIGNATURE_MISMATCH over the part that came, each reported to onError.
    it.each([
      ['with a Content-Length', false],
      ['chunked', true],
    ])('logs a client gone before the handler reads the body (%s) as aborted, at once', async (_name, chunked) => {
      const r = await serve({ bodyTimeoutMs: 2_000 }, () => {}, 300);
      const delivery = signDelivery(webhookBody());
      const part = delivery.body.slice(0, 40);
      const framing = chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(delivery.body.length) };
      const lines = Object.entries({ ...delivery.headers, ...framing }).map(([name, value]) => `${name}: ${value}`);
      const head = `POST ${delivery.target} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
      const socket = connect(r.port, '127.0.0.1');
      socket.on('error', () => {});
      socket.write(head + (chunked ? `${part.length.toString(16)}\r\n${part}\r\n` : part));
      await sleep(50);
      socket.destroy();
      const started = Date.now();
      await waitFor(() => r.logs.length > 0);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(r.logs.map(shape)).toEqual([['aborted', 'info', undefined, undefined]]);
      expect(r.errors).toEqual([]);
      expect(r.calls).toEqual([]);
    });

    describe('a signed delivery whose payload is not understood (INVALID_PAYLOAD)', () => {
      const signedButInvalid = (): SignedDelivery => signDelivery(webhookBody({ amount: 'twelve' }));

      it('is answered 400 by default (the service keeps it) and reported to onInvalidPayload', async () => {
        const reported: InvalidPayloadDelivery[] = [];
        const r = await serve({ onInvalidPayload: (delivery) => void reported.push(delivery) });
        const delivery = signedButInvalid();
        const answer = await send(r.port, delivery);
        expect([answer.status, answer.json?.code]).toEqual([400, 'INVALID_PAYLOAD']);
        expect(reported).toHaveLength(1);
        expect(reported[0]).toMatchObject({
          code: 'INVALID_PAYLOAD',
          request: { method: 'POST' },
          timestamp: Number(delivery.headers['x-api-timestamp']),
        });
        expect(new TextDecoder().decode(reported[0]?.request.body as Uint8Array)).toBe(delivery.body);
        // What was not understood, field by field.
        expect(reported[0]?.issues).toEqual([expect.objectContaining({ path: 'amount' })]);
        expect(r.logs.map(shape)).toEqual([['invalid-payload', 'error', 400, 'INVALID_PAYLOAD']]);
        // The line leads to the payment: the transaction the body names, when it names one as text.
        const named = (JSON.parse(delivery.body) as { transactionId: string }).transactionId;
        expect(r.logs[0]?.transactionId).toBe(named);
        expect(r.calls).toEqual([]);
      });

      it('logs no transactionId when the body names none as text', async () => {
        const r = await serve();
        await send(r.port, signDelivery(webhookBody({ transactionId: 42 })));
        expect(r.logs.map(shape)).toEqual([['invalid-payload', 'error', 400, 'INVALID_PAYLOAD']]);
        expect(r.logs[0]).not.toHaveProperty('transactionId');
      });

      it('is answered 200 once deadLetter resolved, and 500 when it throws', async () => {
        const kept: string[] = [];
        const r = await serve({
          deadLetter: async (delivery) => {
            await sleep(10);
            kept.push(delivery.message);
          },
        });
        expect((await send(r.port, signedButInvalid())).json).toEqual({ ok: true });
        expect(kept).toHaveLength(1);
        const failing = await serve({
          deadLetter: () => {
            throw new Error('dead-letter table missing');
          },
        });
        const answer = await send(failing.port, signedButInvalid());
        expect([answer.status, answer.json?.code]).toEqual([500, 'HANDLER_FAILED']);
        expect(answer.text).not.toContain('table missing');
        expect(r.logs.map(shape)).toEqual([['dead-lettered', 'warn', 200, 'INVALID_PAYLOAD']]);
        expect(r.logs[0]?.transactionId).toEqual(expect.any(String));
        expect(failing.logs.map(shape)).toEqual([['handler-failed', 'error', 500, 'HANDLER_FAILED']]);
        expect(failing.logs[0]?.transactionId).toEqual(expect.any(String));
      });
    });

    /**
     * Each of `refused` is answered 400 INVALID_PAYLOAD under `options`, onPayment never called; with a deadLetter
     * too, `kept` is handed to it (200) with a message naming `why`.
     */
    async function expectNotUnderstood(
      options: Partial<WebhookHandlerOptions>,
      refused: readonly SignedDelivery[],
      kept: SignedDelivery,
      why: string,
    ): Promise<void> {
      const r = await serve(options);
      for (const delivery of refused) {
        const answer = await send(r.port, delivery);
        expect([answer.status, answer.json?.code]).toEqual([400, 'INVALID_PAYLOAD']);
      }
      expect(r.calls).toEqual([]);
      const letters: string[] = [];
      const lettered = await serve({ ...options, deadLetter: (delivery) => void letters.push(delivery.message) });
      expect((await send(lettered.port, kept)).json).toEqual({ ok: true });
      expect(letters).toEqual([expect.stringContaining(why)]);
      expect(lettered.calls).toEqual([]);
    }

    // A lenient parse keeps an empty id (CONTRACT §4), but the default key cannot tell two such payments apart:
    // the second would be answered as a duplicate of the first and lost.
    describe('a signed delivery with an empty id', () => {
      const emptyId = (transactionId: string): SignedDelivery => signDelivery(webhookBody({ id: '', transactionId }));

      it('is INVALID_PAYLOAD with the default key: 400, or handed to deadLetter; never a duplicate of another', async () => {
        await expectNotUnderstood({}, [emptyId('t-1'), emptyId('t-2')], emptyId('t-3'), 'empty id');
      });

      it('reaches onPayment with a dedupKey of your own', async () => {
        const r = await serve({ dedupKey: (webhook) => `${webhook.transactionId}:${webhook.status}` });
        for (const transactionId of ['t-1', 't-2']) {
          expect((await send(r.port, emptyId(transactionId))).json).toEqual({ ok: true });
        }
        expect(r.calls).toEqual(['', '']);
      });
    });

    // Nor can an order tell two payments apart without their transaction ids: with both empty, a second payment's
    // SUCCEEDED would pass for the paying one's (not parked as paid twice), whatever the dedupKey.
    describe('a signed delivery with an empty transactionId', () => {
      const emptyTx = (id: string): SignedDelivery => signDelivery(webhookBody({ id, transactionId: '' }));

      it('is INVALID_PAYLOAD whatever the dedupKey: 400, or handed to deadLetter; never reaches onPayment', async () => {
        for (const options of [{}, { dedupKey: (webhook: PaymentWebhook) => webhook.id }]) {
          const twoPayments = [emptyTx('pay1_DEBIT'), emptyTx('pay2_DEBIT')];
          await expectNotUnderstood(options, twoPayments, emptyTx('pay3_DEBIT'), 'empty transactionId');
        }
      });
    });

    describe('a genuine delivery onPayment parks (park(reason) instead of throwing)', () => {
      it('is answered 200 parked, recorded (a redelivery is a duplicate), dead-lettered and logged with its reason', async () => {
        const letters: DeadLetterDelivery[] = [];
        const r = await serve({ deadLetter: (delivery) => void letters.push(delivery) }, (webhook) =>
          park('unknown order', { paymentId: webhook.fields.paymentId }),
        );
        const delivery = signDelivery(webhookBody());
        const answer = await send(r.port, delivery);
        expect([answer.status, answer.json]).toEqual([200, { ok: true, parked: true }]);
        expect((await send(r.port, delivery)).json).toEqual({ ok: true, duplicate: true });
        expect(r.calls).toEqual([delivery.id]);
        expect(letters).toHaveLength(1);
        expect(letters[0]).toMatchObject({
          code: 'PARKED',
          reason: 'unknown order',
          message: 'unknown order',
          details: { paymentId: expect.stringMatching(/^order-/) },
          key: `${delivery.id}:SUCCEEDED`,
          webhook: { id: delivery.id },
          request: { method: 'POST' },
          timestamp: Number(delivery.headers['x-api-timestamp']),
        });
        expect(r.logs.map(shape)).toEqual([
          ['parked', 'warn', 200, undefined],
          ['duplicate', 'info', 200, undefined],
        ]);
        // The line names what was parked: the reason and the details given to park().
        expect(r.logs[0]?.message).toMatch(/^Parked by onPayment \(unknown order \{"paymentId":"order-[^"]+"\}\)/);
        expect(r.logs[0]).toMatchObject({ key: `${delivery.id}:SUCCEEDED`, transactionId: delivery.transactionId });
        expect(r.errors).toEqual([]);
      });

      it('is answered 200 parked and recorded without a deadLetter too', async () => {
        const r = await serve({}, () => park('amount differs'));
        const delivery = signDelivery(webhookBody());
        expect((await send(r.port, delivery)).json).toEqual({ ok: true, parked: true });
        expect(r.logs[0]?.message).toMatch(/^Parked by onPayment \(amount differs\);/);
        expect((await send(r.port, delivery)).json).toEqual({ ok: true, duplicate: true });
        expect(r.logs.map(shape)).toEqual([
          ['parked', 'warn', 200, undefined],
          ['duplicate', 'info', 200, undefined],
        ]);
      });

      it('is answered 500, not acknowledged as applied, when park is given no reason', async () => {
        const r = await serve({}, (webhook) => park(String(webhook.fields.missing ?? '')));
        const delivery = signDelivery(webhookBody());
        const answer = await send(r.port, delivery);
        expect([answer.status, answer.json?.code]).toEqual([500, 'HANDLER_FAILED']);
        expect(r.logs[0]?.message).toMatch(/^onPayment threw: .*park needs a reason/);
        expect((await send(r.port, delivery)).status).toBe(500); // released: the retry runs onPayment again
        expect(r.calls).toEqual([delivery.id, delivery.id]);
        expect(r.errors).toEqual([
          ['HANDLER_FAILED', 500],
          ['HANDLER_FAILED', 500],
        ]);
      });

      it('is answered 500, not acknowledged as applied, when onPayment returns a park without a reason', async () => {
        for (const parked of [{ park: '' }, { park: undefined, details: 'order 17' }]) {
          const r = await serve({}, () => parked);
          const answer = await send(r.port, signDelivery(webhookBody()));
          expect([answer.status, answer.json?.code], JSON.stringify(parked)).toEqual([500, 'HANDLER_FAILED']);
          expect(r.logs[0]?.message).toMatch(/^onPayment threw: .*parked result needs a reason/);
        }
      });

      // A result that says it failed, read as "applied", would acknowledge a delivery whose update never happened.
      it('is answered 500 and released when onPayment resolves an Error or an object with ok: false', async () => {
        const refused = new Response('unknown order', { status: 404 });
        for (const [result, said] of [
          [new Error('unknown order'), /resolved an Error \(unknown order\)/],
          [refused, /resolved a result with ok: false/],
          [{ ok: false }, /resolved a result with ok: false/],
        ] as const) {
          const r = await serve({}, () => result);
          const delivery = signDelivery(webhookBody());
          const answer = await send(r.port, delivery);
          expect([answer.status, answer.json?.code], said.source).toEqual([500, 'HANDLER_FAILED']);
          expect(r.logs[0]?.message).toMatch(said);
          expect((await send(r.port, delivery)).status).toBe(500); // released: the retry runs onPayment again
          expect(r.calls).toEqual([delivery.id, delivery.id]);
        }
        // What a hand-off resolves with otherwise is applied: a publish that resolves false, a Response that is ok.
        for (const [name, result] of [
          ['false', false],
          ['an ok Response', new Response('ok')],
          ['{ ok: true }', { ok: true }],
        ] as const) {
          const r = await serve({}, () => result);
          expect((await send(r.port, signDelivery(webhookBody()))).status, name).toBe(200);
        }
      });

      it('is answered 500 and released when deadLetter throws, so the retry runs onPayment again', async () => {
        let failing = true;
        const r = await serve(
          {
            deadLetter: () => {
              if (failing) throw new Error('dead-letter table missing');
            },
          },
          () => park('unknown order'),
        );
        const delivery = signDelivery(webhookBody());
        const answer = await send(r.port, delivery);
        expect([answer.status, answer.json?.code]).toEqual([500, 'HANDLER_FAILED']);
        expect(answer.text).not.toContain('table missing');
        failing = false;
        expect((await send(r.port, delivery)).json).toEqual({ ok: true, parked: true });
        expect(r.calls).toEqual([delivery.id, delivery.id]);
        expect(r.logs.map(shape)).toEqual([
          ['handler-failed', 'error', 500, 'HANDLER_FAILED'],
          ['parked', 'warn', 200, undefined],
        ]);
      });

      // deadLetter: (d) => fetch(dlq, …) resolved a 503 Response, taken for a hand-off: answered 200, kept nowhere.
      it('is answered 500 and released when deadLetter resolves a refused Response or an Error', async () => {
        for (const [name, result] of [
          ['a 503 Response', new Response('down', { status: 503 })],
          ['an Error', new Error('queue full')],
        ] as const) {
          const r = await serve({ deadLetter: () => Promise.resolve(result) }, () => park('unknown order'));
          const delivery = signDelivery(webhookBody());
          expect((await send(r.port, delivery)).status, name).toBe(500);
          expect(r.logs[0]?.message, name).toMatch(/^deadLetter threw: deadLetter resolved /);
          // Nothing was recorded: the retry runs onPayment again.
          expect((await send(r.port, delivery)).status, name).toBe(500);
          expect(r.calls, name).toEqual([delivery.id, delivery.id]);
          // A payload not understood is not answered 200 either.
          const unknown = signDelivery(webhookBody({ amount: 'ten' }));
          expect((await send(r.port, unknown)).status, name).toBe(500);
        }
      });

      it('a park that comes after the deadline still reaches deadLetter before its claim is recorded', async () => {
        const letters: DeadLetterDelivery[] = [];
        const r = await serve(
          { handlerTimeoutMs: 100, deadLetter: (delivery) => void letters.push(delivery) },
          () => new Promise((resolve) => setTimeout(() => resolve(park('unknown order', { late: true })), 150)),
        );
        const delivery = signDelivery(webhookBody());
        expect((await send(r.port, delivery)).status).toBe(500);
        await new Promise((resolve) => setTimeout(resolve, 300));
        // The same delivery a park in time hands on: its webhook, key, request and signed timestamp.
        expect(letters).toMatchObject([
          {
            code: 'PARKED',
            reason: 'unknown order',
            details: { late: true },
            key: `${delivery.id}:SUCCEEDED`,
            webhook: { id: delivery.id },
            request: { method: 'POST' },
            timestamp: Number(delivery.headers['x-api-timestamp']),
          },
        ]);
        expect((await send(r.port, delivery)).json).toEqual({ ok: true, duplicate: true });
      });

      it('a park that comes after the deadline is logged parked with its reason, as one in time is, with or without deadLetter', async () => {
        for (const deadLetter of [undefined, () => {}]) {
          const r = await serve(
            { handlerTimeoutMs: 100, ...(deadLetter && { deadLetter }) },
            () => new Promise((resolve) => setTimeout(() => resolve(park('unknown order', { late: true })), 150)),
          );
          const delivery = signDelivery(webhookBody());
          expect((await send(r.port, delivery)).status).toBe(500);
          await waitFor(() => r.logs.some((record) => record.event === 'late-handler-settled'));
          expect((await send(r.port, delivery)).json).toEqual({ ok: true, duplicate: true });
          const label = deadLetter ? 'with deadLetter' : 'without deadLetter';
          expect(r.logs.map(shape), label).toEqual([
            ['handler-timeout', 'error', 500, 'HANDLER_FAILED'],
            // Not answered 200: the record carries no status, as the other records after the answer.
            ['parked', 'warn', undefined, undefined],
            ['late-handler-settled', 'warn', undefined, undefined],
            ['duplicate', 'info', 200, undefined],
          ]);
          expect(r.logs[1]?.message, label).toBe(
            'Parked by onPayment (unknown order {"late":true}) after its deadline (answered 500); ' +
              'recorded as handled once its claim is settled, never retried.',
          );
          expect(r.logs[1], label).toMatchObject({
            key: `${delivery.id}:SUCCEEDED`,
            transactionId: delivery.transactionId,
          });
        }
      });

      it('a late park whose deadLetter fails is released for the retry, reported to onError once', async () => {
        let failing = true;
        const r = await serve(
          {
            handlerTimeoutMs: 100,
            deadLetter: () => {
              if (failing) throw new Error('dead-letter table missing');
            },
          },
          () => new Promise((resolve) => setTimeout(() => resolve(park('unknown order')), 150)),
        );
        const delivery = signDelivery(webhookBody());
        expect((await send(r.port, delivery)).status).toBe(500);
        await waitFor(() => r.logs.some((record) => record.event === 'late-handler-settled'));
        expect(r.errors).toEqual([['HANDLER_FAILED', 500]]);
        expect(r.logs.at(-1)?.message).toContain('deadLetter failed');
        // After the answer, the failed hand-off is an error record (not a second refusal) carrying deadLetter's error.
        const failed = r.logs.filter((record) => record.event === 'handler-failed');
        expect(failed.map(shape)).toEqual([['handler-failed', 'error', undefined, undefined]]);
        expect(failed[0]?.message).toBe(
          'The claim is released for the retry: deadLetter threw: dead-letter table missing',
        );
        expect(failed[0]?.error).toMatchObject({ message: 'dead-letter table missing' });
        failing = false;
        // Released: the retry runs onPayment again (late again, so 500, then settled through deadLetter).
        expect((await send(r.port, delivery)).status).toBe(500);
        expect(r.calls).toEqual([delivery.id, delivery.id]);
      });

      it('still retries when onPayment throws: throwing is "not now", parking is "never"', async () => {
        let attempt = 0;
        const r = await serve({}, () => {
          attempt++;
          if (attempt === 1) throw new Error('db down');
          return park('unknown order');
        });
        const delivery = signDelivery(webhookBody());
        expect((await send(r.port, delivery)).status).toBe(500);
        expect((await send(r.port, delivery)).json).toEqual({ ok: true, parked: true });
        expect(r.calls).toEqual([delivery.id, delivery.id]);
      });
    });

    it('never runs onPayment twice with a small memory store full of live claims (503 instead)', async () => {
      const r = await serve({ store: createMemoryStore({ maxEntries: 100 }) }, () => sleep(300));
      const deliveries = Array.from({ length: 150 }, () => signDelivery(webhookBody()));
      const answers = await Promise.all(
        deliveries.flatMap((delivery) => [send(r.port, delivery), send(r.port, delivery)]),
      );
      const counts = new Map<string, number>();
      for (const id of r.calls) counts.set(id, (counts.get(id) ?? 0) + 1);
      expect([...counts.values()].filter((count) => count > 1)).toEqual([]);
      expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([200, 409, 503]));
      expect(r.calls).toHaveLength(100);
    });
  });
}
