// Hono: one app for every runtime. `createWebhookHandler` from payhook/web
// takes the Web `Request` Hono holds (`c.req.raw`) and returns the Response.
// Served on Node by ./node.mjs and on Bun by ./bun.mjs.
// Environment variables: see ../express/server.mjs.
import { Hono } from 'hono';
import { createWebhookHandler } from 'payhook/web';

const env = globalThis.process?.env ?? {};
const handleWebhook = createWebhookHandler({
  ...(env.PAYHOOK_PUBLIC_KEY_PEM
    ? { publicKeys: env.PAYHOOK_PUBLIC_KEY_PEM }
    : { environment: env.PAYHOOK_ENVIRONMENT || 'production' }),
  // The URL registered with the service pins Host, path and query: without
  // it payhook refuses to start, unless PAYHOOK_ALLOW_ANY_HOST=true says a
  // proxy in front already guarantees the Host.
  ...(env.PAYHOOK_WEBHOOK_URL
    ? { webhookUrl: env.PAYHOOK_WEBHOOK_URL }
    : { allowAnyHost: env.PAYHOOK_ALLOW_ANY_HOST === 'true' }),
  // Once per payment *and status* (FAILED, then SUCCEEDED, are two calls); only
  // SUCCEEDED is paid: see the README's "Applying a payment to an order".
  onPayment: async (webhook) => {
    console.log(`payment ${webhook.id} ${webhook.status} ${webhook.amount}`);
  },
});

export const app = new Hono();
app.post('/webhooks/payments', (c) => handleWebhook(c.req.raw));
