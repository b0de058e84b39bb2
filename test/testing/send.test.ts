// sendWebhook as documented: with a baseUrl the signed path and query stay, and a redirect is not followed.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createTestWebhook, sendWebhook, signWebhook } from '../../src/testing/index.js';

describe('sendWebhook with baseUrl', () => {
  it('keeps the signed path and query, as documented', async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.url ?? '');
      req.resume();
      req.on('end', () => res.end('{}'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const signed = await signWebhook(createTestWebhook(), { url: 'https://shop.example.kg/hooks/pay?shop=7&v=2' });
      const response = await sendWebhook(signed, `http://127.0.0.1:${port}`);
      expect(response.status).toBe(200);
      expect(seen).toEqual(['/hooks/pay?shop=7&v=2']);
    } finally {
      server.close();
    }
  });

  it('does not follow a redirect: the 3xx is what the service would get', async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.url ?? '');
      req.resume();
      req.on('end', () => {
        if (req.url === '/moved') return void res.end('{}');
        res.writeHead(307, { location: '/moved' }).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const signed = await signWebhook(createTestWebhook(), { url: `http://127.0.0.1:${port}/hooks/pay` });
      const response = await sendWebhook(signed);
      expect(response.status).toBe(307);
      expect(seen).toEqual(['/hooks/pay']);
    } finally {
      server.close();
    }
  });
});
