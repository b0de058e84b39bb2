/**
 * The one way payhook talks to a PostgreSQL client, whichever driver it is:
 * a statement runner, a transaction runner, and one for migrations. The
 * drivers' own adapters are `pg.ts` and `postgres-js.ts`.
 *
 * @module
 */
import { misuse } from '../lib/misuse.js';
import { isPg, isPgPool, isPostgresJs, type PgQueryable, type Runner, type Transact } from './driver.js';
import { pgRunner, pgTransact } from './pg.js';
import { postgresJsRunner, postgresJsTransactor } from './postgres-js.js';
import { controlSql } from './sql.js';

/** The statement runner for `client`, or INVALID_ARGUMENT when it is neither driver. */
export function runnerFor(client: unknown, caller: string): Runner {
  // postgres.js first: its `sql` is a function object, and a pg object never has `unsafe`.
  if (isPostgresJs(client)) return postgresJsRunner(client);
  if (isPg(client)) return pgRunner(client);
  throw misuse(`${caller} needs { client }: a pg Pool or Client, or a postgres.js sql instance.`);
}

/**
 * The transaction runner for `client`: `sql.begin` for postgres.js, a
 * checked-out connection with BEGIN/COMMIT for a `pg` Pool. A single `pg`
 * Client is refused: the inbox runs several transactions at once, and a
 * Client would mix them (and the handler's inserts) into one.
 */
export function transactorFor(client: unknown, caller: string): Transact {
  if (isPostgresJs(client)) return postgresJsTransactor(client, caller);
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
