/**
 * How payhook reads a PostgreSQL driver's errors: the SQLSTATE, whether the
 * connection itself is gone, and the PayhookError a failed statement becomes.
 *
 * @module
 */
import { PayhookError } from '../errors.js';
import { describeError } from '../lib/misuse.js';

/** The SQLSTATE of a driver error (`pg` and postgres.js both put it in `code`), when it is one. */
export function sqlState(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  // postgres.js also puts its own connection codes (CONNECTION_CLOSED, …) in `code`: those are not SQLSTATEs.
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * postgres.js's own codes for a connection that is gone, and Node's socket
 * and stream codes (ECONNRESET, EAI_AGAIN, ERR_SOCKET_CLOSED,
 * ERR_STREAM_DESTROYED…); not Node's other ERR_* codes (ERR_INVALID_ARG_TYPE
 * for a value a driver cannot send is the statement's failure).
 */
const LOST = /^(?:CONNECTION_[A-Z_]+|CONNECT_TIMEOUT|E(?!RR_)[A-Z_]+|ERR_(?:SOCKET|STREAM)_[A-Z_]+)$/;

/**
 * Whether a driver error means the connection itself is gone: postgres.js's
 * CONNECTION_* codes, a socket or stream error, a state of class 08
 * (connection exception) or 57P (the server ending the session, e.g.
 * `pg_terminate_backend`), and for `pg` an error with no code at all (its
 * "Connection terminated"). postgres.js codes every loss, so there an error
 * without a code (a value it cannot serialise, such as a BigInt inside a JSON
 * parameter) is the statement's. Another code (postgres.js's UNDEFINED_VALUE
 * for a statement it refuses to send, any other SQLSTATE) leaves the
 * connection usable: the failure is the statement's, and it must be recorded
 * as such.
 */
export function isConnectionLoss(error: unknown, driver: 'pg' | 'postgres.js'): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (typeof code !== 'string') return driver === 'pg';
  if (LOST.test(code)) return true;
  // The server ends a session with a FATAL; after an ERROR it goes on (08P01
  // for a statement sent with too few parameters is the statement's).
  if ((error as { severity?: unknown }).severity === 'ERROR') return false;
  const state = sqlState(error);
  return state !== undefined && (state.startsWith('08') || state.startsWith('57P'));
}
/** The error that lost a connection, as an `Error` (for pg's `release(error)`, or to throw again). */
export function connectionLost(cause: unknown): Error {
  return cause instanceof Error ? cause : new Error(describeError(cause));
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
  // Every retry fails alike for a character the database's encoding cannot hold (a Cyrillic key in a LATIN1
  // database) and for a value over one of PostgreSQL's limits (class 54: a key too long for a btree index).
  const advice =
    state === '22021' || state === '22P05'
      ? "The database's encoding cannot hold this text: use a UTF8 database."
      : state?.startsWith('54')
        ? 'A key this long does not fit its index (about 2,700 bytes once compressed): from a dedupKey of your own, return a hash.'
        : state !== undefined && MISCONFIGURED.has(state)
          ? fix
          : undefined;
  if (advice !== undefined) {
    return new PayhookError('INVALID_ARGUMENT', `PostgreSQL ${what} failed: ${describeError(cause)}. ${advice}`, {
      cause,
    });
  }
  return unavailable(what, cause);
}

/** A database failure as payhook reports it: STORE_UNAVAILABLE, the driver's error kept as `cause`. */
export function unavailable(what: string, cause: unknown): PayhookError {
  return new PayhookError('STORE_UNAVAILABLE', `PostgreSQL ${what} failed: ${describeError(cause)}`, { cause });
}
