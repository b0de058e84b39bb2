/**
 * How payhook's own strings and names go into PostgreSQL: keys as text
 * one-to-one, table names only as plain identifiers.
 *
 * @module
 */
import { misuse } from '../lib/misuse.js';

// A string as a `text` value, one-to-one (a lone surrogate, a NUL or a
// leading `"` makes it its JSON literal): the mapping every store shares.
export { storedKey as asText } from '../dedup/stored-key.js';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

/** A table name as given (`name` or `schema.name`); anything else could inject SQL, so it is refused. */
export function checkTable(table: unknown, caller: string): string {
  if (typeof table !== 'string' || !IDENTIFIER.test(table)) {
    throw misuse(
      `${caller}: table must be a plain SQL identifier (name or schema.name), not ${JSON.stringify(table)}.`,
    );
  }
  // PostgreSQL folds an unquoted name to lower case: `Payhook_Schema` is the version table too.
  if (table.slice(table.indexOf('.') + 1).toLowerCase() === 'payhook_schema') {
    throw misuse(
      `${caller}: table must not be named payhook_schema: payhook records its tables' schema versions there. Choose another name.`,
    );
  }
  return table;
}

/** PostgreSQL's largest `int`: the statements take these counts as `int`. */
const MAX_INT = 2_147_483_647;

/** Internal: a whole-number option from `min` to PostgreSQL's largest `int` (`fallback` when absent). */
export function intOption(value: unknown, name: string, fallback: number, min: 0 | 1): number {
  const n = value ?? fallback;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > MAX_INT) {
    throw misuse(`${name} must be a whole number from ${min} to ${MAX_INT}, not ${String(value)}.`);
  }
  return n;
}
