import { createRedisStore, type DedupStore } from 'payhook/redis';

export type Store = DedupStore;
export type Create = typeof createRedisStore;
