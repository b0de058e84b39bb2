/**
 * The public types of the PostgreSQL inbox (`createPostgresInbox`).
 *
 * @module
 */
import type { PaymentWebhook } from '../webhook/types.js';
import type { PostgresClientLike } from './driver.js';

/**
 * Options of `createPostgresInbox`.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import type { PostgresInboxOptions } from 'payhook/postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
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
   * Not a reserved key word of PostgreSQL (`order`, `user`, `limit`…), which
   * cannot name a table unquoted: `migrate()` refuses one with `INVALID_ARGUMENT`.
   * Not `payhook_schema`, where payhook records its tables' schema versions.
   * Spell it the same way everywhere: letter case does not matter, but
   * `payhook_inbox` and `public.payhook_inbox` (one table to PostgreSQL) are
   * two records of its schema version to payhook, and `migrate()` under the
   * other spelling runs the steps again and adds a second index.
   * Keep it to 52 characters or fewer: payhook names the table's index and
   * constraint after it (`schema_name_…`), and PostgreSQL cuts names past 63
   * bytes, so two longer names that begin alike would share them.
   * @defaultValue `'payhook_inbox'`
   */
  table?: string;
  /**
   * Create or upgrade the table from inside the first statement that needs
   * it (a webhook request or a worker). Off by default: run
   * {@link PostgresInbox.migrate} at deploy instead; the inbox's first
   * statement fails with `INVALID_ARGUMENT` naming that fix when the table is
   * missing or behind.
   * @defaultValue `false`
   */
  autoMigrate?: boolean;
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
   * Never end the transaction through it (`BEGIN`, `COMMIT`, `ROLLBACK`, or
   * a helper that runs its own transaction on the client): your update would
   * commit or roll back without the row's mark. payhook notices when it
   * comes to mark the row: it marks the row `failed` (never retried, as a
   * retry would apply it again) and reports the attempt as `INVALID_ARGUMENT`.
   * Throw to undo the attempt.
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
  /** `webhook.id` as stored: as it is, or its JSON literal when it holds a NUL or a lone surrogate or starts with `"`. */
  readonly deliveryId: string;
  /**
   * The status the row was stored under: the normalised status, or for a status payhook does not know
   * `UNKNOWN:` and the raw status trimmed and upper-cased (`UNKNOWN:PAID`), as the default deduplication key has it.
   */
  readonly status: string;
  /** This attempt's number, from 1 (attempts cut short by a crash are not counted). */
  readonly attempt: number;
}

/**
 * Your processing function: apply the payment through `tx`. Resolve to mark
 * the row done in the same transaction; throw to roll your statements back
 * and retry the row later; return `park(reason)` (from `payhook`) to
 * acknowledge a delivery you will not apply: the row is marked `parked` with
 * the reason, never retried, and counted in the stats. Any other result, or
 * none, means applied (the function may return what its last query
 * resolves with); an object with `park` but no reason (`{ park: '' }`), a
 * returned `Error` and an object with `ok: false` fail as if the function
 * threw.
 *
 * @example
 * ```ts
 * import { amountMatches, orderReference, park } from 'payhook';
 * import type { InboxHandler } from 'payhook/postgres';
 *
 * // For orders (id text PRIMARY KEY, amount_minor bigint, paid_at timestamptz, paid_by text): paid_by is the
 * // transactionId of the payment that paid the order.
 * const applyPayment: InboxHandler = async (webhook, tx) => {
 *   if (webhook.operation !== 'DEBIT') return park('not a debit', { id: webhook.id }); // _CREDIT: reviewed by hand
 *   const reference = orderReference(webhook); // fields.paymentId, as text
 *   const [order] =
 *     reference === undefined
 *       ? []
 *       : await tx.query('SELECT id, amount_minor, paid_by FROM orders WHERE id = $1 FOR UPDATE', [reference]);
 *   if (order === undefined) return park('unknown order', { reference });
 *   if (!amountMatches(webhook, Number(order.amount_minor))) {
 *     return park('amount differs', { reference, expected: order.amount_minor, received: webhook.amount });
 *   }
 *   if (webhook.status === 'UNKNOWN') return park('unknown status', { reference, rawStatus: webhook.rawStatus });
 *   // The paying transaction FAILED or CANCELED after its SUCCEEDED: the service contradicts itself. Look it up.
 *   if ((webhook.status === 'FAILED' || webhook.status === 'CANCELED') && webhook.transactionId === order.paid_by) {
 *     return park(`${webhook.status} after SUCCEEDED`, { reference, transactionId: webhook.transactionId });
 *   }
 *   if (webhook.status !== 'SUCCEEDED') return; // FAILED, PROCESSING…: never paid
 *   if (order.paid_by === webhook.transactionId) return; // this payment's SUCCEEDED again: applied already
 *   if (order.paid_by !== null) {
 *     // Another payment succeeded for a paid order: the customer was charged twice. Refund one.
 *     return park('paid twice', { reference, paidBy: order.paid_by, transactionId: webhook.transactionId });
 *   }
 *   await tx.query('UPDATE orders SET paid_at = now(), paid_by = $2 WHERE id = $1', [order.id, webhook.transactionId]);
 * };
 * ```
 */
