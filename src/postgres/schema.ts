/**
 * The versioned schema of a store or inbox table: `migrate()` applies the
 * ordered steps from the version recorded in `payhook_schema` (from the
 * first when the table itself is missing), in one
 * transaction under an advisory lock (so any number of processes may run it
 * at once), and `ready()` checks at first use that the table is at the
 * version this payhook needs, failing with the fix when it is not.
 *
 * @module
 */
import { PayhookError } from '../errors.js';
import { describeError, misuse } from '../lib/misuse.js';
import { migrationTransactor, runnerFor } from './client.js';
import { fault, sqlState } from './faults.js';
import { MIGRATION_LOCK, MIGRATION_QUIET, versionSql, versionTableOf } from './sql.js';

/** The fix a statement names when the table is missing or a privilege is: `kind` is the variable in it. */
export const tableFix = (kind: SchemaOptions['kind']): string =>
  `Run \`await ${kind}.migrate()\` once, and grant the role SELECT, INSERT, UPDATE, DELETE on the table and SELECT on payhook_schema.`;

/** The schema of one table, as its store or inbox uses it. */
export interface Schema {
  /** The whole DDL, version record included, to copy into the merchant's own migrations. */
  readonly ddl: string;
  /** Brings the table to the current version (safe to run from many processes at once). */
  readonly migrate: () => Promise<void>;
  /**
   * Resolves once the table is known to be at the current version (checked
   * once, then remembered); with `autoMigrate`, migrates instead of failing.
   */
  readonly ready: () => Promise<void>;
  /** Whether `ready()` has already succeeded (a fast path for every statement). */
  readonly checked: boolean;
}

export interface SchemaOptions {
  /** `'store'` or `'inbox'`: the variable name in the fix the error message gives. */
  kind: 'store' | 'inbox';
  client: unknown;
  table: string;
  caller: string;
  steps: readonly (readonly string[])[];
  autoMigrate: boolean;
}

/** The schema of `options.table`. */
export function schemaFor(options: SchemaOptions): Schema {
  const { kind, table, steps, caller } = options;
  const versions = versionTableOf(table);
  // Folded as PostgreSQL folds the unquoted name: `dup_inbox` and `DUP_INBOX` are one table, so one record.
  const name = `${kind}:${table.toLowerCase()}`;
  const current = steps.length;
  const run = runnerFor(options.client, caller);
  const transact = migrationTransactor(options.client, caller);
  const fix =
    `Run \`await ${kind}.migrate()\` once (at deploy, with a role that may create tables), ` +
    `or apply \`${kind}.schema\` in your own migrations; the role payhook runs as also needs SELECT on payhook_schema.`;

  async function apply(): Promise<void> {
    try {
      await transact(async (tx) => {
        await tx.run(MIGRATION_QUIET);
        await tx.run(MIGRATION_LOCK);
        await tx.run(versionSql.create(versions));
        const [row] = await tx.run(versionSql.read(versions), [name, table]);
        const recorded = Number(row?.['version'] ?? 0);
        if (recorded > current) throw newer(recorded);
        if (recorded === current) return;
        for (const step of steps.slice(recorded)) {
          for (const statement of step) await tx.run(statement);
        }
        await tx.run(versionSql.record(versions), [name, String(current)]);
      });
    } catch (error) {
      throw (
        refusedName(error) ??
        fault(`${kind} migration of ${table}`, error, 'Run it with a role that may create tables.')
      );
    }
  }

  /**
   * payhook's statements are fixed but for the table name, so a syntax error
   * (42601) is the name's: a reserved key word (`order`, `user`…) cannot name
   * a table or schema unquoted. Retrying cannot cure it: not an outage.
   */
  function refusedName(error: unknown): PayhookError | undefined {
    if (sqlState(error) !== '42601') return undefined;
    return new PayhookError(
      'INVALID_ARGUMENT',
      `PostgreSQL refused a statement for the table name ${table} (${describeError(error)}): ` +
        'a reserved key word (order, user…) cannot be one, so give another name; otherwise the server lacks syntax payhook uses.',
      { cause: error },
    );
  }

  function newer(recorded: number): PayhookError {
    return misuse(
      `PostgreSQL table ${table} is at payhook schema version ${recorded}, newer than this payhook knows ` +
        `(${current}): upgrade payhook in this process.`,
    );
  }

  let checked = false;
  let checking: Promise<void> | undefined;

  async function check(): Promise<void> {
    let recorded = 0;
    try {
      const [row] = await run(versionSql.read(versions), [name, table]);
      recorded = Number(row?.['version'] ?? 0);
    } catch (error) {
      // No version table: nothing was migrated in this schema yet.
      if (sqlState(error) !== '42P01') {
        throw refusedName(error) ?? fault(`${kind} schema check of ${table}`, error, fix);
      }
    }
    if (recorded > current) throw newer(recorded);
    if (recorded < current) {
      if (options.autoMigrate) return apply();
      const found =
        recorded === 0
          ? 'is not set up (the table, or the record of its payhook schema version, is missing)'
          : `is at payhook schema version ${recorded}`;
      throw misuse(`PostgreSQL table ${table} ${found}; this payhook needs version ${current}. ${fix}`);
    }
  }

  let migrating: Promise<void> | undefined;
  return {
    ddl: [
      versionSql.create(versions),
      ...steps.flat(),
      versionSql.record(versions).replace('$1::text', `'${name}'`).replace('$2::int', String(current)),
    ]
      .map((statement) => `${statement};`)
      .join('\n'),
    get checked() {
      return checked;
    },
    migrate() {
      // Calls in this process share one run; other processes wait on the advisory lock.
      migrating ??= apply()
        .then(() => {
          checked = true;
        })
        .finally(() => {
          migrating = undefined;
        });
      return migrating;
    },
    ready() {
      if (checked) return Promise.resolve();
      checking ??= check()
        .then(() => {
          checked = true;
        })
        .finally(() => {
          checking = undefined;
        });
      return checking;
    },
  };
}
