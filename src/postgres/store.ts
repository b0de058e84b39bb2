/**
 * The PostgreSQL {@link DedupStore}: claims, completions and releases as
 * single SQL statements, timed by the database clock.
 *
 * @module
 */
import type { ClaimOptions, ClaimResult, CompleteOptions, DedupStore } from '../dedup/store.js';
import { checkKey, checkLease, checkRetention, checkToken, newClaimToken } from '../dedup/token.js';
import { misuse } from '../lib/misuse.js';
import { runnerFor } from './client.js';
import type { PostgresClientLike, Runner } from './driver.js';
import { fault } from './faults.js';
import { asText, checkTable, intOption } from './values.js';
import { schemaFor, tableFix } from './schema.js';
import { storeSql, storeSteps } from './sql.js';

/**
 * Options of {@link createPostgresStore}.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import type { PostgresStoreOptions } from 'payhook/postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const options: PostgresStoreOptions = { client: pool, table: 'shop.payhook_dedup' };
 * ```
 */
export interface PostgresStoreOptions {
  /**
   * A `pg` Pool or Client, or a postgres.js `sql` (see {@link PostgresClientLike}).
   * Prefer a Pool: a single Client sends one statement at a time, and `pg`
   * deprecates queueing concurrent queries on it.
   */
  client: PostgresClientLike;
  /**
   * The table, `name` or `schema.name` (a plain identifier: letters, digits, `_`).
   * Not a reserved key word of PostgreSQL (`order`, `user`, `limit`…), which
   * cannot name a table unquoted: `migrate()` refuses one with `INVALID_ARGUMENT`.
   * Not `payhook_schema`, where payhook records its tables' schema versions.
   * Spell it the same way everywhere: letter case does not matter, but
   * `payhook_dedup` and `public.payhook_dedup` (one table to PostgreSQL) are
   * two records of its schema version to payhook, and `migrate()` under the
   * other spelling runs the steps again and adds a second index.
   * Keep it to 52 characters or fewer: payhook names the table's index and
   * constraint after it (`schema_name_…`), and PostgreSQL cuts names past 63
   * bytes, so two longer names that begin alike would share them.
   * @defaultValue `'payhook_dedup'`
   */
  table?: string;
  /**
   * After how many claims the store deletes a batch of expired rows (up to
   * `pruneLimit`, in the background, skipping rows another session holds).
   * `0` turns it off: call {@link PostgresStore.prune} yourself then.
   * @defaultValue `1000`
   */
  pruneEvery?: number;
  /**
   * The most expired rows one background prune deletes.
   * @defaultValue `1000`
   */
  pruneLimit?: number;
  /**
   * Create or upgrade the table from inside the first statement that needs
   * it (a webhook request). Off by default: run {@link PostgresStore.migrate}
   * at deploy instead, and the store's first statement fails with
   * `INVALID_ARGUMENT` naming that fix when the table is missing or behind.
   * Not with a single `pg` Client shared by several stores: see
   * {@link PostgresStore.migrate}.
   * @defaultValue `false`
   */
  autoMigrate?: boolean;
}

/**
 * A {@link DedupStore} on PostgreSQL, with its table's DDL and maintenance.
 *
 * @example
 * ```ts
 * import type { PostgresStore } from 'payhook/postgres';
 *
 * declare const store: PostgresStore;
 * await store.migrate();
 * console.log(await store.prune({ limit: 10_000 }), 'expired rows deleted');
 * ```
 */
export interface PostgresStore extends DedupStore {
  /** The DDL of the store's table and its schema version record, to copy into your own migrations. */
  readonly schema: string;
  /**
   * Brings the table to the schema version this payhook needs: applies the
   * missing steps in one transaction under an advisory lock and records the
   * version in `payhook_schema` (beside the table). Safe to repeat and to run
   * from many processes at once. On a single `pg` Client (not a Pool) the
   * transaction is the Client's one connection, which every other user of the
   * Client shares: run it before the Client serves deliveries, as a claim sent
   * meanwhile would join the migration's transaction and be undone with it.
   */
  migrate(): Promise<void>;
  /**
   * Resolves when the table is at the schema version this payhook needs;
   * rejects with `INVALID_ARGUMENT` naming the fix when it is missing or
   * behind (or `STORE_UNAVAILABLE` when PostgreSQL cannot be reached). Await
   * it at start-up to fail fast; the store also checks once by itself.
   */
  check(): Promise<void>;
  /**
   * Deletes up to `limit` rows (default: the store's `pruneLimit`, 1 000)
   * whose lease or retention has passed, skipping rows another session has
   * locked; resolves how many it deleted.
   */
  prune(options?: { limit?: number }): Promise<number>;
}

// Past about 1000 years a timestamp leaves PostgreSQL's range; no lease or retention needs more.
const MAX_MS = 1000 * 365.25 * 86_400_000;

/** Milliseconds as the SQL parameter (`null` for Infinity, which the SQL maps to `'infinity'`). */
function msParam(ms: number): string | null {
  return ms === Infinity ? null : String(Math.min(Math.ceil(ms), MAX_MS));
}

