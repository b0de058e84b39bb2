// Bun: `Bun.serve` with the Web handler of payhook/web. `bun bun/server.ts`.
// Environment variables: see ../express/server.mjs.
import type { ServiceEnvironment } from 'payhook';
import { createWebhookHandler } from 'payhook/web';

const env = process.env;
// The URL registered with the service pins Host, path and query. Without it
// the Host would be trusted as received: only when a proxy in front already
// guarantees it (PAYHOOK_ALLOW_ANY_HOST=true).
const webhookUrl = env.PAYHOOK_WEBHOOK_URL;
if (!webhookUrl && env.PAYHOOK_ALLOW_ANY_HOST !== 'true') {
  throw new Error('Set PAYHOOK_WEBHOOK_URL to the URL you registered with the service.');
}
const handleWebhook = createWebhookHandler({
  ...(env.PAYHOOK_PUBLIC_KEY_PEM
    ? { publicKeys: env.PAYHOOK_PUBLIC_KEY_PEM }
    : { environment: (env.PAYHOOK_ENVIRONMENT || 'production') as ServiceEnvironment }),
  ...(webhookUrl ? { webhookUrl } : { allowAnyHost: true as const }),
  // Once per payment *and status* (FAILED, then SUCCEEDED, are two calls); only
  // SUCCEEDED is paid: see the README's "Applying a payment to an order".
  onPayment: async (webhook) => {
    console.log(`payment ${webhook.id} ${webhook.status} ${webhook.amount}`);
  },
});

const server = Bun.serve({
  hostname: env.HOST ?? '127.0.0.1',
  port: Number(env.PORT ?? 3000),
  fetch(request) {
    if (new URL(request.url).pathname === '/webhooks/payments') return handleWebhook(request);
    return new Response('Not found', { status: 404 });
  },
});
console.log(`listening on http://${server.hostname}:${server.port}`);
