import { createSqliteStore, type DedupStore, type SqliteDatabaseLike } from 'payhook/sqlite';

export type Store = DedupStore;
export type Create = typeof createSqliteStore;
export type Database = SqliteDatabaseLike;
