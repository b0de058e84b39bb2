// payhook/web names the global Request and Response, which every runtime it
// serves has: checked with the DOM lib, with @types/node instead, and with
// @cloudflare/workers-types (whose AbortSignal is a class, not a global var).
import { createWebhookHandler } from 'payhook/web';

const handle = createWebhookHandler({
  publicKeys: '-----BEGIN PUBLIC KEY-----',
  allowAnyHost: true,
  onPayment: async (webhook, context) => {
    const id: string = webhook.id;
    // The signal is the runtime's own AbortSignal: fetch takes it.
    await fetch('https://erp.example.kg/orders', { method: 'POST', body: id, signal: context.signal });
  },
});
export const fetchHandler: (request: Request) => Promise<Response> = (request) => handle(request);
