// payhook/sqlite with no @types/node and no Bun types: the database is
// structural. The classes below copy the parts of node:sqlite's DatabaseSync
// and bun:sqlite's Database that matter here (their parameter and result
// types), so the real handles are shown to fit.
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

export const onNode: DedupStore = createSqliteStore({ database: new DatabaseSync('payhook.sqlite') });
export const onBun: DedupStore = createSqliteStore({
  database: new Database('payhook.sqlite'),
  table: 'shop_deliveries',
});