/**
 * Creates a PostgreSQL {@link DedupStore}: the deduplication record lives in
 * the database your orders live in, shared by every app server.
 *
 * - `claim`: one `INSERT … ON CONFLICT (key) DO UPDATE … WHERE expires_at <=
 *   clock_timestamp() RETURNING token` — the row is taken when it is new or
 *   its lease (or retention) has passed, atomically under concurrency. When
 *   no row comes back, one `SELECT` tells a running claim from a completed
 *   delivery.
 * - `complete`: one `UPDATE` of the caller's own claim; only when that claim
 *   is gone (pruned after its lease passed) a second statement records the
 *   completion anyway. `release`: one statement acting on the caller's own
 *   token, as the contract requires.
 * - Leases and retention are measured by the database clock
 *   (`clock_timestamp()`), so app servers with skewed clocks agree.
 * - Keys are stored as they are, except one holding a NUL or a lone
 *   surrogate (which PostgreSQL text cannot hold), stored as its JSON literal.
 * - Expired rows are reused by the next claim of their key; the rest are
 *   deleted in bounded background batches every `pruneEvery` claims, or by
 *   {@link PostgresStore.prune}. Neither blocks a delivery.
 *
 * The table (`schema` holds the DDL) is versioned: run `migrate()` at deploy
 * (or set `autoMigrate`); the store checks the version once, before its first
 * statement, and `check()` does it at start-up. `client` is a `pg` Pool or
 * Client, or a postgres.js `sql` — neither is a payhook dependency; hosted
 * PostgreSQL (Neon, Supabase, Vercel Postgres) works through them. A failing
 * statement rejects with `STORE_UNAVAILABLE`, so the handler answers 503 and
 * the service retries; a missing table or privilege, or a key PostgreSQL
 * cannot hold (another encoding, too long for an index), rejects with
 * `INVALID_ARGUMENT` naming the fix. With `pg`, add a `pool.on('error', …)`
 * listener: an idle connection that breaks otherwise crashes the process.
 * With postgres.js, pass `fetch_types: false`: payhook needs no array types,
 * and a connection dropped while postgres.js fetches them ends the process
 * with an unhandled rejection (payhook turns the fetch off by itself once one
 * of its statements has succeeded).
 *
 * @throws PayhookError `INVALID_ARGUMENT` when `client` is neither
 * driver or `table` is not a plain identifier.
 *
 * @example
 * ```ts
 * // pg (node-postgres)
 * import pg from 'pg';
 * import { createPostgresStore } from 'payhook/postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * pool.on('error', (error) => console.error('idle PostgreSQL connection failed', error));
 * const store = createPostgresStore({ client: pool });
 * await store.migrate(); // at deploy; in the receiver: await store.check()
 * ```
 *
 * @example
 * ```ts
 * // postgres.js
 * import postgres from 'postgres';
 * import { createPostgresStore } from 'payhook/postgres';
 *
 * const sql = postgres(process.env.DATABASE_URL!, { fetch_types: false });
 * const store = createPostgresStore({ client: sql, table: 'shop.payhook_dedup' });
 * await store.check();
 * ```
 */
export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  if (typeof options !== 'object' || options === null) {
    throw misuse('createPostgresStore needs { client }: a pg Pool or Client, or a postgres.js sql instance.');
  }
  const run: Runner = runnerFor(options.client, 'createPostgresStore');
  const table = checkTable(options.table ?? 'payhook_dedup', 'createPostgresStore');
  const pruneEvery = intOption(options.pruneEvery, 'pruneEvery', 1000, 0);
  const pruneLimit = intOption(options.pruneLimit, 'pruneLimit', 1000, 0);
  const schema = schemaFor({
    kind: 'store',
    client: options.client,
    table,
    caller: 'createPostgresStore',
    steps: storeSteps(table),
    autoMigrate: options.autoMigrate === true,
  });
  const sql = storeSql(table);
  const fix = tableFix('store');

  /** Runs one statement after the schema check, every driver error turned into the store's coded failure. */
  async function statement(what: string, text: string, values: readonly unknown[]) {
    if (!schema.checked) await schema.ready();
    try {
      return await run(text, values);
    } catch (error) {
      throw fault(what, error, fix);
    }
  }

  async function prune(pruneOptions?: { limit?: number }): Promise<number> {
    const limit = intOption(pruneOptions?.limit, 'limit', pruneLimit, 0);
    return (await statement('prune', sql.prune, [String(limit)])).length;
  }

  let claims = 0;
  function maybePrune(): void {
    if (pruneEvery === 0 || ++claims % pruneEvery !== 0) return;
    // In the background: a failed prune only means the next one has more to do.
    prune().catch(() => {});
  }

  return {
    schema: schema.ddl,
    migrate: schema.migrate,
    check: schema.ready,
    prune,
    async claim(key: string, claimOptions: ClaimOptions): Promise<ClaimResult> {
      checkKey(key);
      checkLease(claimOptions?.leaseMs);
      const token = newClaimToken();
      const lease = msParam(claimOptions.leaseMs);
      maybePrune();
      // A row can expire, be released or be pruned between the two statements: look again, a few times.
      for (let attempt = 0; attempt < 3; attempt++) {
        const taken = await statement('claim', sql.claim, [asText(key), token, lease]);
        if (taken.length > 0) return { status: 'claimed', token };
        const [row] = await statement('claim', sql.state, [asText(key)]);
        if (row !== undefined && row['live'] === true) {
          return { status: row['state'] === 'completed' ? 'completed' : 'in-progress' };
        }
      }
      // Still changing hands: someone else is busy with it. 409 makes the service retry.
      return { status: 'in-progress' };
    },
    async complete(key: string, token: string, completeOptions: CompleteOptions): Promise<void> {
      checkKey(key);
      checkToken(token);
      checkRetention(completeOptions?.retentionMs);
      const values = [asText(key), token, msParam(completeOptions.retentionMs)];
      const updated = await statement('complete', sql.complete, values);
      // Nothing updated: the claim is gone (pruned after its lease passed), or another claim holds the key.
      if (updated.length === 0) await statement('complete', sql.completeGone, values);
    },
    async release(key: string, token: string): Promise<void> {
      checkKey(key);
      checkToken(token);
      await statement('release', sql.release, [asText(key), token]);
    },
  };
}
