/**
 * The public types of the PostgreSQL inbox (`createPostgresInbox`).
 *
 * @module
 */
import type { PaymentWebhook } from '../webhook/types.js';
import type { PostgresClientLike } from './client.js';

/**
 * Options of `createPostgresInbox`.
 *
 * @example
 * ```ts
 * import type { PostgresInboxOptions } from 'payhook/postgres';
 *
 * const options: PostgresInboxOptions = { client: pool, table: 'shop.payment_inbox' };
 * ```
 */
export interface PostgresInboxOptions {
  /**
   * A `pg` Pool or a postgres.js `sql`. Not a single `pg` Client: workers run
   * several transactions at once, each on its own connection.
   */
  client: PostgresClientLike;
  /**
   * The table, `name` or `schema.name` (a plain identifier).
   * @defaultValue `'payhook_inbox'`
   */
  table?: string;
}

/**
 * The transaction an inbox row is processed in. Run your order update through
 * it: it commits together with the row being marked done, or not at all.
 *
 * @example
 * ```ts
 * import type { InboxTransaction } from 'payhook/postgres';
 *
 * async function markPaid(tx: InboxTransaction, orderId: string): Promise<void> {
 *   await tx.query('UPDATE orders SET paid = true WHERE id = $1', [orderId]);
 * }
 * ```
 */
export interface InboxTransaction {
  /** Runs one statement in the transaction; resolves its rows. */
  query(text: string, values?: readonly unknown[]): Promise<Record<string, unknown>[]>;
  /**
   * The driver's own object for this transaction: the checked-out `pg`
   * `PoolClient`, or postgres.js's transaction `sql` (tagged templates work).
   */
  readonly connection: PostgresClientLike;
}

/**
 * The inbox row being processed, beside its webhook.
 *
 * @example
 * ```ts
 * import type { InboxDelivery } from 'payhook/postgres';
 *
 * const describe = (delivery: InboxDelivery) => `${delivery.deliveryId} (attempt ${delivery.attempt})`;
 * ```
 */
export interface InboxDelivery {
  /** The row's id in the inbox table. */
  readonly id: string;
  /** `webhook.id` as stored: as it is, or its JSON literal when it holds a NUL or a lone surrogate. */
  readonly deliveryId: string;
  /** The normalised status the row was stored under. */
  readonly status: string;
  /** This attempt's number, from 1 (attempts cut short by a crash are not counted). */
  readonly attempt: number;
}

/**
 * Your processing function: apply the payment through `tx`. Resolve to mark
 * the row done in the same transaction; throw to roll your statements back
 * and retry the row later.
 *
 * @example
 * ```ts
 * import type { InboxHandler } from 'payhook/postgres';
 *
 * const apply: InboxHandler = async (webhook, tx) => {
 *   if (webhook.status === 'SUCCEEDED') {
 *     await tx.query('UPDATE orders SET paid_at = now() WHERE id = $1', [webhook.fields.paymentId]);
 *   }
 * };
 * ```
 */
export type InboxHandler = (
  webhook: PaymentWebhook,
  tx: InboxTransaction,
  delivery: InboxDelivery,
) => Promise<void> | void;

/**
 * What one {@link PostgresInbox.processNext} call did: nothing was due
 * (`idle`), the row was applied (`done`), it failed and will be retried
 * (`retrying`), or it failed its last attempt (`failed`).
 *
 * @example
 * ```ts
 * import type { InboxOutcome } from 'payhook/postgres';
 *
 * const busy = (outcome: InboxOutcome): boolean => outcome !== 'idle';
 * ```
 */
export type InboxOutcome = 'idle' | 'done' | 'retrying' | 'failed';

/**
 * How failed rows are retried.
 *
 * @example
 * ```ts
 * import type { InboxRetryOptions } from 'payhook/postgres';
 *
 * const retry: InboxRetryOptions = { maxAttempts: 5, retryDelayMs: (attempt) => attempt * 60_000 };
 * ```
 */
export interface InboxRetryOptions {
  /**
   * Attempts before a row is given up (state `failed`; see
   * {@link PostgresInbox.retryFailed}).
   * @defaultValue `10`
   */
  maxAttempts?: number;
  /**
   * Milliseconds to wait after failed attempt number `attempt` (from 1).
   * @defaultValue doubling from 1 s, at most 1 hour
   */
  retryDelayMs?: (attempt: number) => number;
}

