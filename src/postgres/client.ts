/**
 * The structural PostgreSQL clients payhook accepts, and the one way it talks
 * to them: text plus positional values in, rows out. Neither `pg` nor
 * `postgres` is a dependency; their objects fit these types as they are.
 *
 * @module
 */
import { PayhookError } from '../errors.js';
import { describeError, misuse } from '../lib/misuse.js';
import { controlSql } from './sql.js';

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

function isPostgresJs(client: unknown): client is PostgresJsLike {
  return (
    (typeof client === 'function' || typeof client === 'object') &&
    client !== null &&
    typeof (client as PostgresJsLike).unsafe === 'function'
  );
}

function isPg(client: unknown): client is PgQueryable {
  return typeof client === 'object' && client !== null && typeof (client as PgQueryable).query === 'function';
}

/** Whether `client` is a postgres.js `sql` (payhook's own checks of the driver's settings depend on it). */
export function isPostgresJsClient(client: unknown): client is PostgresJsLike {
  return isPostgresJs(client);
}

/** The slice of postgres.js's `sql.options` that {@link stopTypeFetches} reads and sets. */
interface TypeFetchSettings {
  fetch_types?: unknown;
  shared?: { typeArrayMap?: object };
}

/**
 * postgres.js (with `fetch_types`, its default) fetches the array types on
 * every new connection, and when that connection is dropped during the fetch
 * the rejection escapes as an unhandled one that ends the process (an upstream
 * defect no caller can catch). payhook needs none of those types, and once
 * one fetch has succeeded the instance keeps them for all its connections: so
 * after a statement of payhook's succeeds with the types known, it turns the
 * instance's fetch off. The merchant's array parameters keep working.
 */
function stopTypeFetches(sql: object): void {
  const settings = (sql as { options?: TypeFetchSettings }).options;
  if (settings?.fetch_types !== true) return;
  const known = settings.shared?.typeArrayMap;
  if (known !== undefined && Object.keys(known).length > 0) settings.fetch_types = false;
}

/** The statement runner for `client`, or INVALID_ARGUMENT when it is neither driver. */
export function runnerFor(client: unknown, caller: string): Runner {
  // postgres.js first: its `sql` is a function object, and a pg object never has `unsafe`.
  if (isPostgresJs(client)) {
    return async (text, values = []) => {
      const rows: Row[] = [];
      for (const row of await client.unsafe(text, [...values])) rows.push(row as Row);
      stopTypeFetches(client);
      return rows;
    };
  }
  if (isPg(client)) {
    return async (text, values = []) => {
      const rows: Row[] = [];
      for (const row of (await client.query(text, [...values])).rows) rows.push(row as Row);
      return rows;
    };
  }
  throw misuse(`${caller} needs { client }: a pg Pool or Client, or a postgres.js sql instance.`);
}

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
 * and `abort` on it destroys the connection (PostgreSQL rolls back).
 */
export type Transact = <T>(work: (tx: Transaction) => Promise<T>, hold?: Holder) => Promise<T>;

/** What a caller of {@link Transact} may do with the connection it holds (pg only): drop it. */
export interface Holder {
  hold(abort: () => void): void;
  letGo(): void;
}

function isPgPool(client: unknown): client is PgPoolLike {
  return isPg(client) && typeof (client as PgPoolLike).connect === 'function' && 'totalCount' in client;
}

/**
 * Whether a driver error means the connection itself is gone: no SQLSTATE
 * (a socket error, or postgres.js's own CONNECTION_* codes), or a state of
 * class 08 (connection exception) or 57P (the server ending the session, e.g.
 * `pg_terminate_backend`).
 */
export function isConnectionLoss(error: unknown): boolean {
  const state = sqlState(error);
  return state === undefined || state.startsWith('08') || state.startsWith('57P');
}

/** Whether payhook may still send statements on a transaction's connection. */
interface Liveness {
  lost: unknown;
  /** Resolves when postgres.js has given the transaction up because its connection closed. */
  readonly closed: Promise<void>;
}

/** How long a transaction whose statement lost its connection waits for postgres.js to see the close. */
const CLOSE_GRACE_MS = 2000;

/**
 * Called when a postgres.js transaction or savepoint callback is about to
 * fail after its connection was lost. Failing it would make postgres.js send
 * `rollback` on that closed connection, which throws out of a timer and ends
 * the process. So once postgres.js has seen the close (it then rejects
 * `begin()` by itself, and PostgreSQL has rolled the transaction back), the
 * callback is left unsettled: it holds nothing but its own closure. When the
 * close does not come within a grace period the connection is alive after
 * all, and the callback fails as usual.
 */
