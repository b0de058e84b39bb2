import { createDurableObjectStore, PayhookDedupObject, type DedupStore } from 'payhook/cloudflare';

export type Store = DedupStore;
export type Create = typeof createDurableObjectStore;
export type DedupObject = PayhookDedupObject;
