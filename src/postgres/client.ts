/**
 * The structural PostgreSQL clients payhook accepts, and the one way it talks
 * to them: text plus positional values in, rows out. Neither `pg` nor
 * `postgres` is a dependency; their objects fit these types as they are.
 *
 * @module
 */
import { PayhookError } from '../errors.js';
import { describeError, misuse } from '../lib/misuse.js';

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
 * connection.release();
 * ```
 */
export interface PgPoolClientLike extends PgQueryable {
  release(destroy?: boolean | Error): void;
}

/**
 * The slice of a `pg` `Pool` the inbox uses: it checks out one connection per
 * transaction with `connect()`. `totalCount` is how payhook tells a `Pool`
 * (whose `connect()` hands out a connection) from a `Client` (whose
 * `connect()` opens itself).
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
  connect(): Promise<PgPoolClientLike>;
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
  unsafe(text: string, values?: never[]): PromiseLike<readonly unknown[]>;
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
export type Run = (text: string, values?: readonly unknown[]) => Promise<Row[]>;

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

/** The statement runner for `client`, or INVALID_ARGUMENT when it is neither driver. */
export function runnerFor(client: unknown, caller: string): Run {
  // postgres.js first: its `sql` is a function object, and a pg object never has `unsafe`.
  if (isPostgresJs(client)) {
    return async (text, values = []) => [...(await client.unsafe(text, values as never[]))] as Row[];
  }
  if (isPg(client)) return async (text, values = []) => (await client.query(text, [...values])).rows as Row[];
  throw misuse(`${caller} needs { client }: a pg Pool or Client, or a postgres.js sql instance.`);
}

/** One connection's statements: the runner, and the driver's own object for them. */
export interface Connection {
  readonly run: Run;
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

/** Runs `work` inside one transaction on one connection, committing when it resolves. */
export type Transact = <T>(work: (tx: Transaction) => Promise<T>) => Promise<T>;

function isPgPool(client: unknown): client is PgPoolLike {
  return isPg(client) && typeof (client as PgPoolLike).connect === 'function' && 'totalCount' in client;
}

function postgresJsTransaction(tx: PostgresJsTransactionLike, caller: string): Transaction {
  return {
    run: runnerFor(tx, caller),
    connection: tx,
    // postgres.js tracks failed statements per scope and fails the scope for
    // them, so the savepoint must be its own (a raw SAVEPOINT would not isolate them).
    savepoint: (work) =>
      Promise.resolve(tx.savepoint((inner) => work({ run: runnerFor(inner, caller), connection: inner }))) as never,
  };
}

const SAVEPOINT = 'payhook_savepoint';

/**
 * The transaction runner for `client`: `sql.begin` for postgres.js, a
 * checked-out connection with BEGIN/COMMIT for a `pg` Pool. A single `pg`
 * Client is refused: the inbox runs several transactions at once, and a
 * Client would mix them (and the handler's inserts) into one.
 */
export function transactorFor(client: unknown, caller: string): Transact {
  if (isPostgresJs(client)) {
    const sql = client;
    if (typeof sql.begin !== 'function') {
      throw misuse(`${caller} needs the postgres.js sql instance itself (one that has begin()), not a transaction.`);
    }
    return (work) => Promise.resolve(sql.begin?.((tx) => work(postgresJsTransaction(tx, caller)))) as never;
  }
  if (isPgPool(client)) {
    return async (work) => {
      const connection = await client.connect();
      const run = runnerFor(connection, caller);
      const savepoint = async <T>(inner: (scope: Connection) => Promise<T>): Promise<T> => {
        await run(`SAVEPOINT ${SAVEPOINT}`);
        try {
          const result = await inner({ run, connection });
          // Fails when one of the statements failed (the transaction is aborted): a failure too.
          await run(`RELEASE SAVEPOINT ${SAVEPOINT}`);
          return result;
        } catch (error) {
          await run(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`);
          throw error;
        }
      };
      let broken = false;
      try {
        await run('BEGIN');
        const result = await work({ run, connection, savepoint });
        await run('COMMIT');
        return result;
      } catch (error) {
        await run('ROLLBACK').catch(() => {
          broken = true;
        });
        throw error;
      } finally {
        // A connection whose ROLLBACK failed is in an unknown state: destroy it rather than reuse it.
        connection.release(broken);
      }
    };
  }
  throw misuse(
    `${caller} needs { client }: a pg Pool (not a single Client: it runs several transactions at once) ` +
      'or a postgres.js sql instance.',
  );
}

/** The SQLSTATE of a driver error (`pg` and postgres.js both put it in `code`). */
export function sqlState(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
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

/**
 * Runs `statement`, creating the tables first when they are missing
 * (SQLSTATE 42P01), so a store works without an explicit `migrate()`.
 */
export async function withTable<T>(
  migrate: () => Promise<void>,
  what: string,
  statement: () => Promise<T>,
): Promise<T> {
  try {
    return await statement();
  } catch (error) {
    if (sqlState(error) !== '42P01') throw unavailable(what, error);
  }
  try {
    await migrate();
    return await statement();
  } catch (error) {
    throw error instanceof PayhookError ? error : unavailable(what, error);
  }
}

/** SQLSTATEs of two sessions creating the same table or index at once (catalog unique violations). */
const DDL_RACE = new Set(['23505', '42P07', '42710']);

/**
 * The migration of one store or inbox: DDL statements that are safe to
 * repeat. Concurrent calls in this process share one run. Sessions of other
 * processes creating the same objects at the same moment can still collide
 * in the catalog; the loser tries again and then finds them made.
 */
export function migration(run: Run, statements: readonly string[]): () => Promise<void> {
  // One statement per call: postgres.js sends parameterised text with the extended protocol, one statement each.
  const all = async () => {
    for (const statement of statements) await run(statement);
  };
  const attempt = async () => {
    for (let tries = 1; ; tries++) {
      try {
        return await all();
      } catch (error) {
        const state = sqlState(error);
        if (tries >= 5 || state === undefined || !DDL_RACE.has(state)) throw unavailable('migrate', error);
      }
    }
  };
  let running: Promise<void> | undefined;
  return () =>
    (running ??= attempt().finally(() => {
      running = undefined;
    }));
}
