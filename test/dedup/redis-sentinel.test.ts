// The Redis store through a node-redis Sentinel client (createSentinel), on a
// real redis-server and a real Sentinel (redis-server --sentinel) started here
// on loopback, watching it as the master `payhook`.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Redis } from 'ioredis';
import { createSentinel } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore, type NodeRedisSentinelLike } from '../../src/redis/index.js';
import { freePort, startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { storeContract } from './contract.js';

let server: RedisServer;
let sentinelProcess: ChildProcess;
// Typed as payhook's own slice, so the type check also shows a Sentinel client fits it.
let sentinel: NodeRedisSentinelLike & { close(): Promise<void> };
let direct: Redis;
let sentinelPort: number;

beforeAll(async () => {
  server = await startRedisServer();
  const port = (sentinelPort = await freePort());
  // Sentinel rewrites its configuration file, so it gets one of its own.
  const config = `${mkdtempSync(`${tmpdir()}/payhook-sentinel-`)}/sentinel.conf`;
  writeFileSync(config, `port ${port}\nbind 127.0.0.1\nsentinel monitor payhook 127.0.0.1 ${server.port} 1\n`);
  sentinelProcess = spawn(process.env.REDIS_SERVER ?? 'redis-server', [config, '--sentinel'], { stdio: 'ignore' });
  const client = createSentinel({ name: 'payhook', sentinelRootNodes: [{ host: '127.0.0.1', port }] });
  client.on('error', () => {});
  for (let attempt = 0; ; attempt++) {
    try {
      sentinel = await client.connect();
      break;
    } catch (error) {
      if (attempt === 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  direct = new Redis(server.port, '127.0.0.1');
}, 30_000);

afterAll(async () => {
  // The servers first: a client's close can reject after a failed test, and must not leave them running.
  sentinelProcess?.kill('SIGKILL');
  await server?.stop();
  direct?.disconnect();
  await sentinel?.close().catch(() => {});
});

storeContract('redis via a node-redis Sentinel client', () => createRedisStore({ client: sentinel, prefix: 'st:' }));

describe('createRedisStore through a node-redis Sentinel client', () => {
  it('writes to the master the Sentinel names (its sendCommand takes isReadonly first)', async () => {
    const store = createRedisStore({ client: sentinel, prefix: 'sentinel:' });
    // It was taken for a plain client: sendCommand(args) read args as isReadonly, and every claim failed.
    const claim = await store.claim('tx', { leaseMs: 60_000 });
    if (claim.status !== 'claimed') throw new Error(claim.status);
    expect(await direct.get('sentinel:tx')).toBe(`claimed:${claim.token}`);
    await store.complete('tx', claim.token, { retentionMs: 60_000 });
    expect(await direct.get('sentinel:tx')).toBe('completed');
  });

  it('works as well through ioredis with sentinels (a plain Redis client to it)', async () => {
    const client = new Redis({ sentinels: [{ host: '127.0.0.1', port: sentinelPort }], name: 'payhook' });
    try {
      const store = createRedisStore({ client, prefix: 'io-sentinel:' });
      const claim = await store.claim('tx', { leaseMs: 60_000 });
      expect(claim.status).toBe('claimed');
      expect(await direct.get('io-sentinel:tx')).toMatch(/^claimed:/);
    } finally {
      client.disconnect();
    }
  });
});
