/**
 * The PostgreSQL transactional inbox: the webhook handler stores each
 * verified delivery with one insert and answers 200 at once; workers then
 * apply it to the merchant's tables in the transaction that marks it done.
 *
 * @module
 */
import { deliveryState } from '../dedup/key.js';
import { PayhookError } from '../errors.js';
import { checkDuration } from '../lib/duration.js';
import { describeError, misuse } from '../lib/misuse.js';
import { checkedOutcome, describeParked, isParked } from '../park.js';
import { parseWebhook } from '../webhook/parse.js';
import type { PaymentWebhook } from '../webhook/types.js';
import type {
  InboxDelivery,
  InboxHandler,
  InboxHealth,
  InboxRetryOptions,
  InboxStats,
  InboxTransaction,
  PostgresInbox,
  PostgresInboxOptions,
} from './inbox-types.js';
import { runnerFor, transactorFor } from './client.js';
import type { Holder, Row, Transaction } from './driver.js';
import { fault, sqlState } from './faults.js';
import { asText, checkTable, intOption } from './values.js';
import { schemaFor, tableFix } from './schema.js';
import { controlSql, inboxSql, inboxSteps } from './sql.js';
import { startWorker, within, type Attempt } from './worker.js';

const defaultRetryDelay = (attempt: number): number => Math.min(1000 * 2 ** (attempt - 1), 3_600_000);

const NON_ASCII = /[\u0080-\uffff]/g;

