/**
 * Entry `payhook/sqlite`: a durable {@link DedupStore} in a SQLite file, for
 * a receiver on one server that must remember its deliveries across
 * restarts without running anything new. It takes the database your runtime
 * already has built in — `DatabaseSync` from `node:sqlite` (Node 22.13 and
 * later, Deno) or `Database` from `bun:sqlite` — through a minimal
 * structural type, so payhook imports none of them.
 *
 * @module
 */
import type { ClaimOptions, ClaimResult, CompleteOptions, DedupStore } from '../dedup/store.js';
import { storedKey } from '../dedup/stored-key.js';
import { checkKey, checkLease, checkRetention, checkToken, newClaimToken, storeClock } from '../dedup/token.js';
import { PayhookError } from '../errors.js';
import { describeError, misuse } from '../lib/misuse.js';

export type { ClaimOptions, ClaimResult, CompleteOptions, DedupStore } from '../dedup/store.js';

/**
 * A prepared statement as `node:sqlite` (`StatementSync`), `bun:sqlite` and
 * better-sqlite3 (`Statement`) have it: positional parameters, synchronous.
 * payhook binds only text, numbers and `null`. The parameters are typed
 * `unknown` so better-sqlite3's typed handle fits too: its generic `prepare`
 * is compared at its constraint, one of whose statements binds a single `{}`
 * (named parameters), which `null` is not.
 *
 * @example
 * ```ts
 * import { DatabaseSync } from 'node:sqlite';
 * import type { SqliteStatementLike } from 'payhook/sqlite';
 *
 * const statement: SqliteStatementLike = new DatabaseSync(':memory:').prepare('SELECT 1 AS one');
 * ```
 */
export interface SqliteStatementLike {
  /** Runs the statement; the result is not used. */
  run(...parameters: unknown[]): unknown;
  /** The first row as an object, or `undefined` (node:sqlite) / `null` (bun:sqlite) when there is none. */
  get(...parameters: unknown[]): unknown;
  /**
   * Every row; runs the statement to its end, so a failed commit throws. The
   * store only counts the rows, so their shape (objects, or arrays under
   * `node:sqlite`'s `returnArrays`) does not matter.
   */
  all(...parameters: unknown[]): unknown[];
}

/**
 * The slice of a SQLite database handle payhook uses. `new DatabaseSync(file)`
 * from `node:sqlite` (Node, Deno), `new Database(file)` from `bun:sqlite` and
 * `new Database(file, { timeout: 0 })` from better-sqlite3 fit as they are.
 *
 * @example
 * ```ts
 * import { Database } from 'bun:sqlite';
 * import type { SqliteDatabaseLike } from 'payhook/sqlite';
 *
 * const database: SqliteDatabaseLike = new Database('payhook.sqlite');
 * ```
 */
export interface SqliteDatabaseLike {
  exec(sql: string): unknown;
  prepare(sql: string): SqliteStatementLike;
  /**
   * `true` while a transaction is open on the connection (`node:sqlite`).
   * The store waits for it to end rather than write inside it.
   */
  readonly isTransaction?: boolean;
  /** The same, as `bun:sqlite` and better-sqlite3 name it. */
  readonly inTransaction?: boolean;
}

/**
 * Options of {@link createSqliteStore}.
 *
 * @example
 * ```ts
 * import { DatabaseSync } from 'node:sqlite';
 * import type { SqliteStoreOptions } from 'payhook/sqlite';
 *
 * const options: SqliteStoreOptions = { database: new DatabaseSync('payhook.sqlite'), table: 'shop_deliveries' };
 * ```
 */
export interface SqliteStoreOptions {
  /** An open database (see {@link SqliteDatabaseLike}). */
  database: SqliteDatabaseLike;
  /**
   * The table the store creates (if missing) and uses: letters, digits and
   * `_`, not starting with a digit or `sqlite_` (SQLite keeps those names),
   * nor ending in `_expires_at`: the store also creates an index named
   * `<table>_expires_at`, and tables and indexes share one set of names.
   * Leave that name to the store: an index of yours so named, on another
   * table, would be taken for its own (each claim's sweep of expired rows
   * would then read the whole table).
   * @defaultValue `'payhook_deliveries'`
   */
  table?: string;
  /**
   * The clock, in milliseconds. Inject one in tests; every process sharing
   * the file must agree on it (one server: `Date.now`). A call that finds it
   * answering anything but a finite number rejects with `INVALID_ARGUMENT`.
   * @defaultValue `Date.now`
   */
  now?: () => number;
  /**
   * How long a claim keeps trying, in milliseconds, while another
   * connection holds the file's lock (`SQLITE_BUSY`, `SQLITE_LOCKED`), or
   * while other code has a transaction open on this connection. It waits
   * with timers between short attempts, so the event loop stays free; past
   * it, the claim rejects with `STORE_UNAVAILABLE` and the handler answers
   * 503. Recording a handled delivery (and releasing a claim) keeps trying
   * for 4 000 ms at least: given up, the delivery would stay claimed, and a
   * copy after the lease be handled again. Keep the handler's
   * `storeTimeoutMs` (5 000 by default) above both (below, a completion it
   * stopped waiting for is logged `bookkeeping-failed`, though it may land),
   * and leave the driver's own `busy_timeout` at 0: that wait blocks the
   * whole process. At most 2 147 483 647, the longest timer JavaScript keeps.
   * @defaultValue 1 000
   */
  busyTimeoutMs?: number;
}

