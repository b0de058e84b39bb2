import { once } from 'node:events';
import { mkdtemp, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureDelivery, type CapturedDelivery } from '../src/capture.js';
import { isPayhookError } from '../src/errors.js';
import { createNodeWebhookHandler } from '../src/node/index.js';
import { createTestWebhook, sendWebhook, signWebhook, TEST_KEY_PAIR } from '../src/testing/index.js';
import { run } from './cli/run.js';

// An Express route with no body parser: captureDelivery reads the stream
// itself, leaves the bytes on req.body, and the payhook handler after it
// still gets the body. The capture records the receiver's webhookUrl, so
// `payhook verify --request` needs no --webhook-url.
const WEBHOOK_URL = 'https://shop.example.kg/webhooks/payments';
const captures: CapturedDelivery[] = [];
const failures: string[] = [];
let server: Server;
let base: string;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'payhook-capture-stream-'));
  const handler = createNodeWebhookHandler({
    publicKeys: TEST_KEY_PAIR.publicKey,
    webhookUrl: WEBHOOK_URL,
    logger: false,
    onPayment: () => undefined,
  });
  const app = express();
  app.post('/webhooks/payments', async (req, res) => {
    captures.push(await captureDelivery(req, { webhookUrl: WEBHOOK_URL }));
    await handler(req, res);
  });
  app.post('/unparsed-type', async (req, res) => {
    // body-parser 1.x leaves {} for a content type it does not parse, without reading the stream.
    req.body = {};
    captures.push(await captureDelivery(req));
    res.status(200).end();
  });
  app.post('/small', async (req, res) => {
    try {
      captures.push(await captureDelivery(req, { maxBodyBytes: 8 }));
      res.status(200).end();
    } catch (error) {
      failures.push(isPayhookError(error) ? `${error.code}: ${error.message}` : String(error));
      res.status(500).json({ ok: false });
    }
  });
  app.post('/read-by-hand', async (req, res) => {
    // The route drains the stream itself and keeps the bytes nowhere.
    for await (const chunk of req) void chunk;
    try {
      captures.push(await captureDelivery(req));
      res.status(200).end();
    } catch (error) {
      failures.push(isPayhookError(error) ? `${error.code}: ${error.message}` : String(error));
      res.status(500).json({ ok: false });
    }
  });
  server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => server.close());

async function deliver(path: string, tamper = false): Promise<Response> {
  const signed = await signWebhook(createTestWebhook({ amount: 100.5 }), { url: WEBHOOK_URL });
  const body = tamper ? signed.body.replace('100.5', '1000.5') : signed.body;
  return sendWebhook({ ...signed, url: `${base}${path}`, body });
}

async function verifyFile(capture: CapturedDelivery, name: string) {
  const file = join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(capture, null, 2));
  const key = join(dir, 'test.public.pem');
  await writeFile(key, TEST_KEY_PAIR.publicKey);
  const result = await run(['verify', '--request', file, '--key', key, '--json']);
  return { code: result.code, output: JSON.parse(result.stdout) as Record<string, any> };
}

describe('captureDelivery on an Express route without a body parser', () => {
  it('reads the body from the stream, and the handler after it still answers 200', async () => {
    captures.length = 0;
    const response = await deliver('/webhooks/payments');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
    expect(captures).toHaveLength(1);
    const [capture] = captures as [CapturedDelivery];
    expect(capture.webhookUrl).toBe(WEBHOOK_URL);
    expect(capture.headers['host']).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(JSON.parse(capture.body)).toMatchObject({ amount: 100.5 });

    // Signed for the registered URL, received on 127.0.0.1: the capture's
    // webhookUrl makes it verify with no flag.
    const { code, output } = await verifyFile(capture, 'good');
    expect(output['ok']).toBe(true);
    expect(code).toBe(0);
    // Without the recorded webhookUrl the same file does not verify.
    const { webhookUrl: _, ...bare } = capture;
    expect((await verifyFile(bare, 'bare')).code).toBe(1);
  });

  it('diagnoses a tampered capture as a changed body, not a rewritten Host', async () => {
    captures.length = 0;
    expect((await deliver('/webhooks/payments', true)).status).toBe(401);
    const { code, output } = await verifyFile(captures[0]!, 'tampered');
    expect(code).toBe(1);
    expect(output['error'].code).toBe('SIGNATURE_MISMATCH');
    expect(output['diagnosis'].changes).toEqual([]);
    expect(output['diagnosis'].message).toContain('changed the body before payhook read it');
    expect(output['diagnosis'].message).not.toContain('Host was rewritten');
  });

  it('reads the stream when a parser left {} without reading it', async () => {
    captures.length = 0;
    expect((await deliver('/unparsed-type')).status).toBe(200);
    expect(JSON.parse(captures[0]!.body)).toMatchObject({ amount: 100.5 });
  });

  it('refuses a body past maxBodyBytes with BODY_TOO_LARGE', async () => {
    failures.length = 0;
    expect((await deliver('/small')).status).toBe(500);
    expect(failures).toEqual([expect.stringMatching(/^BODY_TOO_LARGE: .*maxBodyBytes/)]);
  });

  it('says exactly what to pass when the route already read the stream', async () => {
    failures.length = 0;
    expect((await deliver('/read-by-hand')).status).toBe(500);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/^INVALID_ARGUMENT: /);
    expect(failures[0]).toContain('pass the bytes you read as { body }');
    expect(failures[0]).toContain("express.raw({ type: '*/*' })");
  });
});

describe('captureDelivery records webhookUrl', () => {
  it('for a Web Request and a Node request, and refuses an empty one', async () => {
    const web = new Request('https://app.internal/hook', { method: 'POST', body: '{}' });
    expect((await captureDelivery(web, { webhookUrl: WEBHOOK_URL })).webhookUrl).toBe(WEBHOOK_URL);
    const node = { method: 'POST', url: '/hook', headers: { host: 'h' }, body: '{}' };
    const capture = await captureDelivery(node, { webhookUrl: WEBHOOK_URL });
    expect(JSON.parse(JSON.stringify(capture))).toEqual({ ...node, headers: { host: 'h' }, webhookUrl: WEBHOOK_URL });
    expect('webhookUrl' in (await captureDelivery(node))).toBe(false);
    await expect(captureDelivery(node, { webhookUrl: '' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});
