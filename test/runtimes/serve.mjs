// Deno and Bun launcher for the Web handler behind the runtime's own HTTP
// server (Deno.serve, Bun.serve), answering real requests over loopback: a
// body of declared length, a streamed one (chunked, no Content-Length), a
// repetition and a tampered copy. scripts/test-runtimes.mjs fails the run on
// any line the runtime prints besides the tally: a warning the handler sets
// off (Deno.serve warns once a request's `signal` is read) would be printed
// by every merchant's server.
import * as api from 'payhook';
import * as web from 'payhook/web';
import { runCases } from '../conformance/suite.js';
import { fixtures, sampleBody, signDelivery, tamper, WEBHOOK_URL } from './shared.mjs';

const runtime = globalThis.Deno ? 'deno' : 'bun';
const handled = [];
const lengths = [];
const handler = web.createWebhookHandler({
  publicKeys: fixtures.keys['conformance-2048'].publicKeyPem,
  webhookUrl: WEBHOOK_URL,
  logger: false,
  onPayment: (webhook) => void handled.push(webhook.id),
});
const fetchHandler = (request) => {
  lengths.push(request.headers.get('content-length'));
  return handler(request);
};

/** Starts the runtime's server on a free loopback port; resolves its port and a stop function. */
async function listen() {
  if (globalThis.Deno) {
    const server = globalThis.Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: () => {} }, fetchHandler);
    return { port: server.addr.port, stop: () => server.shutdown() };
  }
  const server = globalThis.Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: fetchHandler });
  return { port: server.port, stop: () => server.stop(true) };
}

function fail(message) {
  throw new Error(message);
}

const { port, stop } = await listen();
const signed = await signDelivery(api, sampleBody());
const bytes = new TextEncoder().encode(signed.body);

/** Posts `body` to the server; `stream` sends it as a stream of two parts (no Content-Length). */
async function post(delivery, { stream = false } = {}) {
  const data = new TextEncoder().encode(delivery.body);
  const body = stream
    ? new ReadableStream({
        start(controller) {
          controller.enqueue(data.subarray(0, 10));
          controller.enqueue(data.subarray(10));
          controller.close();
        },
      })
    : data;
  const headers = { ...delivery.headers };
  delete headers.host; // the registered URL is pinned (webhookUrl); the socket's host reaches the server
  const response = await fetch(`http://127.0.0.1:${port}/webhooks/payments`, {
    method: 'POST',
    headers,
    body,
    ...(stream ? { duplex: 'half' } : {}),
  });
  return { status: response.status, text: await response.text() };
}

const expectStatus = ({ status, text }, expected) => {
  if (status !== expected) fail(`expected ${expected}, got ${status}: ${text}`);
};

const cases = [
  {
    name: `${runtime} server: a streamed delivery (no Content-Length) is answered 200 and handled once`,
    run: async () => {
      expectStatus(await post(signed, { stream: true }), 200);
      if (lengths.at(-1) !== null) fail(`the request arrived with Content-Length ${lengths.at(-1)}, not streamed`);
      if (handled.length !== 1) fail(`onPayment ran ${handled.length} times, expected once`);
    },
  },
  {
    name: `${runtime} server: the same delivery with its length declared is answered 200 without a second run`,
    run: async () => {
      expectStatus(await post(signed), 200);
      if (lengths.at(-1) !== String(bytes.byteLength)) fail(`expected Content-Length ${bytes.byteLength}`);
      if (handled.length !== 1) fail(`onPayment ran ${handled.length} times, expected once`);
    },
  },
  {
    name: `${runtime} server: a tampered delivery, streamed, is answered 401 and not handled`,
    run: async () => {
      expectStatus(await post(tamper(signed), { stream: true }), 401);
      if (handled.length !== 1) fail(`onPayment ran ${handled.length} times, expected once`);
    },
  },
];

const { failed, passed } = await runCases(cases, { label: `${runtime} server` });
await stop();
const code = failed === 0 && passed > 0 ? 0 : 1;
if (globalThis.Deno) globalThis.Deno.exit(code);
else globalThis.process.exit(code);
