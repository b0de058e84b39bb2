/**
 * Entry `payhook/postgres`: deduplication and a transactional inbox in the
 * PostgreSQL database that holds your orders. It takes your client as it is —
 * `pg` (node-postgres) or `postgres` (postgres.js) — through minimal
 * structural types, so payhook depends on neither.
 *
 * @module
 */
export { createPostgresStore } from './store.js';
export type { PostgresStore, PostgresStoreOptions } from './store.js';
export { createPostgresInbox } from './inbox.js';
export type {
  InboxAbortSignal,
  InboxDelivery,
  InboxHandler,
  InboxHealth,
  InboxOutcome,
  InboxProcessOptions,
  InboxRetryOptions,
  InboxStats,
  InboxTransaction,
  InboxWorker,
  PostgresInbox,
  PostgresInboxOptions,
} from './inbox-types.js';
export type {
  PgPoolClientLike,
  PgPoolLike,
  PgQueryable,
  PostgresClientLike,
  PostgresJsLike,
  PostgresJsTransactionLike,
} from './driver.js';
export type { ClaimOptions, ClaimResult, CompleteOptions, DedupStore } from '../dedup/store.js';
