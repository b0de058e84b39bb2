/**
 * Entry `payhook/cloudflare`: a {@link DedupStore} for Cloudflare Workers on
 * a Durable Object, atomic across every Worker instance that shares the
 * binding. Export {@link PayhookDedupObject} from your Worker, bind it in
 * `wrangler.toml`, and pass {@link createDurableObjectStore} to the handler
 * of `payhook/web`.
 *
 * @module
 */
export { PayhookDedupObject } from './durable-object.js';
export type { DurableObjectStateLike, DurableObjectTransactionLike } from './durable-object.js';
export { createDurableObjectStore } from './store.js';
export type { DurableObjectNamespaceLike, DurableObjectStoreOptions, DurableObjectStubLike } from './store.js';
export type { ClaimOptions, ClaimResult, CompleteOptions, DedupStore } from '../dedup/store.js';
