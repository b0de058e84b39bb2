/**
 * Every SQL statement payhook sends to PostgreSQL, each a function of the
 * table names it touches, so all of them can be read (and snapshot-tested)
 * in one place. Table names reach here only after `checkTable` has accepted
 * them as plain identifiers; values always travel as parameters, as text
 * cast in the statement itself so both drivers send them alike. Every column
 * payhook reads back is named by one lower-case word (`AS oldest`), which a
 * column-name transform of the merchant's client (postgres.js's
 * `postgres.camel` or `kebab`) leaves as it is.
 *
 * @module
 */

/** The table that records each payhook table's schema version, beside it (same schema). */
export function versionTableOf(table: string): string {
  const dot = table.indexOf('.');
  return dot === -1 ? 'payhook_schema' : `${table.slice(0, dot)}.payhook_schema`;
}

/** `schema.name` as one identifier fragment, for the names of indexes and constraints. */
function flat(table: string): string {
  return table.replace('.', '_');
}

/**
 * One advisory lock for every payhook migration of a database: two
 * processes migrating at once take turns, the second finding the work done.
 */
export const MIGRATION_LOCK = `SELECT pg_advisory_xact_lock(hashtext('payhook schema migration'))`;

/**
 * Keeps a migration's `IF NOT EXISTS` from sending a notice ("relation …
 * already exists, skipping") at every start, which postgres.js prints by
 * default: for the migration's transaction only.
 */
export const MIGRATION_QUIET = 'SET LOCAL client_min_messages = warning';

export const versionSql = {
  create: (versions: string) => `CREATE TABLE IF NOT EXISTS ${versions} (
  name text PRIMARY KEY,
  version integer NOT NULL,
  migrated_at timestamptz NOT NULL DEFAULT clock_timestamp()
)`,
  /**
   * The version recorded for a table, however its name was spelled: payhook
   * records the name folded to lower case, as PostgreSQL folds an unquoted
   * one, and before that recorded it as given (`COLLATE "C"` folds ASCII only,
   * whatever the database's locale). None (null) while the table itself
   * (`$2`) is missing: a record outlives a `DROP TABLE` or a partial restore.
   */
  read: (versions: string) =>
    `SELECT CASE WHEN to_regclass($2::text) IS NOT NULL THEN max(version) END AS version
FROM ${versions} WHERE lower(name COLLATE "C") = $1::text`,
  record: (versions: string) => `INSERT INTO ${versions} (name, version) VALUES ($1::text, $2::int)
ON CONFLICT (name) DO UPDATE SET version = excluded.version, migrated_at = clock_timestamp()`,
};

/**
 * The store's schema, as ordered steps: step `n` (from 1) takes a table at
 * version `n - 1` to version `n`. Each step is a list of single statements
 * (postgres.js sends one statement per call).
 */
export function storeSteps(table: string): readonly (readonly string[])[] {
  return [
    [
      `CREATE TABLE IF NOT EXISTS ${table} (
  key text PRIMARY KEY,
  state text NOT NULL CHECK (state IN ('claimed', 'completed')),
  token text,
  expires_at timestamptz NOT NULL
)`,
      `CREATE INDEX IF NOT EXISTS ${flat(table)}_expires_at ON ${table} (expires_at)`,
    ],
  ];
}

/** The inbox's schema steps; step 2 adds the `parked` state. */
export function inboxSteps(table: string): readonly (readonly string[])[] {
  return [
    [
      `CREATE TABLE IF NOT EXISTS ${table} (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id text NOT NULL,
  status text NOT NULL,
  body json NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  last_error text,
  received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  done_at timestamptz,
  UNIQUE (delivery_id, status)
)`,
      `CREATE INDEX IF NOT EXISTS ${flat(table)}_due ON ${table} (next_attempt_at, id) WHERE state = 'pending'`,
    ],
    [
      // The state check of step 1 has a name PostgreSQL chose: find it rather than guess it.
      `DO $payhook$ DECLARE c text; BEGIN
  FOR c IN SELECT conname FROM pg_constraint
    WHERE conrelid = '${table}'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%state%'
  LOOP
    EXECUTE format('ALTER TABLE ${table} DROP CONSTRAINT %I', c);
  END LOOP;
END $payhook$`,
      `ALTER TABLE ${table} ADD CONSTRAINT ${flat(table)}_state
  CHECK (state IN ('pending', 'done', 'failed', 'parked'))`,
      `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS parked_reason text`,
    ],
  ];
}

