// The PostgreSQL store against a real PostgreSQL cluster started here, through
// both drivers (pg Pool, pg Client, postgres.js). A missing server fails the run.
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresInbox, createPostgresStore } from '../../src/postgres/index.js';
import { startPostgresServer, type PostgresServer } from '../helpers/postgres-server.js';
import { storeContract } from '../dedup/contract.js';

let server: PostgresServer;
let pool: pg.Pool;
let client: pg.Client;
let sql: postgres.Sql;

beforeAll(async () => {
  server = await startPostgresServer();
  pool = new pg.Pool({ connectionString: server.url, max: 20 });
  pool.on('error', () => {});
  client = new pg.Client({ connectionString: server.url });
  await client.connect();
  sql = postgres(server.url, { max: 20, onnotice: () => {} });
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await client?.end();
  await sql?.end();
  await server?.destroy();
});

storeContract('postgres via pg Pool', () =>
  createPostgresStore({ client: pool, table: 'dedup_pool', autoMigrate: true }),
);
storeContract('postgres via pg Client', () =>
  createPostgresStore({ client, table: 'dedup_client', autoMigrate: true }),
);
storeContract('postgres via postgres.js', () =>
  createPostgresStore({ client: sql, table: 'dedup_js', autoMigrate: true }),
);

describe('createPostgresStore', () => {
  it('shares claims between the two drivers on one table (several app servers)', async () => {
    const a = createPostgresStore({ client: pool, table: 'shared', autoMigrate: true });
    const b = createPostgresStore({ client: sql, table: 'shared', autoMigrate: true });
    const claim = await a.claim('tx-1', { leaseMs: 10_000 });
    expect(claim.status).toBe('claimed');
    expect((await b.claim('tx-1', { leaseMs: 10_000 })).status).toBe('in-progress');
    if (claim.status !== 'claimed') throw new Error('unreachable');
    await a.complete('tx-1', claim.token, { retentionMs: 60_000 });
    expect((await b.claim('tx-1', { leaseMs: 10_000 })).status).toBe('completed');
  });

  it('times leases and retention by the database clock', async () => {
    const store = createPostgresStore({ client: pool, table: 'clock', autoMigrate: true });
    const claim = await store.claim('tx-clock', { leaseMs: 30_000 });
    const [lease] = (
      await pool.query(
        "SELECT extract(epoch FROM expires_at - clock_timestamp()) * 1000 AS ms FROM clock WHERE key = 'tx-clock'",
      )
    ).rows as { ms: string }[];
    expect(Number(lease!.ms)).toBeGreaterThan(25_000);
    expect(Number(lease!.ms)).toBeLessThanOrEqual(30_000);
    if (claim.status !== 'claimed') throw new Error('unreachable');
    await store.complete('tx-clock', claim.token, { retentionMs: Infinity });
    const [kept] = (await pool.query("SELECT state, expires_at::text AS until FROM clock WHERE key = 'tx-clock'"))
      .rows as { state: string; until: string }[];
    expect(kept).toEqual({ state: 'completed', until: 'infinity' });
  });

  it('creates its table by itself when asked to, and migrate() is idempotent and safe to race', async () => {
    const store = createPostgresStore({ client: sql, table: 'made_by_claim', autoMigrate: true });
    expect((await store.claim('k', { leaseMs: 1000 })).status).toBe('claimed');
    // Separate instances (as separate processes would be) racing to create the same tables.
    for (const table of ['raced', 'raced_2', 'raced_3']) {
      const racers = Array.from({ length: 10 }, (_, i) =>
        createPostgresStore({ client: i % 2 === 0 ? pool : sql, table }).migrate(),
      );
      await Promise.all(racers);
    }
    // And one instance's own concurrent first claims on a missing table.
    const fresh = createPostgresStore({ client: pool, table: 'raced_claims', autoMigrate: true });
    const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => fresh.claim(`k${i}`, { leaseMs: 1000 })));
    expect(claims.every((claim) => claim.status === 'claimed')).toBe(true);
    await createPostgresStore({ client: pool, table: 'raced' }).migrate();
    expect((await pool.query("SELECT to_regclass('raced') IS NOT NULL AS made")).rows).toEqual([{ made: true }]);
  });

  it('migrates again a table dropped after its version was recorded (a reset, a partial restore)', async () => {
    for (const [driver, db] of [
      ['pg', pool],
      ['postgres.js', sql],
    ] as const) {
      const table = `dropped_${driver === 'pg' ? 'pg' : 'js'}`;
      await createPostgresStore({ client: db, table }).migrate();
      await pool.query(`DROP TABLE ${table}`);
      // A process started now is told at once, rather than at its first claim.
      await expect(createPostgresStore({ client: db, table }).check()).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringMatching(/is not set up .*store\.migrate\(\)/),
      });
      const store = createPostgresStore({ client: db, table });
      await store.migrate();
      expect((await store.claim('k', { leaseMs: 1000 })).status).toBe('claimed');
      // autoMigrate re-creates it too.
      await pool.query(`DROP TABLE ${table}`);
      const auto = createPostgresStore({ client: db, table, autoMigrate: true });
      expect((await auto.claim('k', { leaseMs: 1000 })).status).toBe('claimed');
    }
  });

  it('exposes its DDL, which creates a working table when run by hand', async () => {
    const store = createPostgresStore({ client: pool, table: 'public.by_hand' });
    expect(store.schema).toContain('CREATE TABLE IF NOT EXISTS public.by_hand');
    await client.query(store.schema);
    await store.check();
    expect((await store.claim('k', { leaseMs: 1000 })).status).toBe('claimed');
  });

  it('prunes expired rows in bounded batches, and a pruned claim can still complete', async () => {
    const store = createPostgresStore({ client: pool, table: 'pruned', autoMigrate: true, pruneEvery: 0 });
    const tokens: string[] = [];
    for (let i = 0; i < 5; i++) {
      const claim = await store.claim(`old-${i}`, { leaseMs: 50 });
      if (claim.status === 'claimed') tokens.push(claim.token);
    }
    await store.claim('live', { leaseMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(await store.prune({ limit: 3 })).toBe(3);
    expect(await store.prune()).toBe(2);
    expect(await store.prune()).toBe(0);
    expect((await pool.query('SELECT key FROM pruned')).rows).toEqual([{ key: 'live' }]);
    await store.complete('old-0', tokens[0]!, { retentionMs: 60_000 });
    expect((await store.claim('old-0', { leaseMs: 1000 })).status).toBe('completed');
  });

  it('prunes in the background every pruneEvery claims', async () => {
    const store = createPostgresStore({ client: pool, table: 'auto_pruned', autoMigrate: true, pruneEvery: 3 });
    await store.claim('a', { leaseMs: 20 });
    await new Promise((resolve) => setTimeout(resolve, 60));
    await store.claim('b', { leaseMs: 60_000 });
    await store.claim('c', { leaseMs: 60_000 }); // the third claim starts a prune
    await expect
      .poll(async () => (await pool.query('SELECT key FROM auto_pruned ORDER BY key')).rows)
      .toEqual([{ key: 'b' }, { key: 'c' }]);
  });

  it('takes over a key whose retention has passed in the same statement', async () => {
    const store = createPostgresStore({ client: sql, table: 'reuse', autoMigrate: true, pruneEvery: 0 });
    const first = await store.claim('k', { leaseMs: 10_000 });
    if (first.status !== 'claimed') throw new Error('unreachable');
    await store.complete('k', first.token, { retentionMs: 50 });
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect((await store.claim('k', { leaseMs: 10_000 })).status).toBe('claimed');
    expect((await pool.query('SELECT count(*)::int AS n FROM reuse')).rows).toEqual([{ n: 1 }]);
  });

  it('rejects with STORE_UNAVAILABLE when PostgreSQL cannot be reached', async () => {
    const down = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres' });
    down.on('error', () => {});
    const store = createPostgresStore({ client: down });
    await expect(store.claim('tx', { leaseMs: 1000 })).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      name: 'PayhookError',
    });
    await down.end();
    const downJs = postgres('postgres://postgres@127.0.0.1:1/postgres', { connect_timeout: 2 });
    const jsStore = createPostgresStore({ client: downJs });
    await expect(jsStore.claim('tx', { leaseMs: 1000 })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(jsStore.complete('tx', 'token', { retentionMs: 1000 })).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
    });
    await expect(jsStore.release('tx', 'token')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await downJs.end();
  });

  it('refuses a client that is neither driver, and a table name that is not an identifier', () => {
    for (const bad of [{}, null, undefined, 'postgres://x']) {
      expect(() => createPostgresStore({ client: bad as never })).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
    }
    expect(() => createPostgresStore(undefined as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    for (const table of ['a;drop table x', 'a b', '"quoted"', 'a.b.c', '', '1abc']) {
      expect(() => createPostgresStore({ client: pool, table })).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
    }
    // The version table's own name: the store's rows would land in it (both the store and the inbox check).
    for (const table of ['payhook_schema', 'Payhook_Schema', 'shop.payhook_schema']) {
      expect(() => createPostgresStore({ client: pool, table })).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('payhook_schema') }),
      );
      expect(() => createPostgresInbox({ client: pool, table })).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
    }
    expect(() => createPostgresStore({ client: pool, table: 'payhook_schema_dedup' })).not.toThrow();
    for (const options of [{ pruneEvery: -1 }, { pruneLimit: 2 ** 31 }]) {
      expect(() => createPostgresStore({ client: pool, ...options })).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
    }
  });

  // PostgreSQL refuses these unquoted as a table (or schema) name with a syntax error (42601): a configuration
  // mistake, never an outage the receiver answers 503 on every retry.
  it.each(['order', 'User', 'limit', 'user.payhook_dedup'])(
    'names a reserved key word as the table (%s) as INVALID_ARGUMENT, not as an outage',
    async (table) => {
      for (const driver of [pool, sql]) {
        const store = createPostgresStore({ client: driver, table });
        await expect(store.migrate()).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
          message: expect.stringMatching(new RegExp(`table name ${table} .*reserved key word`)),
        });
        const auto = createPostgresStore({ client: driver, table, autoMigrate: true });
        await expect(auto.claim('tx-reserved', { leaseMs: 1000 })).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
        });
      }
    },
  );

  it('refuses a prune limit past a PostgreSQL int as misuse, not as an outage', async () => {
    const store = createPostgresStore({ client: pool, table: 'prune_bound' });
    await store.migrate();
    expect(await store.prune({ limit: 2 ** 31 - 1 })).toBe(0);
    await expect(store.prune({ limit: 2 ** 31 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('2147483647'),
    });
  });
});
