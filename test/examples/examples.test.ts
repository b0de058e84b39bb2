// Every example in examples/ runs as a user would run it — its own runtime,
// the packed package installed in examples/node_modules/payhook and imported
// by name — and answers deliveries signed with the conformance-2048 test key:
// 200 for a signed one, 200 again for its repetition, 401 for a tampered
// copy, and its `onPayment` ran exactly once (it logs one `payment …` line).
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Miniflare } from 'miniflare';
import { toRequest } from 'payhook/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { installPacked } from '../../scripts/lib/pack.mjs';
import { runtimeBinary } from '../../scripts/lib/runtime-binaries.mjs';
import {
  PAYMENT_LINE,
  PUBLIC_WEBHOOK_URL,
  TEST_PUBLIC_KEY_PEM,
  eventually,
  examplesDir,
  send,
  signedDelivery,
  startExample,
  tampered,
  type RunningExample,
} from './harness.js';
import { bundleForWorkerd } from '../../scripts/lib/bundle-worker.mjs';

beforeAll(() => {
  installPacked(examplesDir);
}, 60_000);

const payments = (lines: readonly string[]) => lines.filter((line) => PAYMENT_LINE.test(line));

interface ServerExample {
  name: string;
  command: () => string;
  args: string[];
}

const servers: ServerExample[] = [
  { name: 'Express (Node)', command: () => process.execPath, args: ['express/server.mjs'] },
  { name: 'Fastify (Node)', command: () => process.execPath, args: ['fastify/server.mjs'] },
  { name: 'Hono on Node (@hono/node-server)', command: () => process.execPath, args: ['hono/node.mjs'] },
  { name: 'Hono on Bun', command: () => runtimeBinary('bun').path, args: ['hono/bun.mjs'] },
  { name: 'Bun.serve', command: () => runtimeBinary('bun').path, args: ['bun/server.ts'] },
  {
    name: 'Deno.serve',
    command: () => runtimeBinary('deno').path,
    args: [
      'run',
      '--no-lock',
      '--no-prompt',
      '--allow-net=127.0.0.1',
      '--allow-env',
      `--allow-read=${examplesDir}`,
      'deno/main.ts',
    ],
  },
];

for (const example of servers) {
  describe(`example: ${example.name}`, () => {
    let server: RunningExample;
    beforeAll(async () => {
      server = await startExample(example.command(), example.args, {
        env: { DENO_NO_UPDATE_CHECK: '1', PAYHOOK_WEBHOOK_URL: PUBLIC_WEBHOOK_URL },
      });
    }, 60_000);
    afterAll(async () => {
      await server?.stop();
    });

    it('answers a signed delivery 200, its repetition 200, a tampered copy 401, and handles the payment once', async () => {
      // Signed for the public URL, received on 127.0.0.1 (as behind a proxy):
      // the example pins PAYHOOK_WEBHOOK_URL, so the Host it sees does not matter.
      const delivery = await signedDelivery(PUBLIC_WEBHOOK_URL);
      const to = `${server.url}/webhooks/payments`;
      const first = await send(delivery, to);
      expect(first, server.output()).toMatchObject({ status: 200, body: { ok: true } });
      const again = await send(delivery, to);
      expect(again.status, server.output()).toBe(200);
      const forged = await send(tampered(delivery), to);
      expect(forged, server.output()).toMatchObject({ status: 401, body: { ok: false, code: 'SIGNATURE_MISMATCH' } });
      await eventually(() => payments(server.lines).length > 0);
      const id = (JSON.parse(delivery.body) as { id: string }).id;
      expect(payments(server.lines)).toEqual([expect.stringContaining(`payment ${id} `)]);
    });
  });
}

describe('example: Next.js app-router route handler', () => {
  it('POST answers a signed delivery 200, its repetition 200, a tampered copy 401, and handles the payment once', async () => {
    vi.stubEnv('PAYHOOK_PUBLIC_KEY_PEM', TEST_PUBLIC_KEY_PEM);
    vi.stubEnv('PAYHOOK_WEBHOOK_URL', 'https://shop.example.kg/webhooks/payments');
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      const route = (await import(join(examplesDir, 'nextjs', 'app', 'webhooks', 'payments', 'route.ts'))) as {
        POST: (request: Request) => Promise<Response>;
      };
      const delivery = await signedDelivery('https://shop.example.kg/webhooks/payments');
      const first = await route.POST(toRequest(delivery));
      expect(first.status, await first.clone().text()).toBe(200);
      expect((await route.POST(toRequest(delivery))).status).toBe(200);
      expect((await route.POST(toRequest(tampered(delivery)))).status).toBe(401);
      const lines = log.mock.calls.map((args) => args.map(String).join(' '));
      expect(payments(lines)).toHaveLength(1);
    } finally {
      log.mockRestore();
      vi.unstubAllEnvs();
    }
  });
});

describe('example: Cloudflare Worker (workerd through Miniflare)', () => {
  it('answers real fetches: a signed delivery 200, its repetition 200, a tampered copy 401, and handles the payment once', async () => {
    const script = await bundleForWorkerd(join(examplesDir, 'cloudflare-worker', 'src', 'index.ts'));
    const lines: string[] = [];
    const webhookUrl = 'https://shop.example.kg/webhooks/payments';
    const mf = new Miniflare({
      modules: true,
      script,
      compatibilityDate: '2025-09-01',
      // Miniflare hands the Worker `Host: 127.0.0.1:<port>`: pin the
      // registered URL, as the example's wrangler.toml does.
      bindings: { PAYHOOK_PUBLIC_KEY_PEM: TEST_PUBLIC_KEY_PEM, PAYHOOK_WEBHOOK_URL: webhookUrl },
      durableObjects: { PAYHOOK_DEDUP: { className: 'PayhookDedupObject', useSQLite: true } },
      handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
        for (const stream of [stdout, stderr])
          stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n')));
      },
    });
    try {
      const delivery = await signedDelivery(webhookUrl);
      const dispatch = async (d: typeof delivery) => {
        const response = await mf.dispatchFetch(d.url, { method: d.method, headers: d.headers, body: d.body });
        return { status: response.status, text: await response.text() };
      };
      const first = await dispatch(delivery);
      expect(first.status, first.text).toBe(200);
      expect((await dispatch(delivery)).status).toBe(200);
      expect((await dispatch(tampered(delivery))).status).toBe(401);
      await eventually(() => payments(lines.map((line) => line.trim())).length > 0);
      expect(payments(lines.map((line) => line.trim()))).toHaveLength(1);
    } finally {
      await mf.dispose();
    }
  }, 60_000);
});