export type InboxHandler = (webhook: PaymentWebhook, tx: InboxTransaction, delivery: InboxDelivery) => unknown;

/**
 * What one {@link PostgresInbox.processNext} call did: nothing was due
 * (`idle`), the row was applied (`done`), the handler parked it (`parked`),
 * it failed and will be retried (`retrying`), or it failed its last attempt
 * (`failed`).
 *
 * @example
 * ```ts
 * import type { InboxOutcome } from 'payhook/postgres';
 *
 * const busy = (outcome: InboxOutcome): boolean => outcome !== 'idle';
 * ```
 */
export type InboxOutcome = 'idle' | 'done' | 'parked' | 'retrying' | 'failed';

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
 * Options of {@link PostgresInbox.process}. Its durations (and
 * {@link InboxWorker.stop}'s `timeoutMs`) are milliseconds from 0 to
 * 2 147 483 647, the longest timer JavaScript keeps; anything else throws
 * `INVALID_ARGUMENT`.
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
   * How long a loop waits when nothing is due before it looks again. After
   * the database failed it waits its back-off instead (from 250 ms, doubling
   * up to `maxBackoffMs`).
   * @defaultValue `1000`
   */
  pollIntervalMs?: number;
  /**
   * Stops taking rows when aborted and lets the rows in hand finish, without
   * a time bound; {@link InboxWorker.stop} with `timeoutMs` is the bounded
   * way, for SIGTERM.
   */
  signal?: InboxAbortSignal;
  /**
   * Called when your handler throws (with the row: once per failed attempt),
   * and when the database fails (without the row): once when an outage
   * begins and once every `outageReminderMs` while it lasts, never once per
   * retry. The error is a `PayhookError`: `STORE_UNAVAILABLE` for an outage,
   * `INVALID_ARGUMENT` when the table is missing or behind (its message
   * names the fix). One that throws, or an async one that rejects, is
   * ignored: the worker goes on.
   * @defaultValue one line on `console.error`, without a stack trace
   */
  onError?: (error: unknown, delivery?: InboxDelivery) => void;
  /**
   * Called once when the database answers again after an outage, with how
   * long it lasted. Pending rows are then processed without a restart (on a
   * `pg` Pool; postgres.js can leave a transaction begun during a restart
   * pending for ever: see docs/postgres.md, "Outages").
   * @defaultValue one line on `console.error`
   */
  onRecover?: (outageMs: number) => void;
  /**
   * The longest wait between two tries while the database is failing; the
   * wait doubles from 250 ms up to this, with random jitter.
   * @defaultValue `10000`
   */
  maxBackoffMs?: number;
  /**
   * How often `onError` is reminded that an outage goes on; `0`: never.
   * @defaultValue `300000` (5 minutes)
   */
  outageReminderMs?: number;
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
  /**
   * Stops taking rows and lets the rows in hand finish, for at most
   * `timeoutMs`; then resolves. Rows still in hand after that are abandoned:
   * on a `pg` Pool their connections are destroyed (PostgreSQL rolls them
   * back), on postgres.js `sql.end({ timeout })` does it. An abandoned row is
   * simply taken again later. The worker leaves no timer behind, so once you
   * end the client too the process exits by itself. `timeoutMs` defaults to
   * 10 000 (10 s).
   */
  stop(options?: { timeoutMs?: number }): Promise<void>;
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
  /** Rows the handler parked (acknowledged without applying). */
  readonly parked: number;
  /** Rows applied. */
  readonly done: number;
  /** Age of the oldest pending row, by the database clock; `null` when none is pending. */
  readonly oldestPendingMs: number | null;
}

