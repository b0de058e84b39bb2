/**
 * The postgres.js adapter: statements through `sql.unsafe`, transactions
 * through `sql.begin` and `savepoint`, kept from sending anything on a
 * connection that is gone (postgres.js would throw that out of a timer).
 *
 * @module
 */
import { misuse } from '../lib/misuse.js';
import { connectionLost, isConnectionLoss } from './faults.js';
import type {
  Connection,
  PostgresJsLike,
  PostgresJsTransactionLike,
  Row,
  Runner,
  Transact,
  Transaction,
} from './driver.js';

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

/** The statement runner for a postgres.js `sql` or transaction. */
export function postgresJsRunner(client: PostgresJsLike): Runner {
  return async (text, values = []) => {
    const rows: Row[] = [];
    for (const row of await client.unsafe(text, [...values])) rows.push(row as Row);
    stopTypeFetches(client);
    return rows;
  };
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
      if (isConnectionLoss(error, 'postgres.js')) liveness.lost ??= error;
      throw error;
    }
  };
}

function postgresJsTransaction(tx: PostgresJsTransactionLike, liveness: Liveness): Transaction {
  return {
    run: guardedRunner(postgresJsRunner(tx), liveness),
    connection: tx,
    // postgres.js tracks failed statements per scope and fails the scope for
    // them, so the savepoint must be its own (a raw SAVEPOINT would not isolate them).
    async savepoint<T>(work: (scope: Connection) => Promise<T>): Promise<T> {
      if (liveness.lost !== undefined) throw connectionLost(liveness.lost);
      let result: { value: T } | undefined;
      await tx.savepoint(async (inner) => {
        try {
          result = { value: await work({ run: guardedRunner(postgresJsRunner(inner), liveness), connection: inner }) };
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

/** The transaction runner for a postgres.js `sql`: `sql.begin`, or `begin` missing on a transaction given instead. */
export function postgresJsTransactor(sql: PostgresJsLike, caller: string): Transact {
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
          result = { value: await work(postgresJsTransaction(tx, liveness)) };
        } catch (error) {
          await holdIfClosed(liveness);
          throw error;
        }
      });
    } catch (error) {
      // postgres.js gives a transaction up when its connection closes, while `work` may still be running.
      if (isConnectionLoss(error, 'postgres.js')) {
        liveness.lost ??= error;
        closed();
      }
      throw error;
    }
    if (result === undefined) throw new Error('postgres.js ended a transaction without running it');
    return result.value;
  };
}
