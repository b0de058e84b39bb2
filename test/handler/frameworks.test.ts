// The Node handler mounted in real Express and Fastify servers, with and
// without their body parsers.
import express from 'express';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { createNodeWebhookHandler } from '../../src/node/index.js';
import { listen, send, type RunningServer } from '../helpers/http.js';
import { PUBLIC_KEY, signDelivery, webhookBody } from '../helpers/sign.js';

const servers: RunningServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

const WEBHOOK_URL = 'https://shop.example.kg/webhooks/payments';

function handler(
  calls: string[],
  pin: { webhookUrl: string } | { allowAnyHost: true } = { webhookUrl: WEBHOOK_URL },
  limits: { maxBodyBytes?: number } = {},
) {
  return createNodeWebhookHandler({
    publicKeys: PUBLIC_KEY,
    ...pin,
    ...limits,
    onPayment: (webhook) => {
      calls.push(webhook.id);
    },
  });
}

/** Listens with a Fastify app made by `route`; its port. */
async function fastifyPort(route: (app: ReturnType<typeof Fastify>) => void): Promise<number> {
  const app = Fastify();
  route(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  servers.push({ port, server: app.server, close: () => app.close() });
  return port;
}

async function exercise(port: number, calls: string[], path = '/webhooks/payments') {
  // Odd spacing and key order on the wire: a parser re-serialising would break a naive check.
  const body = webhookBody();
  const text = JSON.stringify(body, null, 3).replace('"amount": 100', '"amount": 100.0');
  const delivery = signDelivery(text, { target: path });
  const first = await send(port, delivery);
  expect(first.status).toBe(200);
  expect(first.json).toEqual({ ok: true });
  expect((await send(port, signDelivery(text, { target: path }))).json).toEqual({ ok: true, duplicate: true });
  expect((await send(port, { ...delivery, body: text.replace('SUCCEEDED', 'FAILED') })).status).toBe(401);
  expect(calls).toEqual([body['id']]);
}

describe('Express', () => {
  it('reads the raw body itself when no parser ran', async () => {
    const calls: string[] = [];
    const app = express();
    app.post('/webhooks/payments', handler(calls));
    const server = await listen(app as never);
    servers.push(server);
    await exercise(server.port, calls);
  });

  it('verifies the object express.json() parsed', async () => {
    const calls: string[] = [];
    const app = express();
    app.use(express.json());
    app.post('/webhooks/payments', handler(calls));
    const server = await listen(app as never);
    servers.push(server);
    await exercise(server.port, calls);
  });

  it('verifies the Buffer express.raw() left', async () => {
    const calls: string[] = [];
    const app = express();
    app.post('/webhooks/payments', express.raw({ type: '*/*' }), handler(calls));
    const server = await listen(app as never);
    servers.push(server);
    await exercise(server.port, calls);
  });

  it('keeps the query of a mounted router path', async () => {
    const calls: string[] = [];
    const app = express();
    const router = express.Router();
    // Host and path as received (no webhookUrl): this checks what Express hands the handler.
    router.post('/payments', handler(calls, { allowAnyHost: true }));
    app.use('/hooks', router);
    const server = await listen(app as never);
    servers.push(server);
    // Express rewrites req.url inside a router ('/payments?shop=7'); the
    // signature covers the full path, so the handler must be given it.
    const delivery = signDelivery(webhookBody(), { target: '/hooks/payments?shop=7' });
    const answer = await send(server.port, delivery);
    expect([answer.status, answer.json?.code]).toEqual([200, undefined]);
  });
});

describe('Fastify', () => {
  it('answers through reply.hijack() with the body Fastify parsed', async () => {
    const calls: string[] = [];
    const port = await fastifyPort((app) => app.post('/webhooks/payments', handler(calls)));
    await exercise(port, calls);
    const get = await send(port, {
      method: 'PUT',
      target: '/webhooks/payments',
      headers: { host: 'x', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(get.status).toBe(404); // Fastify routes only POST here
  });

  // Fastify's validator coerces types, removes members and adds defaults in the body it checks: the signature then
  // fails for a reason the log must name, since nothing else points at the route's schema.
  it('names a route body schema when a signature does not verify, and only then', async () => {
    const calls: string[] = [];
    const messages: string[] = [];
    const logged = (path: string) =>
      createNodeWebhookHandler({
        publicKeys: PUBLIC_KEY,
        webhookUrl: `https://shop.example.kg${path}`,
        logger: (record) => void messages.push(record.message),
        onPayment: (webhook) => void calls.push(webhook.id),
      });
    const schema = (body: object) => ({ schema: { body } });
    const port = await fastifyPort((app) => {
      const coerced = schema({ type: 'object', properties: { amount: { type: 'string' } } });
      app.post('/webhooks/payments', coerced, logged('/webhooks/payments'));
      app.post('/webhooks/exact', schema({ type: 'object' }), logged('/webhooks/exact'));
    });
    const changed = await send(port, signDelivery(webhookBody()));
    expect([changed.status, changed.json?.code]).toEqual([401, 'SIGNATURE_MISMATCH']);
    expect(messages.at(-1)).toContain(
      "The route has a body schema: Fastify's validator may have changed the parsed body (types coerced, members removed, defaults added); if the signature verifies without it, give the webhook route no schema.body.",
    );
    // A schema that changes nothing does not stop a delivery.
    const body = webhookBody();
    const exact = await send(port, signDelivery(body, { target: '/webhooks/exact' }));
    expect([exact.status, exact.json?.code]).toEqual([200, undefined]);
    expect(calls).toEqual([body['id']]);
  });
});

describe('a body a parser already read', () => {
  it('is bounded by the parser, not maxBodyBytes: one verdict whatever the framing (Express and Fastify)', async () => {
    const calls: string[] = [];
    const limited = handler(calls, { webhookUrl: WEBHOOK_URL }, { maxBodyBytes: 1024 });
    const app = express();
    app.use(express.json({ limit: '1mb' }));
    app.post('/webhooks/payments', limited);
    const expressServer = await listen(app as never);
    servers.push(expressServer);
    const fastify = await fastifyPort((fastifyApp) => fastifyApp.post('/webhooks/payments', limited));

    for (const port of [expressServer.port, fastify]) {
      // Signed and fresh, 4 KB. It was refused by its declared length and
      // accepted when sent chunked: the parser had read it either way.
      for (const chunked of [false, true]) {
        const large = signDelivery(webhookBody({ note: 'x'.repeat(4096) }));
        const answer = await send(port, large, { chunked });
        expect([answer.status, answer.json?.code]).toEqual([200, undefined]);
      }
    }
    expect(calls).toHaveLength(4);
  });

  it('is held to maxBodyBytes when the parser left it raw, by its size whatever the framing', async () => {
    const calls: string[] = [];
    const app = express();
    app.use(express.raw({ type: '*/*', limit: '1mb' }));
    app.post('/webhooks/payments', handler(calls, { webhookUrl: WEBHOOK_URL }, { maxBodyBytes: 1024 }));
    const server = await listen(app as never);
    servers.push(server);
    for (const chunked of [false, true]) {
      const large = signDelivery(webhookBody({ note: 'x'.repeat(4096) }));
      const answer = await send(server.port, large, { chunked });
      expect([answer.status, answer.json?.code]).toEqual([413, 'BODY_TOO_LARGE']);
      expect((await send(server.port, signDelivery(webhookBody()), { chunked })).status).toBe(200);
    }
    expect(calls).toHaveLength(2);
  });
});
