// End to end: signed deliveries over real HTTP on 127.0.0.1, to the Node
// handler (node:http) and to the Web handler (served through a node:http
// bridge), each with the memory store and with a real redis-server through
// ioredis and through node-redis.
import type { RequestListener } from 'node:http';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/dedup/memory.js';
import type { DedupStore } from '../../src/dedup/store.js';
import type { WebhookHandlerBaseOptions, WebhookHandlerOptions } from '../../src/handler/options.js';
import { createNodeWebhookHandler } from '../../src/node/index.js';
import { createRedisStore } from '../../src/redis/index.js';
import { createWebhookHandler } from '../../src/web/index.js';
import { listen, send, webBridge, type RunningServer } from '../helpers/http.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { PUBLIC_KEY, signDelivery, STRANGER_PRIVATE_KEY, webhookBody } from '../helpers/sign.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let redis: RedisServer;
let ioredis: Redis;
let nodeRedis: ReturnType<typeof createClient>;
const servers: RunningServer[] = [];

beforeAll(async () => {
  redis = await startRedisServer();
  ioredis = new Redis(redis.port, '127.0.0.1');
  nodeRedis = createClient({ url: redis.url });
  await nodeRedis.connect();
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  ioredis?.disconnect();
  await nodeRedis?.close?.();
  await redis?.stop();
});

type StoreKind = 'memory' | 'redis/ioredis' | 'redis/node-redis';
type ServerKind = 'node' | 'web';

function makeStore(kind: StoreKind): DedupStore {
  const prefix = `e2e:${Math.random().toString(36).slice(2)}:`;
  if (kind === 'memory') return createMemoryStore();
  return createRedisStore({ client: kind === 'redis/ioredis' ? ioredis : nodeRedis, prefix });
}

interface Receiver {
  port: number;
  calls: string[];
  store: DedupStore;
  pending: Promise<unknown>[];
}

async function receiver(
  serverKind: ServerKind,
  store: DedupStore,
  onPayment: WebhookHandlerOptions['onPayment'],
  { unpinned, ...options }: Partial<WebhookHandlerBaseOptions> & { unpinned?: true } = {},
): Promise<Receiver> {
  const calls: string[] = [];
  const pending: Promise<unknown>[] = [];
  const handlerOptions: WebhookHandlerOptions = {
    publicKeys: PUBLIC_KEY,
    ...(unpinned ? { allowAnyHost: true as const } : { webhookUrl: 'https://shop.example.kg/webhooks/payments' }),
    store,
    maxBodyBytes: 64 * 1024,
    ...options,
    onPayment: async (webhook, context) => {
      calls.push(webhook.id);
      await onPayment(webhook, context);
    },
  };
  const node = serverKind === 'node' ? createNodeWebhookHandler(handlerOptions) : undefined;
  const listener: RequestListener =
    node === undefined ? webBridge(createWebhookHandler(handlerOptions), pending) : (req, res) => void node(req, res);
  const server = await listen(listener);
  servers.push(server);
  return { port: server.port, calls, store, pending };
}

const kinds: Array<[ServerKind, StoreKind]> = [];
for (const serverKind of ['node', 'web'] as const) {
  for (const storeKind of ['memory', 'redis/ioredis', 'redis/node-redis'] as const) kinds.push([serverKind, storeKind]);
}

