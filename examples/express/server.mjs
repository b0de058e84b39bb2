// Express: `createNodeWebhookHandler` from payhook/node is the route handler.
// It reads the raw body itself, or takes what express.json()/express.raw()
// left on req.body.
//   PORT, HOST                 where to listen (default 127.0.0.1:3000)
//   PAYHOOK_ENVIRONMENT        'production' (default) or 'beta': the service
//                              key payhook ships for that environment
//   PAYHOOK_PUBLIC_KEY_PEM     a PEM key instead (the tests' test key)
//   PAYHOOK_WEBHOOK_URL        the URL you registered with the service (required)
//   PAYHOOK_ALLOW_ANY_HOST     'true' to run without it, trusting Host as received
//                              (only behind a proxy that already guarantees it)
import express from 'express';
import { createNodeWebhookHandler } from 'payhook/node';

const env = process.env;
const app = express();

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
    // Runs once per payment *and status* (FAILED, then SUCCEEDED, are two
    // calls), however often the service delivers each. Only SUCCEEDED is
    // paid: apply a status with shouldApplyStatus, never mark an order paid
    // otherwise (README: "Applying a payment to an order"). Keep it short and
    // durable (an outbox row, a queue message): the service wants its 200 at
    // once.
    onPayment: async (webhook) => {
      console.log(`payment ${webhook.id} ${webhook.status} ${webhook.amount}`);
    },
  }),
);

const host = env.HOST ?? '127.0.0.1';
const server = app.listen(Number(env.PORT ?? 3000), host, () => {
  console.log(`listening on http://${host}:${server.address().port}`);
});
