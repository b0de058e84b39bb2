/**
 * The PostgreSQL {@link DedupStore}: claims, completions and releases as
 * single SQL statements, timed by the database clock.
 *
 * @module
 */
import type { ClaimOptions, ClaimResult, CompleteOptions, DedupStore } from '../dedup/store.js';
import { checkKey, checkLease, checkRetention, checkToken, newClaimToken } from '../dedup/token.js';
import { misuse } from '../lib/misuse.js';
import {
  asText,
  checkTable,
  migration,
  runnerFor,
  withTable,
  unavailable,
  type PostgresClientLike,
  type Row,
  type Run,
} from './client.js';

/**
 * Options of {@link createPostgresStore}.
 *
 * @example
 * ```ts
 * import type { PostgresStoreOptions } from 'payhook/postgres';
 *
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
  /** The DDL of the store's table, to copy into your own migrations. */
  readonly schema: string;
  /**
   * Creates the table and its index if they do not exist (safe to repeat and
   * to run from several processes). The store also does this by itself the
   * first time it finds the table missing.
   */
  migrate(): Promise<void>;
  /**
   * Deletes up to `limit` rows whose lease or retention has passed, skipping
   * rows another session has locked; resolves how many it deleted.
   */
  prune(options?: { limit?: number }): Promise<number>;
}

// Past about 1000 years a timestamp leaves PostgreSQL's range; no lease or retention needs more.
const MAX_MS = 1000 * 365.25 * 86_400_000;

function storeDdl(table: string): string[] {
  const index = `${table.replace('.', '_')}_expires_at`;
  return [
    `CREATE TABLE IF NOT EXISTS ${table} (
  key text PRIMARY KEY,
  state text NOT NULL CHECK (state IN ('claimed', 'completed')),
  token text,
  expires_at timestamptz NOT NULL
)`,
    `CREATE INDEX IF NOT EXISTS ${index} ON ${table} (expires_at)`,
  ];
}

/** Milliseconds as the SQL parameter (`null` for Infinity, which the SQL maps to `'infinity'`). */
function duration(ms: number): string | null {
  return ms === Infinity ? null : String(Math.min(Math.ceil(ms), MAX_MS));
}

function count(value: unknown, name: string, fallback: number): number {
  const n = value ?? fallback;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
    throw misuse(`${name} must be a whole number of 0 or more, not ${String(value)}.`);
  }
  return n;
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
 * - `complete` and `release`: one statement each, acting only on the caller's
 *   own token (complete also when the row was pruned meanwhile), as the
 *   contract requires.
 * - Leases and retention are measured by the database clock
 *   (`clock_timestamp()`), so app servers with skewed clocks agree.
 * - Keys are stored as they are, except one holding a NUL or a lone
 *   surrogate (which PostgreSQL text cannot hold), stored as its JSON literal.
 * - Expired rows are reused by the next claim of their key; the rest are
 *   deleted in bounded background batches every `pruneEvery` claims, or by
 *   {@link PostgresStore.prune}. Neither blocks a delivery.
 *
 * The table (`schema` holds the DDL) is created by `migrate()`, or by the
 * store itself the first time a statement finds it missing. `client` is a `pg`
 * Pool or Client, or a postgres.js `sql` — neither is a payhook dependency;
 * hosted PostgreSQL (Neon, Supabase, Vercel Postgres) works through them. A
 * failing statement rejects with `STORE_UNAVAILABLE`, so the handler answers
 * 503 and the service retries. With `pg`, add a `pool.on('error', …)`
 * listener: an idle connection that breaks otherwise crashes the process.
 *
 * @throws {@link PayhookError} `INVALID_ARGUMENT` when `client` is neither
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
 * await store.migrate();
 * ```
 *
 * @example
 * ```ts
 * // postgres.js
 * import postgres from 'postgres';
 * import { createPostgresStore } from 'payhook/postgres';
 *
 * const store = createPostgresStore({ client: postgres(process.env.DATABASE_URL!), table: 'shop.payhook_dedup' });
 * ```
 */
export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  if (typeof options !== 'object' || options === null) {
    throw misuse('createPostgresStore needs { client }: a pg Pool or Client, or a postgres.js sql instance.');
  }
  const run: Run = runnerFor(options.client, 'createPostgresStore');
  const table = checkTable(options.table ?? 'payhook_dedup', 'createPostgresStore');
  const pruneEvery = count(options.pruneEvery, 'pruneEvery', 1000);
  const pruneLimit = count(options.pruneLimit, 'pruneLimit', 1000);
  const ddl = storeDdl(table);
  const migrate = migration(run, ddl);

  const claimSql = `INSERT INTO ${table} AS t (key, state, token, expires_at)