/** The store's statements. */
export function storeSql(table: string) {
  return {
    claim: `INSERT INTO ${table} AS t (key, state, token, expires_at)
VALUES ($1::text, 'claimed', $2::text, clock_timestamp() + $3::float8 * interval '1 millisecond')
ON CONFLICT (key) DO UPDATE SET state = 'claimed', token = excluded.token, expires_at = excluded.expires_at
WHERE t.expires_at <= clock_timestamp()
RETURNING t.token`,
    state: `SELECT state, expires_at > clock_timestamp() AS live FROM ${table} WHERE key = $1::text`,
    /** The common case: the caller's own claim is still there. */
    complete: `UPDATE ${table} SET state = 'completed', token = NULL,
  expires_at = COALESCE(clock_timestamp() + $3::float8 * interval '1 millisecond', 'infinity'::timestamptz)
WHERE key = $1::text AND state = 'claimed' AND token = $2::text
RETURNING 1`,
    /** When `complete` found nothing: a row that is gone (pruned after its lease passed) is completed too. */
    completeGone: `INSERT INTO ${table} AS t (key, state, token, expires_at)
VALUES ($1::text, 'completed', NULL,
  COALESCE(clock_timestamp() + $3::float8 * interval '1 millisecond', 'infinity'::timestamptz))
ON CONFLICT (key) DO UPDATE SET state = 'completed', token = NULL, expires_at = excluded.expires_at
WHERE t.state = 'claimed' AND t.token = $2::text`,
    release: `DELETE FROM ${table} WHERE key = $1::text AND state = 'claimed' AND token = $2::text`,
    prune: `DELETE FROM ${table} WHERE ctid = ANY (ARRAY(
  SELECT ctid FROM ${table} WHERE expires_at <= clock_timestamp() LIMIT $1::int FOR UPDATE SKIP LOCKED))
RETURNING 1`,
  };
}

/** The inbox's statements. */
export function inboxSql(table: string) {
  return {
    enqueue: `INSERT INTO ${table} (delivery_id, status, body) VALUES ($1::text, $2::text, $3::text::json)
ON CONFLICT (delivery_id, status) DO NOTHING`,
    /**
     * Also reads the transaction's id, which each mark below checks: a mark
     * that finds another one (the handler ran COMMIT or ROLLBACK, and the mark
     * went out on its own) changes nothing. Read outside the locking query, so
     * that a poll finding every due row locked by other workers uses up no id.
     */
    take: `WITH taken AS (
  SELECT id, delivery_id, status, body, attempts FROM ${table}
  WHERE state = 'pending' AND next_attempt_at <= clock_timestamp()
  ORDER BY next_attempt_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
)
SELECT id::text AS id, delivery_id AS delivery, status, body::text AS body, attempts, txid_current()::text AS txid
FROM taken`,
    done: `UPDATE ${table} SET state = 'done', attempts = attempts + 1, done_at = clock_timestamp()
WHERE id = $1::bigint AND txid_current() = $2::bigint RETURNING state`,
    parked: `UPDATE ${table} SET state = 'parked', attempts = attempts + 1, done_at = clock_timestamp(),
  parked_reason = $2::text
WHERE id = $1::bigint AND txid_current() = $3::bigint RETURNING state`,
    fail: `UPDATE ${table} SET attempts = attempts + 1, last_error = $2::text,
  next_attempt_at = clock_timestamp() + $3::float8 * interval '1 millisecond',
  state = CASE WHEN attempts + 1 >= $4::int THEN 'failed' ELSE 'pending' END
WHERE id = $1::bigint AND txid_current() = $5::bigint RETURNING state`,
    /**
     * A row whose handler ended payhook's transaction: given up, outside any
     * transaction of payhook's, unless another worker has taken it since
     * (its attempts or state moved on, or it holds the row: not waited for,
     * as a transaction the handler prepared would hold it for good).
     */
    abandon: `UPDATE ${table} SET state = 'failed', attempts = attempts + 1, last_error = $2::text
WHERE id = (SELECT id FROM ${table} WHERE id = $1::bigint AND state = 'pending' AND attempts = $3::int
  FOR UPDATE SKIP LOCKED)
RETURNING state`,
    stats: `SELECT count(*) FILTER (WHERE state = 'pending')::int AS pending,
  count(*) FILTER (WHERE state = 'pending' AND attempts > 0)::int AS retrying,
  count(*) FILTER (WHERE state = 'failed')::int AS failed,
  count(*) FILTER (WHERE state = 'parked')::int AS parked,
  count(*) FILTER (WHERE state = 'done')::int AS done,
  (extract(epoch FROM clock_timestamp() - min(received_at) FILTER (WHERE state = 'pending')) * 1000)::float8
    AS oldest
FROM ${table}`,
    retryFailed: `UPDATE ${table} SET state = 'pending', attempts = 0, next_attempt_at = clock_timestamp()
WHERE state = 'failed' RETURNING 1`,
    prune: `DELETE FROM ${table} WHERE ctid = ANY (ARRAY(
  SELECT ctid FROM ${table}
  WHERE state IN ('done', 'parked') AND done_at < clock_timestamp() - $1::float8 * interval '1 millisecond'
  LIMIT $2::int FOR UPDATE SKIP LOCKED))
RETURNING 1`,
  };
}

/** Transaction control, and the savepoint the inbox runs a handler under. */
export const controlSql = {
  begin: 'BEGIN',
  commit: 'COMMIT',
  rollback: 'ROLLBACK',
  savepoint: 'SAVEPOINT payhook_savepoint',
  releaseSavepoint: 'RELEASE SAVEPOINT payhook_savepoint',
  rollbackToSavepoint: 'ROLLBACK TO SAVEPOINT payhook_savepoint',
};
