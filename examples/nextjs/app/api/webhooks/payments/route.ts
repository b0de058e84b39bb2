// Next.js (app router): a route handler at app/api/webhooks/payments/route.ts.
// `createWebhookHandler` from payhook/web answers the Web Request Next.js
// hands to POST; it runs on the Node.js and the Edge runtime alike.
// Environment variables (.env.local):
//   PAYHOOK_ENVIRONMENT     'production' (default) or 'beta'
//   PAYHOOK_PUBLIC_KEY_PEM  a PEM key instead (the tests' test key)
//   PAYHOOK_WEBHOOK_URL     the URL you registered (Vercel and most hosts
//                           sit behind a proxy: set it)
import { createWebhookHandler } from 'payhook/web';

export const dynamic = 'force-dynamic';

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

export async function POST(request: Request): Promise<Response> {
  return handleWebhook(request);
}
