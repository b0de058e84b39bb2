// payhook/web names the global Request and Response, which every runtime it
// serves has: checked with the DOM lib, and with @types/node instead.
import { createWebhookHandler } from 'payhook/web';

const handle = createWebhookHandler({
  publicKeys: '-----BEGIN PUBLIC KEY-----',
  allowAnyHost: true,
  onPayment: (webhook) => {
    const id: string = webhook.id;
    void id;
  },
});
export const fetchHandler: (request: Request) => Promise<Response> = (request) => handle(request);
