import { createWebhookHandler } from 'payhook/web';

export type Handler = ReturnType<typeof createWebhookHandler>;