/** The default of {@link SqliteStoreOptions.busyTimeoutMs}. */
const DEFAULT_BUSY_TIMEOUT_MS = 1_000;
/**
 * How long a completion or a release tries on a busy file at least: a second did not always do (several workers'
 * writes found the file locked at every try), and the handler's default storeTimeoutMs (5 000) is above it, so the
 * handler hears the store's own error, not its own timeout.
 */
const SETTLE_BUSY_TIMEOUT_MS = 4_000;
/** The longest pause between two attempts on a busy file. */
const MAX_BUSY_PAUSE_MS = 50;

/**
 * Whether a driver's error says another connection holds the lock: SQLITE_BUSY
 * (5) or SQLITE_LOCKED (6), or one of their extended codes. node:sqlite puts
 * the extended code in `errcode`, bun:sqlite its primary code in `errno` and
 * the name in `code` (`SQLITE_BUSY`), better-sqlite3 the extended name in
 * `code` (`SQLITE_BUSY_SNAPSHOT`). Deno's node:sqlite leaves `errcode` off
 * what `exec` throws (the table's set-up): there SQLite's own message for 5
 * and 6 tells.
 */
function isBusy(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { errcode, errno, code, message } = error as Record<string, unknown>;
  const primary = (value: unknown) =>
    typeof value === 'number' && value >= 0 && ((value & 0xff) === 5 || (value & 0xff) === 6);
  return (
    primary(errcode) ||
    primary(errno) ||
    (typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code)) ||
    (code === 'ERR_SQLITE_ERROR' && errcode === undefined && /^database (table )?is locked$/.test(String(message)))
  );
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** SQLite's extended code for a file deleted, moved or replaced under an open connection. */
const SQLITE_READONLY_DBMOVED = 1032;

/**
 * How long the connection itself waits for a locked file (`PRAGMA busy_timeout`: 0 by default in node:sqlite and
 * bun:sqlite, 5 000 ms in better-sqlite3), read whatever shape the driver gives rows; 0 if unknown. A database in
 * memory (Deno gives one 5 000 ms whatever its options) has its wait set to 0 here instead: nothing is lost in a
 * private one, and one shared through `vfs=memdb`, which SQL cannot tell apart, locks as a file does.
 */
function driverBusyTimeout(database: SqliteDatabaseLike): number {
  const first = (sql: string): unknown => {
    const row = database.prepare(sql).get();
    return typeof row === 'object' && row !== null ? Object.values(row)[0] : undefined;
  };
  try {
    const value = first('PRAGMA busy_timeout');
    const ms = typeof value === 'number' || typeof value === 'bigint' ? Number(value) : 0;
    if (ms <= 0 || first("SELECT file FROM pragma_database_list WHERE name = 'main'") !== '') return ms;
    database.exec('PRAGMA busy_timeout = 0');
    return 0;
  } catch {
    return 0; // a stand-in that cannot answer: the store's calls will say what is wrong
  }
}

/** How many expired rows one claim deletes at most, so no claim is slow. */
const SWEEP_BATCH = 64;

interface Statements {
  claim: SqliteStatementLike;
  completed: SqliteStatementLike;
  complete: SqliteStatementLike;
  release: SqliteStatementLike;
  sweep: SqliteStatementLike;
}