async function holdIfClosed(liveness: Liveness): Promise<void> {
  if (liveness.lost === undefined) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const grace = new Promise<'open'>((resolve) => {
    timer = setTimeout(resolve, CLOSE_GRACE_MS, 'open');
  });
  const outcome = await Promise.race([liveness.closed.then(() => 'closed' as const), grace]);
  clearTimeout(timer);
  if (outcome === 'closed') await new Promise<never>(() => {});
}

/**
 * A runner that sends nothing more once its connection was lost: postgres.js
 * writes a statement given to a closed transaction connection to a socket that
 * is gone, which throws out of a timer and ends the process.
 */
function guardedRunner(run: Runner, liveness: Liveness): Runner {
  return async (text, values) => {
    if (liveness.lost !== undefined) throw connectionLost(liveness.lost);
    try {
      return await run(text, values);
    } catch (error) {
      if (isConnectionLoss(error)) liveness.lost ??= error;
      throw error;
    }
  };
}

function postgresJsTransaction(tx: PostgresJsTransactionLike, caller: string, liveness: Liveness): Transaction {
  return {
    run: guardedRunner(runnerFor(tx, caller), liveness),
    connection: tx,
    // postgres.js tracks failed statements per scope and fails the scope for
    // them, so the savepoint must be its own (a raw SAVEPOINT would not isolate them).
    async savepoint<T>(work: (scope: Connection) => Promise<T>): Promise<T> {
      if (liveness.lost !== undefined) throw connectionLost(liveness.lost);
      let result: { value: T } | undefined;
      await tx.savepoint(async (inner) => {
        try {
          result = { value: await work({ run: guardedRunner(runnerFor(inner, caller), liveness), connection: inner }) };
        } catch (error) {
          await holdIfClosed(liveness);
          throw error;
        }
      });
      if (result === undefined) throw new Error('postgres.js ended a savepoint without running it');
      return result.value;
    },
  };
}

/** An error a pg connection raised while payhook held it, for `release(error)`. */
function connectionLost(cause: unknown): Error {
  return cause instanceof Error ? cause : new Error(describeError(cause));
}

/**
 * A transaction on a connection checked out of a `pg` Pool. While payhook
 * holds the connection it listens for `'error'` (a connection dropped by the
 * server, e.g. `pg_terminate_backend`, emits one, and an EventEmitter with no
 * listener throws it out of the process); a connection that raised one, or
 * whose statements failed without an SQLSTATE, or whose ROLLBACK failed, is
 * released as broken so the pool destroys it rather than reuse it.
 */
function pgTransact(pool: PgPoolLike): Transact {
  return async (work, holder) => {
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken ??= connectionLost(error);
    };
    // The listener goes on in the callback itself: a promise would resume a tick later, and a
    // message that arrived in the same network read (the server ending the session) would find none.
    const connection = await new Promise<PgPoolClientLike>((resolve, reject) => {
      pool.connect((error, checkedOut) => {
        if (error !== undefined && error !== null) return reject(error);
        if (checkedOut === undefined) return reject(new Error('pg Pool.connect gave no connection'));
        checkedOut.on('error', onError);
        resolve(checkedOut);
      });
    });
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      connection.release(broken ?? false);
      connection.removeListener('error', onError);
    };
    holder?.hold(() => {
      broken ??= new Error('payhook dropped the connection: its worker was stopped');
      release();
    });
    const run = runnerFor(connection, 'createPostgresInbox');
    const statement: Runner = async (text, values) => {
      if (released) throw new Error('the connection was dropped');
      try {
        return await run(text, values);
      } catch (error) {
        if (isConnectionLoss(error)) broken ??= connectionLost(error);
        throw error;
      }
    };
    const savepoint = async <T>(inner: (scope: Connection) => Promise<T>): Promise<T> => {
      await statement(controlSql.savepoint);
      try {
        const result = await inner({ run: statement, connection });
        // Fails when one of the statements failed (the transaction is aborted): a failure too.
        await statement(controlSql.releaseSavepoint);
        return result;
      } catch (error) {
        await statement(controlSql.rollbackToSavepoint);
        throw error;
      }
    };
    try {
      await statement(controlSql.begin);
      const result = await work({ run: statement, connection, savepoint });
      await statement(controlSql.commit);
      return result;
    } catch (error) {
      if (broken === undefined && !released) {
        await statement(controlSql.rollback).catch((rollbackFailed: unknown) => {
          broken ??= connectionLost(rollbackFailed);
        });
      }
      throw error;
    } finally {
      holder?.letGo();
      release();
    }
  };
}

/**
 * The transaction runner for `client`: `sql.begin` for postgres.js, a
 * checked-out connection with BEGIN/COMMIT for a `pg` Pool. A single `pg`
 * Client is refused: the inbox runs several transactions at once, and a
 * Client would mix them (and the handler's inserts) into one.
 */
