/**
 * The `pg` (node-postgres) adapter: statements through `query`, transactions
 * on a connection checked out of a Pool with BEGIN/COMMIT and SAVEPOINT.
 *
 * @module
 */
import { describeError } from '../lib/misuse.js';
import { connectionLost, isConnectionLoss, sqlState } from './faults.js';
import { controlSql } from './sql.js';
import type { Connection, PgPoolClientLike, PgPoolLike, PgQueryable, Row, Runner, Transact } from './driver.js';

/** The statement runner for a `pg` Pool, Client or PoolClient. */
export function pgRunner(client: PgQueryable): Runner {
  return async (text, values = []) => {
    const rows: Row[] = [];
    for (const row of (await client.query(text, [...values])).rows) rows.push(row as Row);
    return rows;
  };
}

/**
 * A transaction on a connection checked out of a `pg` Pool. While payhook
 * holds the connection it listens for `'error'` (a connection dropped by the
 * server, e.g. `pg_terminate_backend`, emits one, and an EventEmitter with no
 * listener throws it out of the process); a connection that raised one, or
 * whose statements failed without an SQLSTATE, or whose ROLLBACK failed, is
 * released as broken so the pool destroys it rather than reuse it.
 */
export function pgTransact(pool: PgPoolLike): Transact {
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
    const run = pgRunner(connection);
    const statement: Runner = async (text, values) => {
      if (released) throw new Error('the connection was dropped');
      try {
        return await run(text, values);
      } catch (error) {
        if (isConnectionLoss(error, 'pg')) broken ??= connectionLost(error);
        throw error;
      }
    };
    const savepoint = async <T>(inner: (scope: Connection) => Promise<T>): Promise<T> => {
      await statement(controlSql.savepoint);
      // The first of inner's statements that failed: when inner caught it, the next statement (or RELEASE) fails with
      // "current transaction is aborted", which names no statement; this error does (postgres.js reports it itself).
      let caught: unknown;
      const run: Runner = (text, values) =>
        statement(text, values).catch((error: unknown) => {
          caught ??= error;
          throw error;
        });
      try {
        const result = await inner({ run, connection });
        // Fails when one of the statements failed (the transaction is aborted): a failure too.
        await statement(controlSql.releaseSavepoint);
        return result;
      } catch (error) {
        await statement(controlSql.rollbackToSavepoint);
        if (caught === undefined || caught === error || sqlState(error) !== '25P02') throw error;
        const message = `A statement failed (its error caught) and aborted the transaction: ${describeError(caught)}`;
        // eslint-disable-next-line preserve-caught-error -- the cause is the statement that failed, not the 25P02 after it
        throw new Error(message, { cause: caught });
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
      // The server ended the session with a FATAL naming why (an idle-in-transaction timeout, a shutdown), which
      // came as the connection's 'error'; what failed after it says only that the connection is unusable.
      throw broken !== undefined && sqlState(broken) !== undefined && sqlState(error) === undefined ? broken : error;
    } finally {
      holder?.letGo();
      release();
    }
  };
}