function prepare(database: SqliteDatabaseLike, name: string): Statements {
  // Quoted, so a name that is also an SQL keyword (order, group) is still a table name.
  const table = `"${name}"`;
  // `expires_at` is milliseconds on the store's clock; NULL keeps a completed
  // delivery forever. A row whose time has passed counts as absent.
  database.exec(
    `CREATE TABLE IF NOT EXISTS ${table}
       (key TEXT PRIMARY KEY, state TEXT NOT NULL, token TEXT, expires_at REAL) WITHOUT ROWID;
     CREATE INDEX IF NOT EXISTS "${name}_expires_at" ON ${table} (expires_at) WHERE expires_at IS NOT NULL;`,
  );
  const expired = (row: string) => `(${row}.expires_at IS NOT NULL AND ${row}.expires_at <= ?)`;
  return {
    // One statement, so it is atomic even between processes sharing the
    // file: insert, or take over a row whose lease or retention has passed.
    claim: database.prepare(
      `INSERT INTO ${table} (key, state, token, expires_at) VALUES (?, 'claimed', ?, ?)
       ON CONFLICT (key) DO UPDATE SET state = 'claimed', token = excluded.token, expires_at = excluded.expires_at
       WHERE ${expired(table)} RETURNING token`,
    ),
    // A row whose presence is the answer: a driver may hand rows back as objects or, set so for the whole
    // connection (node:sqlite's `returnArrays`), as arrays; the store only counts them, never reads a column.
    completed: database.prepare(
      `SELECT 1 FROM ${table} WHERE key = ? AND state = 'completed' AND NOT ${expired(table)}`,
    ),
    // Our claim, or nothing live there (absent, or expired and not re-taken):
    // the work is done, record it.
    complete: database.prepare(
      `INSERT INTO ${table} (key, state, token, expires_at) VALUES (?, 'completed', NULL, ?)
       ON CONFLICT (key) DO UPDATE SET state = 'completed', token = NULL, expires_at = excluded.expires_at
       WHERE (${table}.state = 'claimed' AND ${table}.token = ?) OR ${expired(table)}`,
    ),
    release: database.prepare(`DELETE FROM ${table} WHERE key = ? AND state = 'claimed' AND token = ?`),
    sweep: database.prepare(
      `DELETE FROM ${table} WHERE key IN (SELECT key FROM ${table} WHERE expires_at <= ? LIMIT ${SWEEP_BATCH})`,
    ),
  };
}

/**
 * Creates a {@link DedupStore} in a SQLite database: deliveries handled
 * before a restart stay handled after it, with no server to run. It creates
 * its table on the spot (synchronously: SQLite is in-process), or, when
 * another connection holds the file or other code has a transaction open on
 * this connection at that moment, at its first call.
 *
 * - `claim` is one `INSERT … ON CONFLICT … DO UPDATE … WHERE` the old row
 *   expired `… RETURNING`: atomic, also between several processes sharing the
 *   file (open it in WAL mode then).
 * - A file locked by another connection is waited for with timers, never
 *   inside the driver, for up to `busyTimeoutMs`; then the claim rejects and
 *   the handler answers 503 (a completion or a release tries for 4 000 ms
 *   at least). Leave the driver's `busy_timeout` at 0 (the default of
 *   `node:sqlite` and `bun:sqlite`; better-sqlite3 needs
 *   `{ timeout: 0 }`): the drivers are synchronous, so their wait would stop
 *   every request of the process.
 * - While other code has a transaction open on the same connection, the
 *   store waits for it the same way (a write inside it would be undone by
 *   its `ROLLBACK`), so it cannot run inside a transaction of yours: give it
 *   a connection of its own (on Node 22.13 to 22.15, which do not report an
 *   open transaction, that is the only protection).
 * - `complete` and `release` act only on the caller's own claim (complete
 *   also when the claim has expired and nobody re-took it).
 * - Each claim deletes a bounded batch of expired rows, so the file does not
 *   grow without bound.
 * - Keys are stored as they are, except one holding a lone surrogate or a
 *   NUL (which UTF-8 text would alter), stored as its JSON literal.
 *
 * SQLite errors reject with `STORE_UNAVAILABLE`, except those every attempt
 * meets alike, which reject with `INVALID_ARGUMENT` (a misconfiguration, not
 * an outage): a file this process may not write, a file deleted or
 * replaced under the connection (rollback journal only: in WAL mode SQLite
 * does not notice), a table of the store's name with another shape. A table
 * dropped while the store runs is made again by the next call. Tested on Node 22 and 24
 * and Deno (`node:sqlite`) and Bun (`bun:sqlite`). One machine only: for
 * several, use Redis or PostgreSQL.
 *
 * @throws PayhookError `INVALID_ARGUMENT` for a missing database, a bad
 * table name, clock or `busyTimeoutMs`, a connection to a file with a busy
 * timeout of its own (`PRAGMA busy_timeout` above 0; one in memory is set to
 * 0 instead), or a read-only file without the
 * table; `STORE_UNAVAILABLE` when the table cannot be created otherwise. A
 * file locked by another connection at that moment is no error: the first
 * call sets the table up, waiting for the lock as every call does.
 *
 * @example
 * ```ts
 * // Node 22.13+ and Deno: node:sqlite
 * import { DatabaseSync } from 'node:sqlite';
 * import { createSqliteStore } from 'payhook/sqlite';
 *
 * const database = new DatabaseSync('payhook.sqlite');
 * database.exec('PRAGMA journal_mode = WAL'); // busy_timeout stays 0: payhook waits for a busy file itself
 * const store = createSqliteStore({ database });
 * ```
 *
 * @example
 * ```ts
 * // Bun: bun:sqlite
 * import { Database } from 'bun:sqlite';
 * import { createSqliteStore } from 'payhook/sqlite';
 *
 * const store = createSqliteStore({ database: new Database('payhook.sqlite') });
 * ```
 */