export function transactorFor(client: unknown, caller: string): Transact {
  if (isPostgresJs(client)) {
    const sql = client;
    const begin = sql.begin?.bind(sql);
    if (begin === undefined) {
      throw misuse(`${caller} needs the postgres.js sql instance itself (one that has begin()), not a transaction.`);
    }
    return async <T>(work: (tx: Transaction) => Promise<T>) => {
      let result: { value: T } | undefined;
      let closed!: () => void;
      const liveness: Liveness = { lost: undefined, closed: new Promise<void>((resolve) => (closed = resolve)) };
      try {
        await begin(async (tx) => {
          try {
            result = { value: await work(postgresJsTransaction(tx, caller, liveness)) };
          } catch (error) {
            await holdIfClosed(liveness);
            throw error;
          }
        });
      } catch (error) {
        // postgres.js gives a transaction up when its connection closes, while `work` may still be running.
        if (isConnectionLoss(error)) {
          liveness.lost ??= error;
          closed();
        }
        throw error;
      }
      if (result === undefined) throw new Error('postgres.js ended a transaction without running it');
      return result.value;
    };
  }
  if (isPgPool(client)) return pgTransact(client);
  throw misuse(
    `${caller} needs { client }: a pg Pool (not a single Client: it runs several transactions at once) ` +
      'or a postgres.js sql instance.',
  );
}

/**
 * Runs `work` in one transaction for a migration: through {@link Transact}
 * when the client has transactions of its own connection (a `pg` Pool,
 * postgres.js), or with BEGIN/COMMIT on a single `pg` Client.
 */
export function migrationTransactor(client: unknown, caller: string): Transact {
  if (isPostgresJs(client) || isPgPool(client)) return transactorFor(client, caller);
  const run = runnerFor(client, caller);
  return async (work) => {
    await run(controlSql.begin);
    try {
      const result = await work({
        run,
        connection: client as PgQueryable,
        savepoint: () => Promise.reject(new Error('no savepoints in a migration')),
      });
      await run(controlSql.commit);
      return result;
    } catch (error) {
      await run(controlSql.rollback).catch(() => {});
      throw error;
    }
  };
}

/** The SQLSTATE of a driver error (`pg` and postgres.js both put it in `code`), when it is one. */
export function sqlState(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  // postgres.js also puts its own connection codes (CONNECTION_CLOSED, …) in `code`: those are not SQLSTATEs.
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * SQLSTATEs that say the database is reachable but not set up for payhook:
 * a table, column, schema or function missing, or a privilege not granted.
 * Retrying cannot cure them, so they are configuration errors, not outages.
 */
const MISCONFIGURED = new Set(['42P01', '42703', '3F000', '42883', '42501', '42704']);

/** Whether `error` is a configuration error (see {@link fault}). */
export function isMisconfiguration(error: unknown): boolean {
  return error instanceof PayhookError && error.code === 'INVALID_ARGUMENT';
}

/**
 * A failed statement as payhook reports it: INVALID_ARGUMENT naming the fix
 * when the database is not set up (see {@link MISCONFIGURED}); otherwise
 * STORE_UNAVAILABLE, which the handler answers 503 and a worker retries. The
 * driver's error is kept as `cause`; a PayhookError passes through.
 */
export function fault(what: string, cause: unknown, fix: string): PayhookError {
  if (cause instanceof PayhookError) return cause;
  const state = sqlState(cause);
  if (state !== undefined && MISCONFIGURED.has(state)) {
    return new PayhookError('INVALID_ARGUMENT', `PostgreSQL ${what} failed: ${describeError(cause)}. ${fix}`, {
      cause,
    });
  }
  return unavailable(what, cause);
}

/** A database failure as payhook reports it: STORE_UNAVAILABLE, the driver's error kept as `cause`. */
export function unavailable(what: string, cause: unknown): PayhookError {
  return new PayhookError('STORE_UNAVAILABLE', `PostgreSQL ${what} failed: ${describeError(cause)}`, { cause });
}

// A lone surrogate, which UTF-8 cannot carry: drivers send U+FFFD instead, so two keys would collide.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * A string as a `text` value, one-to-one: PostgreSQL text holds no NUL and
 * drivers replace lone surrogates, so such a string (or one that starts with
 * `"`, to keep the mapping one-to-one) is stored as its JSON literal instead,
 * which starts with `"`. Everything else is stored as it is.
 */
export function asText(value: string): string {
  return value.startsWith('"') || value.includes('\0') || LONE_SURROGATE.test(value) ? JSON.stringify(value) : value;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

/** A table name as given (`name` or `schema.name`); anything else could inject SQL, so it is refused. */
export function checkTable(table: unknown, caller: string): string {
  if (typeof table !== 'string' || !IDENTIFIER.test(table)) {
    throw misuse(
      `${caller}: table must be a plain SQL identifier (name or schema.name), not ${JSON.stringify(table)}.`,
    );
  }
  return table;
}