/**
 * JSON text with every character past ASCII written as a `\u` escape. A
 * `json` column keeps the text as given, so a database in any encoding
 * (LATIN1, say, which holds no Cyrillic) stores any body, and parsing it back
 * gives the same strings. Written as is, a payer's name in Cyrillic failed
 * every insert into such a database, and the delivery with it, for ever.
 */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(NON_ASCII, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The longest age `prune` takes (an interval past it overflows). */
const MAX_AGE_MS = 100 * 365.25 * 86_400_000;

function retrySettings(options: InboxRetryOptions | undefined): Required<InboxRetryOptions> {
  const retryDelayMs = options?.retryDelayMs ?? defaultRetryDelay;
  if (typeof retryDelayMs !== 'function') throw misuse('retryDelayMs must be a function of the attempt number.');
  return { maxAttempts: intOption(options?.maxAttempts, 'maxAttempts', 10, 1), retryDelayMs };
}

/**
 * A retry delay as the SQL parameter: a finite number of milliseconds of 0 or
 * more. A `retryDelayMs` that throws gets the default: the failure must be
 * recorded, or the row would be retried at once, forever.
 */
function delayOf(retryDelayMs: (attempt: number) => number, attempt: number): string {
  let ms: number;
  try {
    ms = Number(retryDelayMs(attempt));
  } catch {
    ms = defaultRetryDelay(attempt);
  }
  return String(Number.isFinite(ms) && ms > 0 ? Math.min(ms, 365.25 * 86_400_000) : 0);
}

/** An error as `last_error`: PostgreSQL text holds no NUL (it would fail the update that records the attempt). */
function errorText(error: unknown): string {
  return describeError(error).replaceAll('\0', '\\0');
}

/**
 * Creates a transactional inbox on PostgreSQL (the pattern the service asks
 * for: answer 200 at once, update the order after).
 *
 * 1. **Receive**: pass `inbox.enqueue` as the webhook handler's `onPayment`.
 *    Each verified delivery becomes one row (`INSERT … ON CONFLICT
 *    (delivery_id, status) DO NOTHING`, the raw JSON in `body`), and the
 *    service is answered 200 once it is committed.
 * 2. **Process**: `inbox.process(handler)` — in a worker process, or several.
 *    Each due row is locked with `FOR UPDATE SKIP LOCKED` inside a
 *    transaction; your handler gets the re-parsed, typed webhook and that
 *    transaction (`tx`); when it resolves the row is marked `done` in the same
 *    transaction, so your order update and the mark commit together or not
 *    at all. When it throws, its statements are rolled back (to a savepoint)
 *    and the row is retried after `retryDelayMs`, up to `maxAttempts`, with
 *    `attempts`, `next_attempt_at` and `last_error` recorded (a row that
 *    succeeds on a later attempt keeps the last error, as its history). A worker that
 *    dies mid-row loses its transaction: the row is simply taken again.
 *    Return `park(reason)` to acknowledge a delivery without applying it: the
 *    row is marked `parked`, never retried.
 * 3. **Watch**: `inbox.health()` resolves the numbers to alert on (pending,
 *    retrying, failed, parked, oldest pending age, last error) and never
 *    rejects; `inbox.stats()` counts rows by state.
 *
 * The table is versioned: run `inbox.migrate()` at deploy (or set
 * `autoMigrate`); `inbox.check()` fails fast at start-up, naming the fix, when
 * it is missing or behind. A worker survives database outages (back-off with
 * jitter, one report per change of state) and stops cleanly with
 * `worker.stop()`.
 *
 * Keep the handler to database work in `tx`: something it does outside (an
 * e-mail, an HTTP call) is not rolled back and may happen again on a retry.
 * A handler that never settles holds its row (and connection) until the
 * worker process ends.
 *
 * @throws PayhookError `INVALID_ARGUMENT` when `client` is not a `pg`
 * Pool or postgres.js `sql`, or `table` is not a plain identifier.
 *
 * @example
 * ```ts
 * // server.ts: receive
 * import { createServer } from 'node:http';
 * import pg from 'pg';
 * import { createNodeWebhookHandler } from 'payhook/node';
 * import { createPostgresInbox, createPostgresStore } from 'payhook/postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const inbox = createPostgresInbox({ client: pool });
 * const handler = createNodeWebhookHandler({
 *   environment: 'production',
 *   webhookUrl: 'https://shop.example.kg/webhooks/payments',
 *   store: createPostgresStore({ client: pool }),
 *   onPayment: inbox.enqueue,
 * });
 * createServer(handler).listen(3000);
 * ```
 *
 * @example
 * ```ts
 * // worker.ts: apply, in as many processes as you like
 * import postgres from 'postgres';
 * import type { Parked, PaymentWebhook } from 'payhook';
 * import { createPostgresInbox, type InboxTransaction } from 'payhook/postgres';
 *
 * // Your order update through `tx`: it checks the operation, the order, the amount and the status, and parks what
 * // it cannot apply (as InboxHandler's example and docs/postgres.md's worker do).
 * declare function applyPayment(tx: InboxTransaction, webhook: PaymentWebhook): Promise<Parked | undefined>;
 *
 * const sql = postgres(process.env.DATABASE_URL!, { fetch_types: false });
 * const inbox = createPostgresInbox({ client: sql });
 * await inbox.check();
 * const worker = inbox.process((webhook, tx) => applyPayment(tx, webhook));
 * process.once('SIGTERM', async () => {
 *   await worker.stop({ timeoutMs: 8_000 });
 *   await sql.end({ timeout: 1 });
 * });
 * ```
 */
export function createPostgresInbox(options: PostgresInboxOptions): PostgresInbox {
  if (typeof options !== 'object' || options === null) {
    throw misuse('createPostgresInbox needs { client }: a pg Pool or a postgres.js sql instance.');
  }
  const run = runnerFor(options.client, 'createPostgresInbox');
  const transact = transactorFor(options.client, 'createPostgresInbox');
  const table = checkTable(options.table ?? 'payhook_inbox', 'createPostgresInbox');
  const schema = schemaFor({
    kind: 'inbox',
    client: options.client,
    table,
    caller: 'createPostgresInbox',
    steps: inboxSteps(table),
    autoMigrate: options.autoMigrate === true,
  });
  const sql = inboxSql(table);
  const fix = tableFix('inbox');

  let lastError: { text: string; at: number } | undefined;
  const remember = (error: unknown) => {
    lastError = { text: describeError(error), at: Date.now() };
  };

  /** Runs `work` after the schema check, every driver error turned into the inbox's coded failure. */
  async function guarded<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      if (!schema.checked) await schema.ready();
      return await work();
    } catch (error) {
      const coded = fault(`inbox ${what}`, error, fix);
      remember(coded);
      throw coded;
    }
  }

  async function enqueue(webhook: PaymentWebhook): Promise<void> {
    const { id, raw } = (webhook ?? {}) as Partial<PaymentWebhook>;
    if (typeof id !== 'string' || typeof raw !== 'object' || raw === null) {
      throw misuse('inbox.enqueue needs the verified webhook that onPayment receives.');
    }
    // Rows are keyed by id and status: two payments with an empty id (told
    // apart only by a dedupKey of yours) would be stored as one.
    if (id === '') throw misuse('inbox.enqueue cannot store a delivery with an empty id: its rows are keyed by id.');
    const values = [asText(webhook.id), asText(deliveryState(webhook)), asciiJson(webhook.raw)];
    await guarded('insert', () => run(sql.enqueue, values));
  }

  async function processRow(
    tx: Transaction,
    handler: InboxHandler,
    retry: Required<InboxRetryOptions>,
    gaveUp: (given: Attempt) => void,
    stopped?: () => boolean,
  ): Promise<Attempt> {
    // A worker stopped while this loop waited for a connection ends the transaction without taking a row.
    if (stopped?.() === true) return { outcome: 'idle' };
    const row: Row | undefined = (await tx.run(sql.take))[0];
    if (row === undefined) return { outcome: 'idle' };
    const txid = String(row['txid']);
    const delivery: InboxDelivery = {
      id: String(row['id']),
      deliveryId: String(row['delivery']),
      status: String(row['status']),
      attempt: Number(row['attempts']) + 1,
    };
    let result: unknown;
    try {
      // In a savepoint: a failure undoes the handler's statements while the row's attempt is still recorded.
      result = await tx.savepoint(async ({ run: handlerRun, connection }) => {
        const handlerTx: InboxTransaction = { query: (text, values) => handlerRun(text, values ?? []), connection };
        const outcome = checkedOutcome(await handler(parseWebhook(String(row['body'])), handlerTx, delivery));
        // Deferred constraints are checked here, in the savepoint: at COMMIT a
        // violation would undo the record of this attempt too, and the row
        // would be taken again, uncounted, for ever.
        await handlerRun('SET CONSTRAINTS ALL IMMEDIATE', []);
        return outcome;
      });
    } catch (error) {
      const delay = delayOf(retry.retryDelayMs, delivery.attempt);
      const values = [delivery.id, errorText(error), delay, String(retry.maxAttempts), txid];
      const [failed] = await mark(tx, sql.fail, values);
      if (failed === undefined) return abandon(tx, delivery, gaveUp, error);
      return { outcome: failed['state'] === 'failed' ? 'failed' : 'retrying', error, delivery };
    }
    if (isParked(result)) {
      const reason = describeParked(result, Infinity).replaceAll('\0', '\\0');
      if ((await mark(tx, sql.parked, [delivery.id, reason, txid])).length === 0) return abandon(tx, delivery, gaveUp);
      return { outcome: 'parked', delivery };
    }
    if ((await mark(tx, sql.done, [delivery.id, txid])).length === 0) return abandon(tx, delivery, gaveUp);
    return { outcome: 'done', delivery };
  }

  /**
   * Runs one of a row's marks, each of which changes nothing in a transaction
   * other than the one that took the row. Empty, too, when the transaction is
   * aborted: payhook's savepoint undoes a failed handler's statements, so an
   * aborted one is the handler's own (it ran COMMIT, then BEGIN) or lost the
   * savepoint.
   */
  async function mark(tx: Transaction, text: string, values: readonly unknown[]): Promise<Row[]> {
    try {
      return await tx.run(text, values);
    } catch (error) {
      if (sqlState(error) !== '25P02') throw error;
      return [];
    }
  }

  /**
   * The handler ended the transaction (COMMIT or ROLLBACK through `tx`), so
   * the mark found itself in another one: what the handler did may be
   * committed without the row's mark. Retrying would apply it again, so the
   * row is given up as failed and the attempt reported as a misuse. Whatever
   * transaction is open now is the handler's (or aborted): it is rolled back
   * first, so that the mark is made on its own and lasts.
   */
  async function abandon(
    tx: Transaction,
    delivery: InboxDelivery,
    gaveUp: (given: Attempt) => void,
    cause?: unknown,
  ): Promise<Attempt> {
    const what =
      'The inbox handler ended the transaction payhook runs it in (COMMIT or ROLLBACK through tx, or code that runs ' +
      'its own BEGIN … COMMIT on tx.connection): what it did may be committed without the row being marked. ';
    const fix =
      'Leave the transaction to payhook (throw to undo an attempt), and check the order: if its update landed, set ' +
      "the row's state to 'done' before any retryFailed(), which puts every failed row back.";
    const marked = `${what}The row is marked failed and not retried. ${fix}`;
    await tx.run(controlSql.rollback);
    const [row] = await tx.run(sql.abandon, [delivery.id, marked, String(delivery.attempt - 1)]);
    const taken = `${what}Another worker took the row meanwhile and may apply it again. ${fix}`;
    const error = new PayhookError(
      'INVALID_ARGUMENT',
      row === undefined ? taken : marked,
      cause === undefined ? undefined : { cause },
    );
    const given: Attempt = { outcome: 'failed', error, delivery };
    gaveUp(given);
    return given;
  }

  const attempt = (
    handler: InboxHandler,
    retry: Required<InboxRetryOptions>,
    holder?: Holder,
    stopped?: () => boolean,
  ) =>
    guarded('processing', async () => {
      let abandoned: Attempt | undefined;
      const gaveUp = (given: Attempt) => void (abandoned = given);
      try {
        return await transact((tx) => processRow(tx, handler, retry, gaveUp, stopped), holder);
      } catch (error) {
        // postgres.js fails a transaction for any statement that failed in it, even one payhook caught (a mark
        // that found the handler's own transaction aborted): the row was given up outside it all the same.
        if (abandoned !== undefined) return abandoned;
        throw error;
      }
    });

  function checkHandler(handler: unknown): asserts handler is InboxHandler {
    if (typeof handler !== 'function') throw misuse('The inbox needs a handler: async (webhook, tx) => { … }.');
  }

  async function stats(): Promise<InboxStats> {
    const [row] = await guarded('stats', () => run(sql.stats));
    const oldest = row?.['oldest'];
    return {
      pending: Number(row?.['pending'] ?? 0),
      retrying: Number(row?.['retrying'] ?? 0),
      failed: Number(row?.['failed'] ?? 0),
      parked: Number(row?.['parked'] ?? 0),
      done: Number(row?.['done'] ?? 0),
      oldestPendingMs: oldest === null || oldest === undefined ? null : Math.max(0, Number(oldest)),
    };
  }

  let known: InboxStats = { pending: 0, retrying: 0, failed: 0, parked: 0, done: 0, oldestPendingMs: null };
  // The count under way, if any: a scrape while it runs (or after it missed an earlier scrape's bound) waits for it
  // rather than start another read of every row beside it. One older than ten bounds (at least 30 s) may wait on a
  // connection that died without a word until the OS gives up on it: it is left running and one more count starts,
  // never another while the one left still runs (each holds a connection of the pool).
  interface Counting {
    readonly stats: Promise<InboxStats>;
    readonly since: number;
  }
  let counting: Counting | undefined;
  let leftRunning = false;
  async function health(healthOptions?: { timeoutMs?: number }): Promise<InboxHealth> {
    const timeoutMs = checkDuration('timeoutMs', healthOptions?.timeoutMs, 'timer', 2_000);
    let databaseUp = true;
    try {
      const stale = Math.max(30_000, 10 * timeoutMs);
      if (counting !== undefined && !leftRunning && performance.now() - counting.since > stale) {
        leftRunning = true;
        void counting.stats.then(
          () => (leftRunning = false),
          () => (leftRunning = false),
        );
        counting = undefined;
      }
      if (counting === undefined) {
        const started: Counting = {
          stats: stats().finally(() => {
            if (counting === started) counting = undefined;
          }),
          since: performance.now(),
        };
        counting = started;
      }
      const counted = counting.stats;
      counted.catch(() => {}); // a failure after the bound is not left unhandled
      // Bounded: a scrape must be answered while the database does not answer (a blackholed network never refuses).
      const result = await within(counted, timeoutMs, undefined);
      if (result === undefined) {
        databaseUp = false;
        remember(new Error(`the row counts did not arrive within ${timeoutMs} ms`));
      } else known = result;
    } catch {
      databaseUp = false;
    }
    return { ...known, databaseUp, lastError: lastError?.text ?? null, lastErrorAt: lastError?.at ?? null };
  }

  return {
    schema: schema.ddl,
    migrate: schema.migrate,
    check: schema.ready,
    enqueue,
    // Async: a bad handler or option rejects, as every other method's misuse does, rather than throws.
    async processNext(handler, retryOptions) {
      checkHandler(handler);
      return (await attempt(handler, retrySettings(retryOptions))).outcome;
    },
    process(handler, processOptions = {}) {
      checkHandler(handler);
      const retry = retrySettings(processOptions);
      const concurrency = intOption(processOptions.concurrency, 'concurrency', 1, 1);
      return startWorker(
        { attempt: (holder, stopped) => attempt(handler, retry, holder, stopped), remember },
        concurrency,
        processOptions,
      );
    },
    stats,
    health,
    async retryFailed() {
      return (await guarded('retry', () => run(sql.retryFailed))).length;
    },
    async prune(pruneOptions) {
      const olderThanMs = pruneOptions?.olderThanMs;
      if (typeof olderThanMs !== 'number' || !(olderThanMs >= 0) || !(olderThanMs <= MAX_AGE_MS)) {
        throw misuse('inbox.prune needs { olderThanMs }: milliseconds from 0 to 100 years.');
      }
      const limit = intOption(pruneOptions.limit, 'limit', 1000, 1);
      const values = [String(olderThanMs), String(limit)];
      return (await guarded('prune', () => run(sql.prune, values))).length;
    },
  };
}
