// Several Host lines, sent on a raw socket to both handlers behind real
// servers (node:http; @hono/node-server for the Web handler, whose Headers
// joins them with ", "). Both give one verdict: names of one host (letter
// case and a default port aside) are that host as first written; names of
// several hosts are refused, since the one the service signed for is unknown.
import { getRequestListener } from '@hono/node-server';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import type { WebhookHandlerOptions } from '../../src/handler/options.js';
import { createNodeWebhookHandler } from '../../src/node/index.js';
import { createWebhookHandler } from '../../src/web/index.js';
import { listen, type RunningServer } from '../helpers/http.js';
import { PUBLIC_KEY, signDelivery, webhookBody, type SignedDelivery } from '../helpers/sign.js';

const servers: RunningServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

async function serve(kind: 'node' | 'web', webhookUrl?: string[]): Promise<{ port: number; calls: string[] }> {
  const calls: string[] = [];
  const options: WebhookHandlerOptions = {
    publicKeys: PUBLIC_KEY,
    ...(webhookUrl === undefined ? { allowAnyHost: true } : { webhookUrl }),
    logger: false,
    onPayment: (webhook) => {
      calls.push(webhook.id);
    },
  };
  let server: RunningServer;
  if (kind === 'node') {
    const handler = createNodeWebhookHandler(options);
    server = await listen(createServer((req, res) => void handler(req, res)));
  } else {
    const handler = createWebhookHandler(options);
    const listener = getRequestListener((request: Request) => handler(request));
    server = await listen(createServer((req, res) => void listener(req, res)));
  }
  servers.push(server);
  return { port: server.port, calls };
}

/** Sends `delivery` on a raw socket with `extra` header lines after its own; resolves the whole answer. */
function post(port: number, delivery: SignedDelivery, extra: string[]): Promise<string> {
  const lines = Object.entries(delivery.headers).map(([name, value]) => `${name}: ${value}`);
  return new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(
        `POST ${delivery.target} HTTP/1.1\r\n${[...lines, ...extra].join('\r\n')}\r\n` +
          `content-length: ${Buffer.byteLength(delivery.body)}\r\nconnection: close\r\n\r\n${delivery.body}`,
      ),
    );
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

describe.each(['node', 'web'] as const)('several Host lines (payhook/%s)', (kind) => {
  it('refuses names of several hosts; takes names of one host as that host (allowAnyHost)', async () => {
    const r = await serve(kind);
    // Signed by the service for another merchant (one key signs for every merchant), that host's line first.
    const delivery = signDelivery(webhookBody(), { host: 'other-merchant.example' });
    const request = (extra: string[]) => post(r.port, delivery, extra);
    const status = (answer: string) => answer.split('\r\n')[0];
    const twoHosts = await request(['Host: shop.example.kg']);
    expect(status(twoHosts)).toBe('HTTP/1.1 400 Bad Request');
    expect(twoHosts).toContain('"code":"MISSING_HOST"');
    expect(status(await request(['Host: other-merchant.example', 'Host: shop.example.kg']))).toBe(
      'HTTP/1.1 400 Bad Request',
    );
    expect(r.calls).toEqual([]);
    // The one Host line it was signed for: handled; the same host repeated (letter case and a default port aside)
    // is still that host, as first written: handled too (answered as a duplicate).
    expect(status(await request([]))).toBe('HTTP/1.1 200 OK');
    expect(r.calls).toEqual([delivery.id]);
    for (const same of ['Host: other-merchant.example', 'Host: OTHER-merchant.example:443']) {
      const answer = await request([same]);
      expect([same, status(answer), answer.includes('"duplicate":true')]).toEqual([same, 'HTTP/1.1 200 OK', true]);
    }
    expect(r.calls).toEqual([delivery.id]);
  });

  it('picks from a webhookUrl list by the one host that repeated Host lines name', async () => {
    const r = await serve(kind, ['https://a.example/hook', 'https://b.example/hook']);
    const delivery = signDelivery(webhookBody(), { host: 'b.example', target: '/hook' });
    const answer = await post(r.port, delivery, ['Host: B.example:443']);
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(r.calls).toEqual([delivery.id]);
  });
});
