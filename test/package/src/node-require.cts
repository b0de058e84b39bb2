import { createNodeWebhookHandler } from 'payhook/node';

export type NodeHandler = ReturnType<typeof createNodeWebhookHandler>;