/**
 * The slice of an `AbortSignal` {@link PostgresInbox.process} listens to.
 *
 * @example
 * ```ts
 * import type { InboxAbortSignal } from 'payhook/postgres';
 *
 * const signal: InboxAbortSignal = AbortSignal.timeout(60_000);
 * ```
 */
export interface InboxAbortSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * Options of {@link PostgresInbox.process}.
 *
 * @example
 * ```ts
 * import type { InboxProcessOptions } from 'payhook/postgres';
 *
 * const options: InboxProcessOptions = { concurrency: 4, pollIntervalMs: 500, signal: AbortSignal.timeout(3_600_000) };
 * ```
 */
export interface InboxProcessOptions extends InboxRetryOptions {
  /**
   * Rows processed at once by this worker, each in its own transaction (and
   * connection). Run as many workers in as many processes as you like: rows
   * are shared out with `FOR UPDATE SKIP LOCKED`.
   * @defaultValue `1`
   */
  concurrency?: number;
  /**
   * How long a loop waits when nothing is due (or the database failed) before
   * it looks again.
   * @defaultValue `1000`
   */
  pollIntervalMs?: number;
  /** Stops the worker when aborted, as {@link InboxWorker.stop} does. */
  signal?: InboxAbortSignal;
  /**
   * Called when your handler throws (with the row) and when the database
   * fails (without).
   * @defaultValue `console.error`
   */
  onError?: (error: unknown, delivery?: InboxDelivery) => void;
}

/**
 * A running {@link PostgresInbox.process} worker.
 *
 * @example
 * ```ts
 * import type { InboxWorker } from 'payhook/postgres';
 *
 * declare const worker: InboxWorker;
 * process.once('SIGTERM', () => void worker.stop());
 * ```
 */
export interface InboxWorker {
  /** Stops taking rows, lets the rows in hand finish, then resolves. */
  stop(): Promise<void>;
  /** Resolves once the worker has stopped (by `stop()` or the signal). */
  readonly stopped: Promise<void>;
}

/**
 * Counts of the inbox's rows, for dashboards and alerts.
 *
 * @example
 * ```ts
 * import type { InboxStats } from 'payhook/postgres';
 *
 * const alarming = (stats: InboxStats) => stats.failed > 0 || (stats.oldestPendingMs ?? 0) > 600_000;
 * ```
 */
export interface InboxStats {
  /** Rows waiting to be applied (including those waiting for a retry). */
  readonly pending: number;
  /** Pending rows that failed at least once. */
  readonly retrying: number;
  /** Rows given up after `maxAttempts`. */
  readonly failed: number;
  /** Rows applied. */
  readonly done: number;
  /** Age of the oldest pending row, by the database clock; `null` when none is pending. */
  readonly oldestPendingMs: number | null;
}

/**
 * A transactional inbox on PostgreSQL; see `createPostgresInbox`.
 *
 * @example
 * ```ts
 * import type { PostgresInbox } from 'payhook/postgres';
 *
 * declare const inbox: PostgresInbox;
 * console.log(await inbox.stats());
 * ```
 */
export interface PostgresInbox {
  /** The DDL of the inbox table, to copy into your own migrations. */
  readonly schema: string;
  /** Creates the table and index if missing (safe to repeat; also done by itself on first use). */
  migrate(): Promise<void>;
  /**
   * Stores one verified delivery, once per `webhook.id` and status
   * (`INSERT … ON CONFLICT DO NOTHING`). Pass it as the handler's
   * `onPayment`. Rejects with `STORE_UNAVAILABLE` when the row could not be
   * written, so the service is not answered 200.
   */
  enqueue(webhook: PaymentWebhook): Promise<void>;
  /** Takes one due row, if any, and processes it in one transaction. */
  processNext(handler: InboxHandler, options?: InboxRetryOptions): Promise<InboxOutcome>;
  /** Starts a worker that processes due rows until stopped. */
  process(handler: InboxHandler, options?: InboxProcessOptions): InboxWorker;
  /** Counts rows by state. */
  stats(): Promise<InboxStats>;
  /** Puts every `failed` row back to pending with fresh attempts; resolves how many. */
  retryFailed(): Promise<number>;
  /**
   * Deletes up to `limit` (default 1000) `done` rows applied more than
   * `olderThanMs` ago; resolves how many. Keep them at least as long as the
   * store in front remembers deliveries (`retentionMs`): once a row is gone, a
   * redelivery of it would be stored and applied again.
   */
  prune(options: { olderThanMs: number; limit?: number }): Promise<number>;
}