describe.each(kinds)('%s handler with the %s store', (serverKind, storeKind) => {
  it('handles a valid delivery once and answers 200; a redelivery is a 200 duplicate', async () => {
    const r = await receiver(serverKind, makeStore(storeKind), () => {});
    const delivery = signDelivery(webhookBody());
    const first = await send(r.port, delivery);
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ ok: true });
    expect(first.headers['content-type']).toMatch(/^application\/json/);
    const again = await send(r.port, signDelivery(JSON.parse(delivery.body) as Record<string, unknown>));
    expect(again.status).toBe(200);
    expect(again.json).toEqual({ ok: true, duplicate: true });
    expect(r.calls).toEqual([delivery.id]);
  });

  it('runs onPayment exactly once for 100 concurrent copies; every answer is 200 or 409 and none is lost', async () => {
    const r = await receiver(serverKind, makeStore(storeKind), async () => {
      await sleep(150);
    });
    const body = webhookBody();
    const copies = Array.from({ length: 100 }, () => signDelivery(body));
    const answers = await Promise.all(copies.map((copy) => send(r.port, copy)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(1);
    expect(
      answers.filter((answer) => answer.status === 409).every((answer) => answer.json?.code === 'DELIVERY_IN_PROGRESS'),
    ).toBe(true);
    expect(r.calls).toEqual([body['id']]);
    // The service retries every non-200: each retry now gets 200 without a second call.
    const retries = await Promise.all(
      answers.filter((answer) => answer.status === 409).map(() => send(r.port, signDelivery(body))),
    );
    expect(retries.every((answer) => answer.status === 200 && answer.json?.duplicate === true)).toBe(true);
    expect(r.calls).toHaveLength(1);
  });

  it('answers 500 when onPayment throws, releases the claim, and processes the redelivery', async () => {
    let failures = 1;
    const handled: string[] = [];
    const r = await receiver(serverKind, makeStore(storeKind), (webhook) => {
      if (failures-- > 0) throw new Error('database is down');
      handled.push(webhook.id);
    });
    const body = webhookBody();
    const first = await send(r.port, signDelivery(body));
    expect(first.status).toBe(500);
    expect(first.json?.code).toBe('HANDLER_FAILED');
    const retry = await send(r.port, signDelivery(body));
    expect(retry.status).toBe(200);
    expect(retry.json).toEqual({ ok: true });
    expect(handled).toEqual([body['id']]);
    expect(r.calls).toHaveLength(2);
  });

  it('processes the redelivery once the lease of a worker that died holding the claim expires', async () => {
    const store = makeStore(storeKind);
    const r = await receiver(serverKind, store, () => {});
    const body = webhookBody();
    // Another worker claimed this delivery and died: nobody completes or releases it.
    const dead = await store.claim(`${String(body['id'])}:SUCCEEDED`, { leaseMs: 400 });
    expect(dead.status).toBe('claimed');
    const during = await send(r.port, signDelivery(body));
    expect(during.status).toBe(409);
    expect(r.calls).toHaveLength(0);
    await sleep(600);
    const after = await send(r.port, signDelivery(body));
    expect(after.status).toBe(200);
    expect(after.json).toEqual({ ok: true });
    expect(r.calls).toEqual([body['id']]);
  });

  it('answers 500 when onPayment misses its deadline, then records the late success so the retry is a duplicate', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const r = await receiver(serverKind, makeStore(storeKind), () => gate, {
      handlerTimeoutMs: 200,
      storeTimeoutMs: 1_000,
      leaseMs: 5_000,
    });
    const body = webhookBody();
    const first = await send(r.port, signDelivery(body));
    expect(first.status).toBe(500);
    expect(first.json?.code).toBe('HANDLER_FAILED');
    // While the late handler still runs, a retry must not run beside it.
    expect((await send(r.port, signDelivery(body))).status).toBe(409);
    release();
    await sleep(100);
    await Promise.all(r.pending);
    const retry = await send(r.port, signDelivery(body));
    expect(retry.status).toBe(200);
    expect(retry.json?.duplicate).toBe(true);
    expect(r.calls).toHaveLength(1);
  });

  it('refuses tampered, stale, unsigned, oversized and non-POST deliveries with their codes', async () => {
    const r = await receiver(serverKind, makeStore(storeKind), () => {});
    const valid = signDelivery(webhookBody());
    const tampered = { ...valid, body: valid.body.replace('"amount":100', '"amount":900') };
    expect(tampered.body).not.toBe(valid.body);
    const cases: Array<[string, Parameters<typeof send>[1], number, string]> = [
      ['tampered', tampered, 401, 'SIGNATURE_MISMATCH'],
      ['other key', signDelivery(webhookBody(), { privateKey: STRANGER_PRIVATE_KEY }), 401, 'SIGNATURE_MISMATCH'],
      ['stale', signDelivery(webhookBody(), { timestamp: Date.now() - 600_000 }), 401, 'TIMESTAMP_OUT_OF_WINDOW'],
      ['unsigned', { ...valid, headers: { ...valid.headers, signature: '' } }, 401, 'MISSING_SIGNATURE'],
      [
        'oversized',
        signDelivery(webhookBody({ fields: { amount: 1, pad: 'x'.repeat(200_000) } })),
        413,
        'BODY_TOO_LARGE',
      ],
      ['GET', { ...valid, method: 'GET', body: '' }, 405, 'METHOD_NOT_ALLOWED'],
      ['not a webhook', signDelivery({ hello: 'world' }), 400, 'INVALID_PAYLOAD'],
      ['not JSON', signDelivery('{oops'), 400, 'INVALID_BODY'],
    ];
    for (const [name, delivery, status, code] of cases) {
      const answer = await send(r.port, delivery);
      expect([name, answer.status, answer.json?.code]).toEqual([name, status, code]);
      expect(answer.json?.ok).toBe(false);
    }
    const get = await send(r.port, { ...valid, method: 'GET', body: '' });
    expect(get.headers['allow']).toBe('POST');
    expect(r.calls).toHaveLength(0);
  });

  it('stops reading an oversized body without a Content-Length (chunked) and answers 413', async () => {
    const r = await receiver(serverKind, makeStore(storeKind), () => {});
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: r.port,
          method: 'POST',
          path: '/webhooks/payments',
          headers: { host: 'shop.example.kg', 'transfer-encoding': 'chunked', signature: 'x' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      const chunk = Buffer.alloc(16 * 1024, 'a');
      let sent = 0;
      const pump = () => {
        while (sent < 40 && req.write(chunk)) sent++;
        if (sent < 40)
          req.once('drain', () => {
            sent++;
            pump();
          });
        else req.end();
      };
      pump();
    });
    expect(status).toBe(413);
  });
});

