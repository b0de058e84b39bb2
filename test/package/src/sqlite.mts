// payhook/sqlite with no @types/node, no Bun types and no better-sqlite3
// types: the database is structural. The declarations below copy the parts of
// node:sqlite's DatabaseSync, bun:sqlite's Database and @types/better-sqlite3's
// Database that matter here (their parameter and result types; better-sqlite3's
// generic `prepare`), so the real handles are shown to fit.
import { createSqliteStore, type DedupStore } from 'payhook/sqlite';

type SQLInputValue = null | number | bigint | string | Uint8Array;
declare class StatementSync {
  run(...anonymousParameters: SQLInputValue[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...anonymousParameters: SQLInputValue[]): Record<string, unknown> | undefined;
  all(...anonymousParameters: SQLInputValue[]): Record<string, unknown>[];
}
declare class DatabaseSync {
  constructor(path: string);
  exec(sql: string): void;
  prepare(sql: string): StatementSync;
}

type SQLQueryBindings = string | bigint | Uint8Array | number | boolean | null | Record<string, string | number>;
declare class Statement<ReturnType = unknown> {
  run(...params: SQLQueryBindings[]): { changes: number; lastInsertRowid: number | bigint };
  get(...params: SQLQueryBindings[]): ReturnType | null;
  all(...params: SQLQueryBindings[]): ReturnType[];
}
declare class Database {
  constructor(filename?: string);
  exec(sql: string, ...bindings: SQLQueryBindings[]): { changes: number; lastInsertRowid: number | bigint };
  prepare<ReturnType = unknown>(sql: string): Statement<ReturnType>;
}

// @types/better-sqlite3: `prepare` is generic, and a handle is compared with
// SqliteDatabaseLike at its constraint, so one of its statements binds a
// single `{}` (named parameters), which refuses null.
interface BetterSqlite3RunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}
interface BetterSqlite3Statement<BindParameters extends unknown[], Result = unknown> {
  run(...params: BindParameters): BetterSqlite3RunResult;
  get(...params: BindParameters): Result | undefined;
  all(...params: BindParameters): Result[];
}
interface BetterSqlite3Database {
  inTransaction: boolean;
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- better-sqlite3's constraint, as it is
  prepare<BindParameters extends unknown[] | {} = unknown[], Result = unknown>(
    source: string,
  ): BindParameters extends unknown[]
    ? BetterSqlite3Statement<BindParameters, Result>
    : BetterSqlite3Statement<[BindParameters], Result>;
  exec(source: string): this;
}
declare const betterSqlite3: BetterSqlite3Database;

export const onNode: DedupStore = createSqliteStore({ database: new DatabaseSync('payhook.sqlite') });
export const onBun: DedupStore = createSqliteStore({
  database: new Database('payhook.sqlite'),
  table: 'shop_deliveries',
});
export const onBetterSqlite3: DedupStore = createSqliteStore({ database: betterSqlite3 });
