/**
 * The structural PostgreSQL clients payhook accepts, the shape every driver
 * adapter gives them (text plus positional values in, rows out; transactions
 * with savepoints), and how a client is told apart. Neither `pg` nor
 * `postgres` is a dependency; their objects fit these types as they are.
 *
 * @module
 */

/**
 * The slice of a `pg` (node-postgres) `Client`, `PoolClient` or `Pool` payhook
 * uses: `query(text, values)` resolving `{ rows }`.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import type { PgQueryable } from 'payhook/postgres';
 *
 * const client: PgQueryable = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * ```
 */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * A connection checked out of a `pg` `Pool`: {@link PgQueryable} plus
 * `release`.
 *
 * @example
 * ```ts
 * import type { PgPoolClientLike } from 'payhook/postgres';
 *
 * declare const connection: PgPoolClientLike;
 * connection.on('error', (error) => console.error('connection lost', error));
 * connection.release();
 * ```
 */
export interface PgPoolClientLike extends PgQueryable {
  release(destroy?: boolean | Error): void;
  /** payhook listens for `'error'` while it holds the connection, so a dropped one never ends the process. */
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * The slice of a `pg` `Pool` the inbox uses: it checks out one connection per
 * transaction with `connect(callback)` (the callback form: payhook attaches
 * its `'error'` listener inside it, before any later network message can
 * reach the connection). `totalCount` is how payhook tells a `Pool` (whose
 * `connect()` hands out a connection) from a `Client` (whose `connect()`
 * opens itself).
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import type { PgPoolLike } from 'payhook/postgres';
 *
 * const pool: PgPoolLike = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * ```
 */
export interface PgPoolLike extends PgQueryable {
  connect(callback: (error: Error | undefined, connection: PgPoolClientLike | undefined) => void): void;
  readonly totalCount: number;
}

/**
 * The slice of a postgres.js `sql` instance payhook uses: `sql.unsafe(text,
 * values)` resolving the rows, and `sql.begin(fn)` for the inbox's
 * transactions.
 *
 * @example
 * ```ts
 * import postgres from 'postgres';
 * import type { PostgresJsLike } from 'payhook/postgres';
 *
 * const sql: PostgresJsLike = postgres(process.env.DATABASE_URL!);
 * ```
 */
export interface PostgresJsLike {
  unsafe(text: string, values?: unknown[]): PromiseLike<readonly unknown[]>;
  begin?(fn: (sql: PostgresJsTransactionLike) => PromiseLike<unknown>): PromiseLike<unknown>;
}

/**
 * The slice of a postgres.js transaction (`sql.begin`'s argument) payhook
 * uses: {@link PostgresJsLike} plus `savepoint(fn)`.
 *
 * @example
 * ```ts
 * import type { PostgresJsTransactionLike } from 'payhook/postgres';
 *
 * const inSavepoint = (tx: PostgresJsTransactionLike) => tx.savepoint((inner) => inner.unsafe('SELECT 1'));
 * ```
 */
export interface PostgresJsTransactionLike extends PostgresJsLike {
  savepoint(fn: (sql: PostgresJsTransactionLike) => PromiseLike<unknown>): PromiseLike<unknown>;
}

/**
 * A PostgreSQL client payhook can use: a `pg` `Pool`, `Client` or
 * `PoolClient` ({@link PgQueryable}), or a postgres.js `sql`
 * ({@link PostgresJsLike}). Hosted PostgreSQL that speaks the wire protocol
 * (Neon, Supabase, Vercel Postgres, RDS, Cloud SQL) works through either.
 *
 * @example
 * ```ts
 * import postgres from 'postgres';
 * import type { PostgresClientLike } from 'payhook/postgres';
 *
 * const client: PostgresClientLike = postgres(process.env.DATABASE_URL!);
 * ```
 */
export type PostgresClientLike = PgQueryable | PostgresJsLike;

/** One result row, as both drivers give it: column name to value. */
export type Row = Record<string, unknown>;

/**
 * Sends one statement. payhook's own values are text (or null), cast in the
 * SQL itself, so both drivers send them alike.
 */
export type Runner = (text: string, values?: readonly unknown[]) => Promise<Row[]>;

/** One connection's statements: the runner, and the driver's own object for them. */
export interface Connection {
  readonly run: Runner;
  readonly connection: PostgresClientLike;
}

/** A transaction in progress: its statements, and nested savepoints. */
export interface Transaction extends Connection {
  /**
   * Runs `work` after a savepoint: when it throws (or one of its statements
   * failed, even if `work` caught that), everything it did is rolled back to
   * the savepoint and the error is rethrown; the transaction itself goes on.
   */
  savepoint<T>(work: (scope: Connection) => Promise<T>): Promise<T>;
}

/**
 * Runs `work` inside one transaction on one connection, committing when it
 * resolves. `onConnection` (pg only) hears of the connection while it is held,
 * and `abort` on it closes the connection (PostgreSQL rolls back once a
 * statement still running there ends).
 */
export type Transact = <T>(work: (tx: Transaction) => Promise<T>, hold?: Holder) => Promise<T>;

/** What a caller of {@link Transact} may do with the connection it holds (pg only): drop it. */
export interface Holder {
  hold(abort: () => void): void;
  letGo(): void;
}

/** Whether `client` is a postgres.js `sql` (or transaction): it has `unsafe`, which a pg object never has. */
export function isPostgresJs(client: unknown): client is PostgresJsLike {
  return (
    (typeof client === 'function' || typeof client === 'object') &&
    client !== null &&
    typeof (client as PostgresJsLike).unsafe === 'function'
  );
}

/** Whether `client` is a `pg` Pool, Client or PoolClient: it has `query`. */
export function isPg(client: unknown): client is PgQueryable {
  return typeof client === 'object' && client !== null && typeof (client as PgQueryable).query === 'function';
}

/** Whether `client` is a `pg` Pool (not a single Client): it checks connections out and counts them. */
export function isPgPool(client: unknown): client is PgPoolLike {
  return isPg(client) && typeof (client as PgPoolLike).connect === 'function' && 'totalCount' in client;
}