export function createSqliteStore(options: SqliteStoreOptions): DedupStore {
  const database = (options as Partial<SqliteStoreOptions> | null | undefined)?.database;
  if (typeof database?.exec !== 'function' || typeof database.prepare !== 'function') {
    throw misuse('createSqliteStore needs { database }: an open DatabaseSync (node:sqlite) or Database (bun:sqlite).');
  }
  const table = options.table ?? 'payhook_deliveries';
  // Tables and indexes share SQLite's names, and each store names its index <table>_expires_at.
  if (typeof table !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(table) || /^sqlite_|_expires_at$/i.test(table)) {
    throw misuse(
      'table must be a name of letters, digits and _, not starting with a digit or sqlite_, ' +
        'nor ending in _expires_at (the store names its index <table>_expires_at).',
    );
  }
  const clock = storeClock(options.now);
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  if (typeof busyTimeoutMs !== 'number' || !(busyTimeoutMs >= 0 && busyTimeoutMs <= 2_147_483_647)) {
    throw misuse('busyTimeoutMs must be a number of milliseconds from 0 to 2147483647.');
  }
  const driverWaitMs = driverBusyTimeout(database);
  if (driverWaitMs > 0) {
    throw misuse(
      `The connection waits ${driverWaitMs} ms inside the driver for a locked file, stopping the whole process: ` +
        'open it without a timeout option (better-sqlite3: { timeout: 0 }) or run PRAGMA busy_timeout = 0; the store waits itself.',
    );
  }

  // Errors every retry meets alike (a misconfiguration, not an outage), told by SQLite's own words, the same in
  // every driver, and for a file replaced under the connection by its extended code.
  function lastingFault(cause: unknown): string | undefined {
    const { errcode, code, message } = (cause ?? {}) as Record<string, unknown>;
    if (errcode === SQLITE_READONLY_DBMOVED || code === 'SQLITE_READONLY_DBMOVED') {
      return 'The file was replaced or deleted under this connection: open it again (restart).';
    }
    const text = String(message);
    if (/readonly database/.test(text)) return 'Let this process write the file and its folder.';
    // The store's statements upsert on the key: only a table of someone else's shape makes them fail so.
    if (/constraint failed|no such column|ON CONFLICT clause does not match/.test(text)) {
      return `Table "${table}" has another shape: give the store its own (option table).`;
    }
    return undefined;
  }

  function unavailable(what: string, cause: unknown, waitedMs: number): PayhookError {
    const fix = lastingFault(cause);
    if (fix !== undefined) {
      return new PayhookError('INVALID_ARGUMENT', `SQLite ${what} failed: ${describeError(cause)}. ${fix}`, { cause });
    }
    const busy = isBusy(cause) ? ` (the file stayed locked by another connection for ${waitedMs} ms)` : '';
    return new PayhookError('STORE_UNAVAILABLE', `SQLite ${what} failed${busy}: ${describeError(cause)}`, { cause });
  }

  // Each step is one synchronous run of statements that never opens a
  // transaction itself, so one open now is someone else's.
  const inOtherTransaction = (): boolean => database.isTransaction === true || database.inTransaction === true;

  // The table is set up now, so a file that cannot hold it fails at start-up. A file locked at that
  // moment (rollback journal: even reading the schema waits for an EXCLUSIVE lock) is not waited for
  // here, which would stop the event loop: the first call sets up, in attempt(), as it waits for any lock.
  let statements: Statements | undefined;
  try {
    // A table made inside a transaction other code holds open would go with its ROLLBACK: set up at the first call.
    if (!inOtherTransaction()) statements = prepare(database, table);
  } catch (cause) {
    if (!isBusy(cause)) throw unavailable('creating the table', cause, 0);
  }
  const ready = (): Statements => (statements ??= prepare(database, table));

  /**
   * Runs a synchronous step as a store call: misuse and SQLite errors become
   * rejections, never throws. The drivers are synchronous, so a busy file is
   * not waited for inside them (that would stop the event loop): the step is
   * tried again after a timer, until `budgetMs` has passed (real time, as
   * the timers are; the injected clock is for expiry only). Each statement
   * commits on its own, so the one that found the file busy changed nothing,
   * and running again those before it (the sweep, the set-up) is harmless.
   */
  async function attempt<T>(
    what: string,
    budgetMs: number,
    check: () => void,
    step: (statements: Statements) => T,
  ): Promise<T> {
    check();
    const deadline = performance.now() + budgetMs;
    let remade = false;
    for (let tries = 0; ; tries++) {
      let cause: unknown;
      try {
        // The table is set up first if the file was locked when the store was created.
        if (!inOtherTransaction()) return step(ready());
        // A write made now would join that transaction: its ROLLBACK would
        // undo a claim already reported taken. Waited for like a lock.
        cause = new Error('other code has a transaction open on this connection (give the store one of its own)');
      } catch (error) {
        if (error instanceof PayhookError) throw error; // misuse (a clock that answers no time), not SQLite
        // Dropped by other code (a migration tool sweeping tables it does not know): made again, as at start-up;
        // its records are gone as they would be with the file. Once per call, so a table that cannot stay is an error.
        if (!remade && /no such table/.test(String((error as { message?: unknown } | null)?.message))) {
          remade = true;
          statements = undefined;
          continue;
        }
        if (!isBusy(error)) throw unavailable(what, error, budgetMs);
        cause = error;
      }
      const left = deadline - performance.now();
      if (left <= 0) throw unavailable(what, cause, budgetMs);
      // 1, 2, 4 … ms up to MAX_BUSY_PAUSE_MS, with jitter so processes sharing the file do not retry in step.
      const pauseMs = Math.min(2 ** tries, MAX_BUSY_PAUSE_MS) * (0.5 + Math.random() / 2);
      await pause(Math.min(pauseMs, left));
    }
  }

  // A claim that finds the file busy is answered 503 and retried by the service: nothing lost. A completion given up
  // leaves the delivery claimed, and a copy after the lease handled again; under a burst, payhook's own workers can
  // keep a file locked at every try for a second. So it tries longer; a release, so as not to hold the delivery for
  // a lease, the same.
  const settleBudgetMs = Math.max(busyTimeoutMs, SETTLE_BUSY_TIMEOUT_MS);

  return {
    claim: (key: string, claimOptions: ClaimOptions): Promise<ClaimResult> => {
      const token = newClaimToken();
      return attempt(
        'claim',
        busyTimeoutMs,
        () => {
          checkKey(key);
          checkLease(claimOptions?.leaseMs);
        },
        ({ sweep, claim, completed }): ClaimResult => {
          const now = clock();
          sweep.run(now);
          const stored = storedKey(key);
          // all(), not get(): node:sqlite's get() reads the first row and resets the statement without
          // looking at the reset, and the reset is where the claim commits. A commit refused because
          // another connection reads the file (rollback journal) was then lost, with the claim reported
          // taken; all() runs the statement to its end and throws it, so it is tried again.
          if (claim.all(stored, token, now + claimOptions.leaseMs, now).length > 0) {
            return { status: 'claimed', token };
          }
          // Held or completed; or released by another process in between,
          // which reads as held: the service retries either way.
          return completed.all(stored, now).length > 0 ? { status: 'completed' } : { status: 'in-progress' };
        },
      );
    },
    complete: (key: string, token: string, completeOptions: CompleteOptions): Promise<void> =>
      attempt(
        'complete',
        settleBudgetMs,
        () => {
          checkKey(key);
          checkToken(token);
          checkRetention(completeOptions?.retentionMs);
        },
        ({ complete }) => {
          const { retentionMs } = completeOptions;
          const now = clock();
          complete.run(storedKey(key), retentionMs === Infinity ? null : now + retentionMs, token, now);
        },
      ),
    release: (key: string, token: string): Promise<void> =>
      attempt(
        'release',
        settleBudgetMs,
        () => {
          checkKey(key);
          checkToken(token);
        },
        ({ release }) => {
          release.run(storedKey(key), token);
        },
      ),
  };
}
