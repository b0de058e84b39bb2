// Deno: `Deno.serve` with the Web handler of payhook/web.
//   deno add npm:payhook
//   deno run --allow-net --allow-env main.ts
// Environment variables: see ../express/server.mjs.
import { createWebhookHandler } from 'payhook/web';

const env = (name: string): string | undefined => Deno.env.get(name);
const publicKeyPem = env('PAYHOOK_PUBLIC_KEY_PEM');
const webhookUrl = env('PAYHOOK_WEBHOOK_URL');
const handleWebhook = createWebhookHandler({
  ...(publicKeyPem
    ? { publicKeys: publicKeyPem }
    : { environment: env('PAYHOOK_ENVIRONMENT') === 'beta' ? ('beta' as const) : ('production' as const) }),
  // The URL registered with the service pins Host, path and query: without
  // it payhook refuses to start, unless PAYHOOK_ALLOW_ANY_HOST=true says a
  // proxy in front already guarantees the Host.
  ...(webhookUrl ? { webhookUrl } : { allowAnyHost: env('PAYHOOK_ALLOW_ANY_HOST') === 'true' }),
  onPayment: async (webhook) => {
    console.log(`payment ${webhook.id} ${webhook.status} ${webhook.amount}`);
  },
});

Deno.serve(
  {
    hostname: env('HOST') ?? '127.0.0.1',
    port: Number(env('PORT') ?? 3000),
    onListen: ({ hostname, port }) => console.log(`listening on http://${hostname}:${port}`),
  },
  (request) => {
    if (new URL(request.url).pathname === '/webhooks/payments') return handleWebhook(request);
    return new Response('Not found', { status: 404 });
  },
);