describe('host pinning: a delivery signed for another merchant', () => {
  // The service signs every merchant's deliveries with one key: a delivery
  // for another shop's endpoint, replayed to ours with that shop's Host
  // within the window, carries a valid signature.
  const foreign = () => signDelivery(webhookBody(), { host: 'other-merchant.example.kg' });

  for (const serverKind of ['node', 'web'] as const) {
    it(`${serverKind} handler with webhookUrl refuses it (401) and never calls onPayment`, async () => {
      const r = await receiver(serverKind, createMemoryStore(), () => {});
      const answer = await send(r.port, foreign());
      expect([answer.status, answer.json?.code]).toEqual([401, 'SIGNATURE_MISMATCH']);
      expect(r.calls).toHaveLength(0);
      // Our own deliveries still pass.
      expect((await send(r.port, signDelivery(webhookBody()))).status).toBe(200);
    });
  }

  it('is exactly what allowAnyHost: true lets through (why it is opt-in)', async () => {
    const r = await receiver('node', createMemoryStore(), () => {}, { unpinned: true });
    expect((await send(r.port, foreign())).status).toBe(200);
    expect(r.calls).toHaveLength(1);
  });
});

describe('store down → 503, never 200 without a record', () => {
  const unreachable: Array<[string, () => DedupStore]> = [
    [
      'ioredis',
      () => {
        const client = new Redis(1, '127.0.0.1', {
          lazyConnect: true,
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          retryStrategy: () => null,
        });
        client.on('error', () => {});
        return createRedisStore({ client });
      },
    ],
    ['node-redis (not connected)', () => createRedisStore({ client: createClient({ url: 'redis://127.0.0.1:1' }) })],
    [
      'a store that hangs',
      () => ({ claim: () => new Promise(() => {}), complete: async () => {}, release: async () => {} }),
    ],
  ];
  for (const serverKind of ['node', 'web'] as const) {
    for (const [name, make] of unreachable) {
      it(`${serverKind} handler, ${name}`, async () => {
        const errors: string[] = [];
        const r = await receiver(serverKind, make(), () => {}, {
          storeTimeoutMs: 300,
          onError: (error) => {
            errors.push(error.code);
          },
        });
        const answer = await send(r.port, signDelivery(webhookBody()));
        expect(answer.status).toBe(503);
        expect(answer.json?.code).toBe('STORE_UNAVAILABLE');
        expect(r.calls).toHaveLength(0);
        expect(errors).toEqual(['STORE_UNAVAILABLE']);
      });
    }
  }

  it('answers 503 when a live redis-server goes away', async () => {
    const second = await startRedisServer();
    const client = new Redis(second.port, '127.0.0.1', {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => 50,
    });
    client.on('error', () => {});
    await new Promise((resolve) => client.once('ready', resolve));
    const r = await receiver('node', createRedisStore({ client }), () => {}, { storeTimeoutMs: 300 });
    const body = webhookBody();
    await second.stop();
    expect((await send(r.port, signDelivery(body))).status).toBe(503);
    expect(r.calls).toHaveLength(0);
    client.disconnect();
  });
});

describe('a client that sends half a body and stalls (slow-loris)', () => {
  for (const serverKind of ['node', 'web'] as const) {
    it(`${serverKind} handler answers 408 BODY_TIMEOUT within bodyTimeoutMs`, async () => {
      const r = await receiver(serverKind, createMemoryStore(), () => {}, { bodyTimeoutMs: 200 });
      const { request } = await import('node:http');
      const delivery = signDelivery(webhookBody());
      const bytes = Buffer.from(delivery.body);
      const started = Date.now();
      const outcome = await new Promise<{ status: number; code: string | undefined } | { dropped: string }>(
        (resolve) => {
          const req = request(
            {
              host: '127.0.0.1',
              port: r.port,
              method: 'POST',
              path: delivery.target,
              setHost: false,
              headers: { ...delivery.headers, 'content-length': String(bytes.length) },
            },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (chunk: Buffer) => chunks.push(chunk));
              res.on('end', () =>
                resolve({
                  status: res.statusCode ?? 0,
                  code: (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { code?: string }).code,
                }),
              );
            },
          );
          req.on('error', (error: NodeJS.ErrnoException) => resolve({ dropped: error.code ?? error.message }));
          req.write(bytes.subarray(0, bytes.length >> 1));
        },
      );
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(outcome).toEqual({ status: 408, code: 'BODY_TIMEOUT' });
      expect(r.calls).toHaveLength(0);
    });
  }
});
