// The Redis store against a real redis-server started here, through both
// clients. A missing redis-server fails the run.
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { createClient, RESP_TYPES } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/redis/index.js';
import { expectDistinctKeys } from '../helpers/distinct-keys.js';
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

  it('keeps distinct keys distinct, lone surrogates and NUL included, through both clients', async () => {
    await expectDistinctKeys(createRedisStore({ client: ioredis, prefix: 'distinct-io:' }), 100);
    await expectDistinctKeys(createRedisStore({ client: nodeRedis, prefix: 'distinct-nr:' }), 100);
  });

  it('refuses a Redis that runs no scripts as misconfigured at the first claim, through both clients', async () => {
    await ioredis.call('ACL', 'SETUSER', 'noscripts', 'on', '>pw', '~*', '+@all', '-@scripting');
    const io = new Redis(server.port, '127.0.0.1', { username: 'noscripts', password: 'pw', lazyConnect: true });
    await io.connect();
    const nr = createClient({ url: `redis://noscripts:pw@127.0.0.1:${server.port}` });
    await nr.connect();
    try {
      for (const [name, client] of [['ioredis', io] as const, ['node-redis', nr] as const]) {
        const store = createRedisStore({ client, prefix: `noscripts-${name}:` });
        // Claiming would work (SET, GET), but no completion could ever be recorded.
        await expect(store.claim('tx', { leaseMs: 60_000 }), name).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
          message: expect.stringMatching(/^Redis refused EVAL: NOPERM .*\+@scripting/),
        });
        expect(await ioredis.exists(`noscripts-${name}:tx`), name).toBe(0);
        await expect(store.complete('tx', 'token', { retentionMs: 1000 }), name).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
        });
      }
    } finally {
      io.disconnect();
      await nr.close();
    }
    const noEval = createRedisStore({
      client: {
        sendCommand: () => Promise.reject(new Error("ERR unknown command 'EVAL', with args beginning with: ")),
      },
    });
    await expect(noEval.claim('tx', { leaseMs: 1000 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  // The refusal of a command inside a script, as each server words it (7.0's is met for real in the next test).
  it.each([
    [
      'Redis 6',
      "ERR Error running script (call to f_0123): @user_script:2: @user_script: 2: The user executing the script can't run this command or subcommand",
    ],
    [
      'Redis 7.0',
      "ERR The user executing the script can't access at least one of the keys mentioned in the command script: 1",
    ],
    [
      'Redis 7.2, Valkey',
      "ERR ACL failure in script: User nodel has no permissions to run the 'del' command script: 2, on @user_script:2.",
    ],
  ])('reads a script command refused by the ACL (%s) as misconfigured at the first claim', async (_, reply) => {
    const store = createRedisStore({
      client: {
        sendCommand: (args) => (args[0] === 'EVAL' ? Promise.reject(new Error(reply)) : Promise.resolve('OK')),
      },
    });
    await expect(store.claim('tx', { leaseMs: 1000 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it("names the key pattern as a cause when the user's ACL does not cover the prefix", async () => {
    await ioredis.call('ACL', 'SETUSER', 'shoponly', 'on', '>pw', '~shop:*', '+@all');
    const client = new Redis(server.port, '127.0.0.1', { username: 'shoponly', password: 'pw', lazyConnect: true });
    await client.connect();
    try {
      // Scripts run, but payhook:* is not the user's: the first claim's check, on a key under the prefix, says so.
      await expect(createRedisStore({ client }).claim('tx', { leaseMs: 60_000 })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringMatching(/^Redis refused EVAL: NOPERM .*~payhook:\*.*prefix/),
      });
      // As the message says: a prefix the key pattern allows.
      expect((await createRedisStore({ client, prefix: 'shop:' }).claim('tx', { leaseMs: 60_000 })).status).toBe(
        'claimed',
      );
    } finally {
      client.disconnect();
    }
  });

  it('advises a key pattern that matches a prefix holding glob characters', async () => {
    const prefix = 'shop[1]*?:';
    await ioredis.call('ACL', 'SETUSER', 'globby', 'on', '>pw', '~other:*', '+@all');
    const client = new Redis(server.port, '127.0.0.1', { username: 'globby', password: 'pw', lazyConnect: true });
    await client.connect();
    try {
      const refusal = await createRedisStore({ client, prefix })
        .claim('tx', { leaseMs: 60_000 })
        .then(
          () => undefined,
          (error: unknown) => error as Error,
        );
      const pattern = /ACL \+@scripting (\S+),/.exec(refusal?.message ?? '')?.[1];
      expect(pattern).toBe('~shop\\[1\\]\\*\\?:*');
      // Granted as advised, the store works: the pattern matches the prefix's own keys.
      await ioredis.call('ACL', 'SETUSER', 'globby', 'resetkeys', pattern ?? '');
      expect((await createRedisStore({ client, prefix }).claim('tx', { leaseMs: 60_000 })).status).toBe('claimed');
    } finally {
      client.disconnect();
    }
  });

  // A script's own commands are checked only when it calls them: release's DEL runs only for a held claim.
  it('refuses a user who may not DEL at the first claim, not at the first release after onPayment threw', async () => {
    await ioredis.call('ACL', 'SETUSER', 'nodel', 'on', '>pw', '~payhook:*', '+get', '+set', '+eval');
    const client = new Redis(server.port, '127.0.0.1', { username: 'nodel', password: 'pw', lazyConnect: true });
    await client.connect();
    try {
      await expect(createRedisStore({ client }).claim('nodel-tx', { leaseMs: 60_000 })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringMatching(/^Redis refused EVAL: .*GET, SET, DEL and EVAL/),
      });
      expect(await ioredis.exists('payhook:nodel-tx')).toBe(0);
    } finally {
      client.disconnect();
    }
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

  // A full Redis (noeviction, the policy the docs ask for) refuses a script's SET unless the script may run there:
  // a completion refused would be forgotten when the lease ends, and a retried copy handled a second time.
  it('records a completion even when Redis is at its maxmemory, through both clients', async () => {
    for (const [name, client] of [['ioredis', ioredis] as const, ['node-redis', nodeRedis] as const]) {
      const store = createRedisStore({ client, prefix: `full-${name}:` });
      const claim = await store.claim('tx', { leaseMs: 30_000 });
      if (claim.status !== 'claimed') throw new Error('unreachable');
      await ioredis.config('SET', 'maxmemory-policy', 'noeviction');
      await ioredis.config('SET', 'maxmemory', '1');
      try {
        // Full indeed: a write that may grow memory is refused, and a new claim with it.
        await expect(store.claim('other', { leaseMs: 30_000 }), name).rejects.toMatchObject({
          code: 'STORE_UNAVAILABLE',
          message: expect.stringContaining('OOM'),
        });
        await store.complete('tx', claim.token, { retentionMs: 60_000 });
      } finally {
        await ioredis.config('SET', 'maxmemory', '0');
      }
      expect(await ioredis.get(`full-${name}:tx`), name).toBe('completed');
      expect((await store.claim('tx', { leaseMs: 30_000 })).status, name).toBe('completed');
    }
  });

  it.each([
    ["ERR Error compiling script (new function): user_script:1: unexpected symbol near '#'"], // Redis 6, KeyDB
    ["ERR user_script:2: unexpected symbol near '#'"], // Dragonfly (Lua 5.4, no #!lua line read)
    ["ERR Unknown flag 'allow-oom'"], // any other wording
  ])('sends scripts without their flag line to a server that cannot compile one: %s', async (refusal) => {
    const sent: string[] = [];
    const redis6 = {
      sendCommand(args: string[]): Promise<unknown> {
        if (args[0] === 'EVAL') sent.push(args[1]!);
        return args[1]?.startsWith('#!') ? Promise.reject(new Error(refusal)) : nodeRedis.sendCommand(args);
      },
    };
    const prefix = `redis6-${refusal.length}:`;
    const store = createRedisStore({ client: redis6, prefix });
    const claim = await store.claim('tx', { leaseMs: 30_000 });
    if (claim.status !== 'claimed') throw new Error('unreachable');
    await store.complete('tx', claim.token, { retentionMs: 60_000 });
    expect(await ioredis.get(`${prefix}tx`)).toBe('completed');
    // The check with the flag line, without it, with it again (refused again: the flag line); the completion without.
    expect(sent.map((script) => script.startsWith('#!'))).toEqual([true, false, true, false]);
  });

  // A connection lost during the check, or a proxy's passing error, says nothing of the flag line: the store would
  // have sent the plain completion for good, which a full Redis 7 refuses.
  it.each([
    ['Socket closed unexpectedly', false],
    ['ERR upstream connect error or disconnect/reset before headers', true],
  ])('keeps the flagged completion when the check failed once otherwise: %s', async (failure, errorReply) => {
    const sent: string[] = [];
    let drop = true;
    const client = {
      sendCommand(args: string[]): Promise<unknown> {
        if (args[0] === 'EVAL') sent.push(args[1]!.split('\n')[0]!);
        if (drop && args[0] === 'EVAL') {
          drop = false;
          return Promise.reject(new Error(failure));
        }
        return nodeRedis.sendCommand(args);
      },
    };
    const store = createRedisStore({ client, prefix: `dropped-check-${failure.length}:` });
    // No answer: the claim fails, and the next checks again. An error reply: the plain check, then the flagged
    // one again, which passes.
    if (!errorReply) {
      await expect(store.claim('tx', { leaseMs: 30_000 })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    }
    const claim = await store.claim('tx', { leaseMs: 30_000 });
    if (claim.status !== 'claimed') throw new Error('unreachable');
    await store.complete('tx', claim.token, { retentionMs: 60_000 });
    const flag = '#!lua flags=allow-oom';
    expect(sent).toEqual(errorReply ? [flag, "redis.call('GET', KEYS[1])", flag, flag] : [flag, flag, flag]);
  });

  it('sends the completion flagged to a server that compiles the flag line', async () => {
    const sent: string[] = [];
    const flagged = createRedisStore({
      client: { sendCommand: (args: string[]) => (sent.push(args[1]!), nodeRedis.sendCommand(args)) },
      prefix: 'redis7:',
    });
    const second = await flagged.claim('tx', { leaseMs: 30_000 });
    if (second.status !== 'claimed') throw new Error('unreachable');
    await flagged.complete('tx', second.token, { retentionMs: 60_000 });
    expect(sent.filter((arg) => arg.includes('redis.call')).map((script) => script.split('\n')[0])).toEqual([
      '#!lua flags=allow-oom',
      '#!lua flags=allow-oom',
    ]);
  });

  it('uses the default prefix payhook:', async () => {
    const store = createRedisStore({ client: ioredis });
    await store.claim('default-prefix', { leaseMs: 10_000 });
    expect(await ioredis.exists('payhook:default-prefix')).toBe(1);
  });

  // Another application's key under the prefix stays there whatever the retries: misconfiguration, not an outage.
  it.each([
    ['a string', (key: string) => ioredis.set(key, 'something else')],
    ['a hash', (key: string) => ioredis.hset(key, 'field', 'value')],
  ])('refuses a key holding %s it did not write, naming it, rather than treating it as free', async (_, write) => {
    for (const [name, client] of [['ioredis', ioredis] as const, ['node-redis', nodeRedis] as const]) {
      const prefix = `foreign-${name}:`;
      await write(`${prefix}tx`);
      await expect(createRedisStore({ client, prefix }).claim('tx', { leaseMs: 1000 }), name).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: `The Redis key "${prefix}tx" holds a value payhook did not write; is the prefix shared? Give payhook a prefix of its own.`,
      });
      await ioredis.del(`${prefix}tx`);
    }
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
    // A client error whose message is no text is still a STORE_UNAVAILABLE (it was a TypeError building the message).
    const odd = Object.defineProperty(new Error('x'), 'message', { value: Symbol('lost') });
    const oddClient = createRedisStore({ client: { sendCommand: () => Promise.reject(odd) } });
    await expect(oddClient.claim('tx', { leaseMs: 1000 })).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: 'Redis EVAL failed: Symbol(lost)', // the first claim's script check
    });
  });

  it('says to connect a client that is closed (never connected, or quit), through both clients', async () => {
    const io = new Redis(server.port, '127.0.0.1', { lazyConnect: true });
    await io.connect();
    await io.quit();
    const nr = createClient({ url: server.url }); // never connected
    for (const [name, client] of [['ioredis', io] as const, ['node-redis', nr] as const]) {
      await expect(createRedisStore({ client }).claim('tx', { leaseMs: 1000 }), name).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
        message: expect.stringMatching(
          /^Redis EVAL failed: (The client is closed|Connection is closed\.) \(connect the client before the first delivery, and keep it open while the handler runs\)$/,
        ),
      });
    }
  });

  it('refuses something that is not a Redis client', () => {
    expect(() => createRedisStore({ client: {} as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    expect(() => createRedisStore(undefined as never)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });

  it('reads replies a client hands back as Buffers (node-redis typeMapping) as text', async () => {
    const client = createClient({
      url: server.url,
      commandOptions: { typeMapping: { [RESP_TYPES.BLOB_STRING]: Buffer } },
    });
    await client.connect();
    try {
      const store = createRedisStore({ client, prefix: 'buffers:' });
      const claim = await store.claim('done', { leaseMs: 10_000 });
      if (claim.status !== 'claimed') throw new Error(claim.status);
      expect(await store.claim('done', { leaseMs: 10_000 })).toEqual({ status: 'in-progress' });
      await store.complete('done', claim.token, { retentionMs: 60_000 });
      // Without decoding, Buffer('completed') read as a foreign value: every redelivery a 503, for ever.
      expect(await store.claim('done', { leaseMs: 10_000 })).toEqual({ status: 'completed' });
    } finally {
      await client.close();
    }
  });

  it('refuses a client that does not resolve replies (node-redis legacy mode) instead of answering in-progress', async () => {
    const store = createRedisStore({ client: nodeRedis.legacy() as never, prefix: 'legacy:' });
    await expect(store.claim('tx', { leaseMs: 10_000 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('legacy mode'),
    });
  });

  it('does not blame legacy mode for a reply that is no text (legacy mode resolves undefined)', async () => {
    const store = createRedisStore({ client: { sendCommand: () => Promise.resolve(1) } });
    const error: unknown = await store.claim('tx', { leaseMs: 10_000 }).catch((failure: unknown) => failure);
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('resolved a number') });
    expect((error as Error).message).not.toContain('legacy');
  });

  describe('a claim whose SET reply is lost', () => {
    let proxy: Server;
    // The command whose connection is dropped next: after it reached Redis, or before (not forwarded).
    let dropNext: { command: string; forward: boolean } | undefined;
    const sockets: Socket[] = [];
    beforeAll(async () => {
      // Forwards to the server; drops the connection at the marked command, before its reply.
      proxy = createServer((client) => {
        const upstream = createConnection({ port: server.port, host: '127.0.0.1' });
        sockets.push(client, upstream);
        let dropping = false;
        client.on('data', (chunk) => {
          const drop = dropNext !== undefined && chunk.toString().includes(`\r\n${dropNext.command}\r\n`);
          if (!drop || dropNext?.forward === true) upstream.write(chunk);
          if (drop) {
            dropNext = undefined;
            dropping = true;
            setTimeout(() => (client.destroy(), upstream.destroy()), 50);
          }
        });
        upstream.on('data', (chunk) => dropping || client.write(chunk));
        for (const socket of [client, upstream]) socket.on('error', () => {});
        client.on('close', () => upstream.destroy());
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    });
    /** A node-redis client connected through the proxy, reconnecting at once when it drops the connection. */
    async function nodeRedisThroughProxy() {
      const { port } = proxy.address() as { port: number };
      const client = createClient({ url: `redis://127.0.0.1:${port}`, socket: { reconnectStrategy: () => 20 } });
      client.on('error', () => {});
      await client.connect();
      return client;
    }
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    });

    it('still belongs to its caller (not in-progress, held by nobody for a lease)', async () => {
      const { port } = proxy.address() as { port: number };
      const client = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => 20 });
      client.on('error', () => {});
      await client.connect();
      try {
        const store = createRedisStore({ client, prefix: 'resent:' });
        dropNext = { command: 'SET', forward: true };
        const claim = await store.claim('tx', { leaseMs: 60_000 });
        expect(claim).toEqual({ status: 'claimed', token: expect.any(String) });
        expect(await ioredis.get('resent:tx')).toBe(`claimed:${(claim as { token: string }).token}`);
      } finally {
        client.disconnect();
      }
    });

    it('is released once node-redis, which rejects it, is connected again (not held for a lease)', async () => {
      const client = await nodeRedisThroughProxy();
      try {
        const store = createRedisStore({ client, prefix: 'lost:' });
        dropNext = { command: 'SET', forward: true };
        await expect(store.claim('tx', { leaseMs: 60_000 })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
        // The SET reached Redis: without a release the key would hold the delivery for the whole lease.
        await expect.poll(() => ioredis.get('lost:tx'), { timeout: 5_000, interval: 20 }).toBeNull();
        expect((await store.claim('tx', { leaseMs: 60_000 })).status).toBe('claimed');
      } finally {
        await client.close();
      }
    });

    it('is released when a release fails in flight, once the client is connected again', async () => {
      const client = await nodeRedisThroughProxy();
      try {
        const store = createRedisStore({ client, prefix: 'unreleased:' });
        const claim = await store.claim('tx', { leaseMs: 60_000 });
        if (claim.status !== 'claimed') throw new Error(claim.status);
        dropNext = { command: 'EVAL', forward: false };
        await expect(store.release('tx', claim.token)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
        await expect.poll(() => ioredis.get('unreleased:tx'), { timeout: 5_000, interval: 20 }).toBeNull();
      } finally {
        await client.close();
      }
    });
  });
});
