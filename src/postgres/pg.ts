/**
 * The `pg` (node-postgres) adapter: statements through `query`, transactions
 * on a connection checked out of a Pool with BEGIN/COMMIT and SAVEPOINT.
 *
 * @module
 */
import { connectionLost, isConnectionLoss } from './faults.js';
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
