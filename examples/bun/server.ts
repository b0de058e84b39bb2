// Bun: `Bun.serve` with the Web handler of payhook/web. `bun bun/server.ts`.
// Environment variables: see ../express/server.mjs.
import { createWebhookHandler } from 'payhook/web';

const env = process.env;
const handleWebhook = createWebhookHandler({
  ...(env.PAYHOOK_PUBLIC_KEY_PEM
    ? { publicKeys: env.PAYHOOK_PUBLIC_KEY_PEM }
    : { environment: env.PAYHOOK_ENVIRONMENT === 'beta' ? ('beta' as const) : ('production' as const) }),
  // The URL registered with the service pins Host, path and query: without
  // it payhook refuses to start, unless PAYHOOK_ALLOW_ANY_HOST=true says a
  // proxy in front already guarantees the Host.
  ...(env.PAYHOOK_WEBHOOK_URL
    ? { webhookUrl: env.PAYHOOK_WEBHOOK_URL }
    : { allowAnyHost: env.PAYHOOK_ALLOW_ANY_HOST === 'true' }),
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