VALUES ($1::text, 'claimed', $2::text, clock_timestamp() + $3::float8 * interval '1 millisecond')
ON CONFLICT (key) DO UPDATE SET state = 'claimed', token = excluded.token, expires_at = excluded.expires_at
WHERE t.expires_at <= clock_timestamp()
RETURNING t.token`;
  const stateSql = `SELECT state, expires_at > clock_timestamp() AS live FROM ${table} WHERE key = $1::text`;
  // A row that is gone (pruned after its lease passed) is completed too: nobody else holds it.
  const completeSql = `INSERT INTO ${table} AS t (key, state, token, expires_at)
VALUES ($1::text, 'completed', NULL,
  COALESCE(clock_timestamp() + $3::float8 * interval '1 millisecond', 'infinity'::timestamptz))
ON CONFLICT (key) DO UPDATE SET state = 'completed', token = NULL, expires_at = excluded.expires_at
WHERE t.state = 'claimed' AND t.token = $2::text`;
  const releaseSql = `DELETE FROM ${table} WHERE key = $1::text AND state = 'claimed' AND token = $2::text`;
  const pruneSql = `DELETE FROM ${table} WHERE ctid = ANY (ARRAY(
  SELECT ctid FROM ${table} WHERE expires_at <= clock_timestamp() LIMIT $1::int FOR UPDATE SKIP LOCKED))
RETURNING 1`;

  async function prune(pruneOptions?: { limit?: number }): Promise<number> {
    const limit = count(pruneOptions?.limit, 'limit', pruneLimit);
    const rows = await withTable(migrate, 'prune', () => run(pruneSql, [String(limit)]));
    return rows.length;
  }

  let claims = 0;
  function maybePrune(): void {
    if (pruneEvery === 0 || ++claims % pruneEvery !== 0) return;
    // In the background: a failed prune only means the next one has more to do.
    prune().catch(() => {});
  }

  return {
    schema: ddl.map((statement) => `${statement};`).join('\n'),
    migrate,
    prune,
    async claim(key: string, claimOptions: ClaimOptions): Promise<ClaimResult> {
      checkKey(key);
      checkLease(claimOptions?.leaseMs);
      const token = newClaimToken();
      const lease = duration(claimOptions.leaseMs);
      maybePrune();
      // A row can expire, be released or be pruned between the two statements: look again, a few times.
      for (let attempt = 0; attempt < 3; attempt++) {
        const taken = await withTable(migrate, 'claim', () => run(claimSql, [asText(key), token, lease]));
        if (taken.length > 0) return { status: 'claimed', token };
        let rows: Row[];
        try {
          rows = await run(stateSql, [asText(key)]);
        } catch (error) {
          throw unavailable('claim', error);
        }
        const row = rows[0];
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
      const retention = duration(completeOptions.retentionMs);
      await withTable(migrate, 'complete', () => run(completeSql, [asText(key), token, retention]));
    },
    async release(key: string, token: string): Promise<void> {
      checkKey(key);
      checkToken(token);
      await withTable(migrate, 'release', () => run(releaseSql, [asText(key), token]));
    },
  };
}
