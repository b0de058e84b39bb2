// Fastify: `createNodeWebhookHandler` from payhook/node is the route handler;
// it uses the body Fastify parsed and answers on the raw response.
// Environment variables: see ../express/server.mjs.
import Fastify from 'fastify';
import { createNodeWebhookHandler } from 'payhook/node';

const env = process.env;
const app = Fastify();

app.post(
  '/webhooks/payments',
  createNodeWebhookHandler({
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
  }),
);

const address = await app.listen({ port: Number(env.PORT ?? 3000), host: env.HOST ?? '127.0.0.1' });
console.log(`listening on ${address}`);
