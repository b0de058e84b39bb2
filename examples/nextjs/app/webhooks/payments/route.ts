// Next.js (app router): a route handler at app/webhooks/payments/route.ts.
// `createWebhookHandler` from payhook/web answers the Web Request Next.js
// hands to POST, on the default Node.js runtime (nothing to export for it).
// It runs on the Edge runtime too, which Next.js 16 deprecates; there each
// isolate has its own memory store.
// Register the URL without a trailing slash: Next.js answers /payments/ with
// a 308, and the service does not follow redirects.
// Environment variables (.env.local):
//   PAYHOOK_ENVIRONMENT     'production' (default) or 'beta'
//   PAYHOOK_PUBLIC_KEY_PEM  a PEM key instead (the tests' test key)
//   PAYHOOK_WEBHOOK_URL     the URL you registered (Vercel and most hosts
//                           sit behind a proxy: set it)
import type { ServiceEnvironment } from 'payhook';
import { createWebhookHandler, type WebhookHandler } from 'payhook/web';

export const dynamic = 'force-dynamic';

let handleWebhook: WebhookHandler | undefined;

// Created on the first request, not when the module loads: `next build` loads
// this file, and in Docker or CI the variables may exist only at run time.
function handler(): WebhookHandler {
  if (handleWebhook) return handleWebhook;
  const env = process.env;
  // The URL registered with the service pins Host, path and query. Without it
  // the Host would be trusted as received: only when a proxy in front already
  // guarantees it (PAYHOOK_ALLOW_ANY_HOST=true).
  const webhookUrl = env.PAYHOOK_WEBHOOK_URL;
  if (!webhookUrl && env.PAYHOOK_ALLOW_ANY_HOST !== 'true') {
    throw new Error('Set PAYHOOK_WEBHOOK_URL to the URL you registered with the service.');
  }
  handleWebhook = createWebhookHandler({
    ...(env.PAYHOOK_PUBLIC_KEY_PEM
      ? { publicKeys: env.PAYHOOK_PUBLIC_KEY_PEM }
      : { environment: (env.PAYHOOK_ENVIRONMENT || 'production') as ServiceEnvironment }),
    ...(webhookUrl ? { webhookUrl } : { allowAnyHost: true as const }),
    // Serverless (Vercel, Netlify): instances share no memory, so the default
    // memory store would let a redelivery that reaches another instance run
    // onPayment again. Pass a shared store there: createRedisStore
    // (payhook/redis) or createPostgresStore (payhook/postgres); see the
    // README's "Choosing a store".
    // Runs once per payment *and status* (FAILED, then SUCCEEDED, are two
    // calls). Only SUCCEEDED is paid: apply a status with shouldApplyStatus
    // (README: "Applying a payment to an order").
    onPayment: async (webhook) => {
      console.log(`payment ${webhook.id} ${webhook.status} ${webhook.amount}`);
    },
  });
  return handleWebhook;
}

export async function POST(request: Request): Promise<Response> {
  return handler()(request);
}
