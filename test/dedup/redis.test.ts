// The Redis store against a real redis-server started here, through both
// clients. A missing redis-server fails the run.
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/redis/index.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { storeContract } from './contract.js';

let server: RedisServer;
let ioredis: Redis;
let nodeRedis: ReturnType<typeof createClient>;

beforeAll(async () => {
  server = await startRedisServer();
  ioredis = new Redis(server.port, '127.0.0.1', { lazyConnect: true });
  await ioredis.connect();
  nodeRedis = createClient({ url: server.url });
  await nodeRedis.connect();
});

afterAll(async () => {
  ioredis?.disconnect();
  await nodeRedis?.close?.();
  await server?.stop();
});

storeContract('redis via ioredis', () => createRedisStore({ client: ioredis, prefix: 'io:' }));
storeContract('redis via node-redis', () => createRedisStore({ client: nodeRedis, prefix: 'nr:' }));

describe('createRedisStore', () => {
  it('shares claims between the two clients on one database (several instances)', async () => {
    const a = createRedisStore({ client: ioredis, prefix: 'shared:' });
    const b = createRedisStore({ client: nodeRedis, prefix: 'shared:' });
    const claim = await a.claim('tx-1', { leaseMs: 10_000 });
    expect(claim.status).toBe('claimed');
    expect((await b.claim('tx-1', { leaseMs: 10_000 })).status).toBe('in-progress');
    if (claim.status !== 'claimed') throw new Error('unreachable');
    await a.complete('tx-1', claim.token, { retentionMs: 60_000 });
    expect((await b.claim('tx-1', { leaseMs: 10_000 })).status).toBe('completed');
  });

  it('writes prefixed keys with the lease and the retention as their TTL', async () => {
    const store = createRedisStore({ client: ioredis, prefix: 'ttl:' });
    const claim = await store.claim('tx-ttl', { leaseMs: 30_000 });
    const leaseTtl = await ioredis.pttl('ttl:tx-ttl');
    expect(leaseTtl).toBeGreaterThan(25_000);
    expect(leaseTtl).toBeLessThanOrEqual(30_000);
    if (claim.status !== 'claimed') throw new Error('unreachable');
    await store.complete('tx-ttl', claim.token, { retentionMs: 7 * 86_400_000 });
    expect(await ioredis.get('ttl:tx-ttl')).toBe('completed');
    expect(await ioredis.pttl('ttl:tx-ttl')).toBeGreaterThan(6 * 86_400_000);
  });

  it('keeps a completion without expiry when retentionMs is Infinity', async () => {
    const store = createRedisStore({ client: nodeRedis, prefix: 'forever:' });
    const claim = await store.claim('tx', { leaseMs: 30_000 });
    if (claim.status !== 'claimed') throw new Error('unreachable');
    await store.complete('tx', claim.token, { retentionMs: Infinity });
    expect(await ioredis.pttl('forever:tx')).toBe(-1);
  });

  it('uses the default prefix payhook:', async () => {
    const store = createRedisStore({ client: ioredis });
    await store.claim('default-prefix', { leaseMs: 10_000 });
    expect(await ioredis.exists('payhook:default-prefix')).toBe(1);
  });

  it('refuses a key it did not write rather than treating it as free', async () => {
    await ioredis.set('foreign:tx', 'something else');
    const store = createRedisStore({ client: ioredis, prefix: 'foreign:' });
    await expect(store.claim('tx', { leaseMs: 1000 })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });

  it('rejects with STORE_UNAVAILABLE when Redis cannot be reached', async () => {
    const down = new Redis(1, '127.0.0.1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    down.on('error', () => {});
    const store = createRedisStore({ client: down });
    await expect(store.claim('tx', { leaseMs: 1000 })).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      name: 'PayhookError',
    });
    down.disconnect();
    const failing = createRedisStore({ client: { sendCommand: () => Promise.reject(new Error('ECONNREFUSED')) } });
    await expect(failing.claim('tx', { leaseMs: 1000 })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(failing.complete('tx', 'token', { retentionMs: 1000 })).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
    });
    await expect(failing.release('tx', 'token')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });

  it('refuses something that is not a Redis client', () => {
    expect(() => createRedisStore({ client: {} as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    expect(() => createRedisStore(undefined as never)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });
});
