// Cloudflare Worker: the Web handler of payhook/web as the fetch handler.
// No `nodejs_compat` flag needed: payhook uses Web Crypto only.
// Set the variables in wrangler.toml ([vars]) or as secrets:
//   PAYHOOK_ENVIRONMENT     'production' (default) or 'beta'
//   PAYHOOK_PUBLIC_KEY_PEM  a PEM key instead (the tests' test key)
//   PAYHOOK_WEBHOOK_URL     the URL you registered with the service (required,
//                           unless PAYHOOK_ALLOW_ANY_HOST = 'true')
// Deduplication holds across every isolate and location: the store is a
// Durable Object (PayhookDedupObject, bound as PAYHOOK_DEDUP in
// wrangler.toml), which this module must export under that class name.
import { createDurableObjectStore, type DurableObjectNamespaceLike } from 'payhook/cloudflare';
import type { ServiceEnvironment } from 'payhook';
import { createWebhookHandler, type WebhookHandler } from 'payhook/web';

export { PayhookDedupObject } from 'payhook/cloudflare';

export interface Env {
  PAYHOOK_ENVIRONMENT?: string;
  PAYHOOK_PUBLIC_KEY_PEM?: string;
  PAYHOOK_WEBHOOK_URL?: string;
  PAYHOOK_ALLOW_ANY_HOST?: string;
  PAYHOOK_DEDUP: DurableObjectNamespaceLike;
}

interface ExecutionContextLike {
  waitUntil(promise: Promise<unknown>): void;
}

let handleWebhook: WebhookHandler | undefined;

function handler(env: Env): WebhookHandler {
  // The URL registered with the service pins Host, path and query. Without it
  // the Host would be trusted as received: only when a proxy in front already
  // guarantees it (PAYHOOK_ALLOW_ANY_HOST=true).
  const webhookUrl = env.PAYHOOK_WEBHOOK_URL;
  if (!webhookUrl && env.PAYHOOK_ALLOW_ANY_HOST !== 'true') {
    throw new Error('Set PAYHOOK_WEBHOOK_URL to the URL you registered with the service.');
  }
  handleWebhook ??= createWebhookHandler({
    ...(env.PAYHOOK_PUBLIC_KEY_PEM
      ? { publicKeys: env.PAYHOOK_PUBLIC_KEY_PEM }
      : { environment: (env.PAYHOOK_ENVIRONMENT || 'production') as ServiceEnvironment }),
    ...(webhookUrl ? { webhookUrl } : { allowAnyHost: true as const }),
    store: createDurableObjectStore({ namespace: env.PAYHOOK_DEDUP }),
    // Once per payment *and status* (FAILED, then SUCCEEDED, are two calls); only
    // SUCCEEDED is paid: see the README's "Applying a payment to an order".
    onPayment: async (webhook) => {
      console.log(`payment ${webhook.id} ${webhook.status} ${webhook.amount}`);
    },
  });
  return handleWebhook;
}

export default {
  async fetch(request: Request, env: Env, context: ExecutionContextLike): Promise<Response> {
    if (new URL(request.url).pathname === '/webhooks/payments') return handler(env)(request, context);
    return new Response('Not found', { status: 404 });
  },
};
