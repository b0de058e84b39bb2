// payhook/node with no @types/node: the adapter must describe the slice of
// IncomingMessage/ServerResponse it uses structurally.
import { createNodeWebhookHandler } from 'payhook/node';

export const handler = createNodeWebhookHandler({
  environment: 'production',
  webhookUrl: 'https://shop.example.kg/webhooks/payments',
  onPayment: async (webhook) => {
    const id: string = webhook.id;
    void id;
  },
});
export type NodeHandler = typeof handler;