/**
 * The numbers to alert on, from {@link PostgresInbox.health}: the row counts
 * of {@link InboxStats} (as last read), the last error this process saw, and
 * whether the last read succeeded.
 *
 * @example
 * ```ts
 * import type { InboxHealth } from 'payhook/postgres';
 *
 * const page = (health: InboxHealth) => !health.databaseUp || health.failed > 0;
 * ```
 */
export interface InboxHealth extends InboxStats {
  /** Whether the counts were read just now; `false`: PostgreSQL failed and they are the last known ones. */
  readonly databaseUp: boolean;
  /** The last error a worker or statement of this inbox met in this process, as one line; `null`: none. */
  readonly lastError: string | null;
  /** When that error happened (milliseconds since the epoch); `null`: none. */
  readonly lastErrorAt: number | null;
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
  /** The DDL of the inbox table and its schema version record, to copy into your own migrations. */
  readonly schema: string;
  /**
   * Brings the table to the schema version this payhook needs, in one
   * transaction under an advisory lock, recording the version in
   * `payhook_schema` (beside the table). Safe to repeat and to run from many
   * processes at once.
   */
  migrate(): Promise<void>;
  /**
   * Resolves when the table is at the schema version this payhook needs;
   * rejects with `INVALID_ARGUMENT` naming the fix when it is missing or
   * behind, `STORE_UNAVAILABLE` when PostgreSQL cannot be reached. Await it
   * at start-up to fail fast.
   */
  check(): Promise<void>;
  /**
   * Stores one verified delivery, once per `webhook.id` and status
   * (`INSERT … ON CONFLICT DO NOTHING`). Pass it as the handler's
   * `onPayment`. Rejects with `STORE_UNAVAILABLE` when the row could not be
   * written, so the service is not answered 200, and with `INVALID_ARGUMENT`
   * for a delivery with an empty `id` (which only a `dedupKey` of yours lets
   * through): two of those would be one row.
   */
  enqueue(webhook: PaymentWebhook): Promise<void>;
  /**
   * Takes one due row, if any, and processes it in one transaction. Rejects
   * with `INVALID_ARGUMENT` for a handler that is not a function or bad
   * retry options, and with `STORE_UNAVAILABLE` when PostgreSQL fails.
   */
  processNext(handler: InboxHandler, options?: InboxRetryOptions): Promise<InboxOutcome>;
  /** Starts a worker that processes due rows until stopped. */
  process(handler: InboxHandler, options?: InboxProcessOptions): InboxWorker;
  /** Counts rows by state; rejects with `STORE_UNAVAILABLE` when PostgreSQL fails. */
  stats(): Promise<InboxStats>;
  /**
   * The numbers to alert on ({@link InboxHealth}); never rejects: when
   * PostgreSQL fails, or does not answer within `timeoutMs` (default 2 s,
   * inside a Prometheus scrape's 10 s), it resolves the last known counts
   * with `databaseUp: false` and the error. Safe to call from a timer or a
   * metrics scrape. Rejects with `INVALID_ARGUMENT` only for a `timeoutMs` that is
   * not a number of milliseconds above 0. The counts read every row, applied
   * ones included: prune them ({@link PostgresInbox.prune}), or a table of
   * millions of rows is counted past `timeoutMs` and reported down.
   */
  health(options?: { timeoutMs?: number }): Promise<InboxHealth>;
  /** Puts every `failed` row back to pending with fresh attempts; resolves how many. */
  retryFailed(): Promise<number>;
  /**
   * Deletes up to `limit` (default 1000) `done` and `parked` rows applied more than
   * `olderThanMs` ago; resolves how many. Keep them at least as long as the
   * store in front remembers deliveries (`retentionMs`): once a row is gone, a
   * redelivery of it would be stored and applied again.
   */
  prune(options: { olderThanMs: number; limit?: number }): Promise<number>;
}
