import { once } from 'node:events';
import { mkdtemp, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureDelivery, type CapturedDelivery } from '../src/capture.js';
import { createTestWebhook, sendWebhook, signWebhook, TEST_KEY_PAIR } from '../src/testing/index.js';
import { run } from './cli/run.js';

// Real servers on 127.0.0.1 capture what they received, in each body shape a
// handler meets; the built CLI then reads the file: capture → file → verify.
const captured = new Map<string, CapturedDelivery>();
let expressServer: Server;
let webServer: ServerType;
let expressBase: string;
let webBase: string;
let dir: string;
let publicKey: string;

function keep(route: string, capture: CapturedDelivery): void {
  captured.set(route, capture);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'payhook-capture-'));
  publicKey = join(dir, 'test.public.pem');
  await writeFile(publicKey, TEST_KEY_PAIR.publicKey);

  const app = express();
  const answer = (route: string) => async (req: express.Request, res: express.Response) => {
    keep(route, await captureDelivery(req));
    res.status(200).end();
  };
  app.post('/json', express.json(), answer('json'));
  app.post('/buffer', express.raw({ type: '*/*' }), answer('buffer'));
  app.post('/string', express.text({ type: '*/*' }), answer('string'));
  app.post('/uint8array', express.raw({ type: '*/*' }), async (req, res) => {
    // A Uint8Array that is not a Buffer, as some frameworks hand over.
    const body = new Uint8Array(req.body as Buffer);
    keep('uint8array', await captureDelivery({ method: req.method, url: req.originalUrl, headers: req.headers, body }));
    res.status(200).end();
  });
  expressServer = app.listen(0, '127.0.0.1');
  await once(expressServer, 'listening');
  expressBase = `http://127.0.0.1:${(expressServer.address() as AddressInfo).port}`;

  webServer = serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (request) => {
      keep('web', await captureDelivery(request));
      return new Response(null, { status: 200 });
    },
  });
  await once(webServer, 'listening');
  webBase = `http://127.0.0.1:${(webServer.address() as AddressInfo).port}`;
});

afterAll(() => {
  expressServer.close();
  webServer.close();
});

/** Signs for the URL it is sent to, optionally changes the body in flight, and returns the capture. */
async function deliver(route: string, base: string, tamper: boolean): Promise<CapturedDelivery> {
  const url = `${base}/${route}?shop=7`;
  const signed = await signWebhook(createTestWebhook({ amount: 100.5 }), { url });
  const body = tamper ? signed.body.replace('100.5', '1000.5') : signed.body;
  expect(body === signed.body).toBe(!tamper);
  const response = await sendWebhook({ ...signed, body });
  expect(response.status).toBe(200);
  const capture = captured.get(route);
  expect(capture).toBeDefined();
  return capture!;
}

async function verifyFile(capture: CapturedDelivery, name: string) {
  const file = join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(capture, null, 2));
  const result = await run(['verify', '--request', file, '--key', publicKey, '--json']);
  return {
    code: result.code,
    output: JSON.parse(result.stdout) as {
      ok: boolean;
      error: { code: string } | null;
      diagnosis: { changes: unknown[]; verifiedCanonical: string | null; message: string } | null;
    },
  };
}

describe.each([
  ['a parsed object (express.json())', 'json', () => expressBase],
  ['a Buffer (express.raw())', 'buffer', () => expressBase],
  ['a string (express.text())', 'string', () => expressBase],
  ['a Uint8Array', 'uint8array', () => expressBase],
  ['a Web Request (@hono/node-server)', 'web', () => webBase],
])('capture of %s → file → payhook verify --request --json', (_, route, base) => {
  it('verifies a good delivery: ok true, exit 0', async () => {
    const { code, output } = await verifyFile(await deliver(route, base(), false), `${route}-good`);
    expect(output.ok).toBe(true);
    expect(code).toBe(0);
  });

  it('blames the body of a delivery changed after signing, and nothing else', async () => {
    const { code, output } = await verifyFile(await deliver(route, base(), true), `${route}-tampered`);
    expect(code).toBe(1);
    expect(output.ok).toBe(false);
    expect(output.error?.code).toBe('SIGNATURE_MISMATCH');
    // No host, path, query or key change makes it verify: what is left is the body.
    expect(output.diagnosis?.changes).toEqual([]);
    expect(output.diagnosis?.verifiedCanonical).toBeNull();
    expect(output.diagnosis?.message).toContain('changed the body before payhook read it');
  });
});

it('shows why the helper exists: JSON.stringify of the request loses a Buffer body and Headers', async () => {
  const request = new Request('https://shop.example.kg/hook', { method: 'POST', body: '{"a":1}' });
  expect(JSON.stringify(request)).toBe('{}');
  expect(JSON.stringify({ body: Buffer.from('{"a":1}') })).toContain('"type":"Buffer"');
  expect((await captureDelivery(request)).body).toBe('{"a":1}');
});
