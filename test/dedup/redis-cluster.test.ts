// The Redis store on a real three-node Redis Cluster started here on loopback
// (redis-server --cluster-enabled, joined by redis-cli --cluster create),
// through ioredis's Cluster and node-redis's createCluster.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/redis/index.js';
import { freePort } from '../helpers/redis-server.js';

const nodes: ChildProcess[] = [];
let ports: number[] = [];

beforeAll(async () => {
  const dir = mkdtempSync(`${tmpdir()}/payhook-redis-cluster-`);
  ports = [await freePort(), await freePort(), await freePort()];
  for (const port of ports) {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    args.push('--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--dir', dir);
    nodes.push(spawn(process.env.REDIS_SERVER ?? 'redis-server', args, { stdio: 'ignore' }));
  }
  const cli = (...args: string[]) => execFileSync('redis-cli', args, { encoding: 'utf8', stdio: 'pipe' });
  const ping = (port: number) => {
    try {
      return cli('-p', String(port), 'PING').trim() === 'PONG';
    } catch {
      return false;
    }
  };
  for (let i = 0; i < 100 && !ports.every(ping); i++) await new Promise((r) => setTimeout(r, 50));
  cli('--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-yes');
  const ok = () => ports.every((port) => cli('-p', String(port), 'CLUSTER', 'INFO').includes('cluster_state:ok'));
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
}, 30_000);

afterAll(() => {
  for (const node of nodes) node.kill('SIGKILL');
});

// Keys that hash to different slots, so they land on different nodes.
const KEYS = ['a_DEBIT:SUCCEEDED', 'b_DEBIT:SUCCEEDED', 'zz_CREDIT:FAILED', 'id\uD800'];

async function claimCompleteRelease(store: ReturnType<typeof createRedisStore>): Promise<void> {
  for (const key of KEYS) {
    const claim = await store.claim(key, { leaseMs: 10_000 });
    expect(claim.status, key).toBe('claimed');
    expect((await store.claim(key, { leaseMs: 10_000 })).status, key).toBe('in-progress');
    if (claim.status !== 'claimed') throw new Error('unreachable');
    await store.complete(key, claim.token, { retentionMs: 60_000 });
    expect((await store.claim(key, { leaseMs: 10_000 })).status, key).toBe('completed');
  }
  const held = await store.claim('released', { leaseMs: 10_000 });
  if (held.status !== 'claimed') throw new Error(held.status);
  await store.release('released', held.token);
  expect((await store.claim('released', { leaseMs: 10_000 })).status).toBe('claimed');
}

describe('createRedisStore on a Redis Cluster', () => {
  it('claims, completes and releases through ioredis Cluster', async () => {
    const client = new Cluster([{ host: '127.0.0.1', port: ports[0]! }]);
    try {
      await claimCompleteRelease(createRedisStore({ client, prefix: 'io:' }));
    } finally {
      client.disconnect();
    }
  });

  it('claims, completes and releases through node-redis createCluster', async () => {
    const client = createCluster({ rootNodes: [{ url: `redis://127.0.0.1:${ports[0]}` }] });
    client.on('error', () => {});
    await client.connect();
    try {
      await claimCompleteRelease(createRedisStore({ client, prefix: 'nr:' }));
    } finally {
      await client.close();
    }
  });

  it('refuses a plain client to one node as misconfigured (MOVED or ASK), not as an outage retried for ever', async () => {
    const io = new Redis(ports[0]!, '127.0.0.1');
    const nr = createClient({ url: `redis://127.0.0.1:${ports[0]}` });
    nr.on('error', () => {});
    await nr.connect();
    try {
      for (const [name, client] of [['ioredis', io] as const, ['node-redis', nr] as const]) {
        const store = createRedisStore({ client, prefix: `plain-${name}:` });
        const failures = [];
        for (const key of KEYS)
          failures.push(await store.claim(key, { leaseMs: 10_000 }).catch((error: unknown) => error));
        // Some keys live on the node the client reached, the others (or the first claim's check key) answer MOVED.
        expect(failures.filter((failure) => failure instanceof Error).length, name).toBeGreaterThan(0);
        for (const failure of failures.filter((failure) => failure instanceof Error)) {
          expect(failure, name).toMatchObject({
            code: 'INVALID_ARGUMENT',
            message: expect.stringMatching(
              /^Redis refused (?:EVAL|SET NX PX): MOVED \d+ 127\.0\.0\.1:\d+\..*createCluster/,
            ),
          });
        }
      }
    } finally {
      io.disconnect();
      await nr.close();
    }
    // ASK (a slot being migrated) says the same: this is a cluster.
    const asking = createRedisStore({
      client: {
        sendCommand: (args) =>
          args[0] === 'SET' ? Promise.reject(new Error('ASK 3999 127.0.0.1:6381')) : Promise.resolve(1),
      },
    });
    await expect(asking.claim('tx', { leaseMs: 1000 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('Cluster'),
    });
  });
});
