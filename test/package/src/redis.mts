// payhook/redis with no @types/node and no redis client types installed:
// the client is structural.
import { createRedisStore, type DedupStore } from 'payhook/redis';

export function store(client: Parameters<typeof createRedisStore>[0]['client']): DedupStore {
  return createRedisStore({ client, prefix: 'shop:' });
}
