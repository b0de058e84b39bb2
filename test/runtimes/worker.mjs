// workerd launcher: a Worker module that imports the package by its name.
// scripts/test-runtimes.mjs bundles it with esbuild (as wrangler would, with
// the `workerd`/`worker`/`browser` conditions) and loads it into Miniflare.
//   GET  /conformance       runs every case inside workerd, answers the tally
//   POST /webhooks/payments the Web handler, answering real fetches
//   GET  /handled           how many times onPayment ran, and for which ids
import * as api from 'payhook';
import * as web from 'payhook/web';
import { fixtures, runAll, WEBHOOK_URL } from './shared.mjs';

const handled = [];
let handler;

function webhookHandler() {
  handler ??= web.createWebhookHandler({
    publicKeys: fixtures.keys['conformance-2048'].publicKeyPem,
    // Miniflare hands the Worker `Host: 127.0.0.1:<port>`; Cloudflare would
    // pass the public host. Pinning the registered URL is the documented
    // set-up behind anything that rewrites Host.
    webhookUrl: WEBHOOK_URL,
    onPayment: (webhook) => void handled.push(webhook.id),
  });
  return handler;
}

export default {
  async fetch(request, env, context) {
    const { pathname } = new URL(request.url);
    if (pathname === '/conformance') {
      const lines = [];
      const { passed, failed } = await runAll(api, web, 'workerd', (line) => lines.push(line));
      return Response.json({ passed, failed, lines });
    }
    if (pathname === '/handled') return Response.json({ count: handled.length, ids: handled });
    if (pathname === '/webhooks/payments') return webhookHandler()(request, context);
    return new Response('not found', { status: 404 });
  },
};
