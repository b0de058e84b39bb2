/**
 * The PostgreSQL transactional inbox: the webhook handler stores each
 * verified delivery with one insert and answers 200 at once; workers then
 * apply it to the merchant's tables in the transaction that marks it done.
 *
 * @module
 */
import { PayhookError } from '../errors.js';
import { describeError, misuse } from '../lib/misuse.js';
import { parseWebhook } from '../webhook/parse.js';
import type { PaymentWebhook } from '../webhook/types.js';
import type {
  InboxDelivery,
  InboxHandler,
  InboxOutcome,
  InboxRetryOptions,
  InboxTransaction,
  PostgresInbox,
  PostgresInboxOptions,
} from './inbox-types.js';
import {
  asText,
  checkTable,
  migration,
  runnerFor,
  transactorFor,
  unavailable,
  withTable,
  type Row,
  type Run,
  type Transaction,
} from './client.js';

function inboxDdl(table: string): string[] {
  const index = `${table.replace('.', '_')}_due`;
  return [
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
    `CREATE INDEX IF NOT EXISTS ${index} ON ${table} (next_attempt_at, id) WHERE state = 'pending'`,
  ];
}

const defaultRetryDelay = (attempt: number): number => Math.min(1000 * 2 ** (attempt - 1), 3_600_000);

function positiveInteger(value: unknown, name: string, fallback: number): number {
  const n = value ?? fallback;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) {
    throw misuse(`${name} must be a whole number of 1 or more, not ${String(value)}.`);
  }
  return n;
}

function retrySettings(options: InboxRetryOptions | undefined): Required<InboxRetryOptions> {
  const retryDelayMs = options?.retryDelayMs ?? defaultRetryDelay;
  if (typeof retryDelayMs !== 'function') throw misuse('retryDelayMs must be a function of the attempt number.');
  return { maxAttempts: positiveInteger(options?.maxAttempts, 'maxAttempts', 10), retryDelayMs };
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
 * Creates a transactional inbox on PostgreSQL (the pattern spec §4.1 asks
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
 *    `attempts`, `next_attempt_at` and `last_error` recorded. A worker that
 *    dies mid-row loses its transaction: the row is simply taken again.
 * 3. **Watch**: `inbox.stats()` counts pending, retrying, failed and done rows
 *    and the oldest pending age.
 *
 * Keep the handler to database work in `tx`: something it does outside (an
 * e-mail, an HTTP call) is not rolled back and may happen again on a retry.
 * A handler that never settles holds its row (and connection) until the
 * worker process ends.
 *
 * @throws {@link PayhookError} `INVALID_ARGUMENT` when `client` is not a `pg`
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
 * import { createPostgresInbox } from 'payhook/postgres';
 *
 * const inbox = createPostgresInbox({ client: postgres(process.env.DATABASE_URL!) });
 * const worker = inbox.process(async (webhook, tx) => {
 *   if (webhook.status !== 'SUCCEEDED') return;
 *   await tx.query('UPDATE orders SET paid_at = now() WHERE id = $1 AND paid_at IS NULL', [webhook.fields.paymentId]);
 * });
 * process.once('SIGTERM', () => void worker.stop());
 * ```
 */
export function createPostgresInbox(options: PostgresInboxOptions): PostgresInbox {
  if (typeof options !== 'object' || options === null) {
    throw misuse('createPostgresInbox needs { client }: a pg Pool or a postgres.js sql instance.');
  }
  const run: Run = runnerFor(options.client, 'createPostgresInbox');
  const transact = transactorFor(options.client, 'createPostgresInbox');
  const table = checkTable(options.table ?? 'payhook_inbox', 'createPostgresInbox');
  const ddl = inboxDdl(table);
  const migrate = migration(run, ddl);

  const enqueueSql = `INSERT INTO ${table} (delivery_id, status, body) VALUES ($1::text, $2::text, $3::text::json)
ON CONFLICT (delivery_id, status) DO NOTHING`;
  const takeSql = `SELECT id::text AS id, delivery_id, status, body::text AS body, attempts FROM ${table}
WHERE state = 'pending' AND next_attempt_at <= clock_timestamp()
ORDER BY next_attempt_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`;
  const doneSql = `UPDATE ${table} SET state = 'done', attempts = attempts + 1, done_at = clock_timestamp()
WHERE id = $1::bigint`;
  const failSql = `UPDATE ${table} SET attempts = attempts + 1, last_error = $2::text,
  next_attempt_at = clock_timestamp() + $3::float8 * interval '1 millisecond',
  state = CASE WHEN attempts + 1 >= $4::int THEN 'failed' ELSE 'pending' END
WHERE id = $1::bigint RETURNING state`;
  const statsSql = `SELECT count(*) FILTER (WHERE state = 'pending')::int AS pending,
  count(*) FILTER (WHERE state = 'pending' AND attempts > 0)::int AS retrying,
  count(*) FILTER (WHERE state = 'failed')::int AS failed,
  count(*) FILTER (WHERE state = 'done')::int AS done,
  (extract(epoch FROM clock_timestamp() - min(received_at) FILTER (WHERE state = 'pending')) * 1000)::float8
    AS oldest_pending_ms
FROM ${table}`;
  const retryFailedSql = `UPDATE ${table} SET state = 'pending', attempts = 0, next_attempt_at = clock_timestamp()
WHERE state = 'failed' RETURNING 1`;
  const pruneSql = `DELETE FROM ${table} WHERE ctid = ANY (ARRAY(
  SELECT ctid FROM ${table} WHERE state = 'done' AND done_at < clock_timestamp() - $1::float8 * interval '1 millisecond'
  LIMIT $2::int FOR UPDATE SKIP LOCKED))
RETURNING 1`;

  async function enqueue(webhook: PaymentWebhook): Promise<void> {
    if (typeof webhook !== 'object' || webhook === null || typeof webhook.id !== 'string') {
      throw misuse('inbox.enqueue needs the verified webhook that onPayment receives.');
    }
    const body = JSON.stringify(webhook.raw);
    await withTable(migrate, 'inbox insert', () => run(enqueueSql, [asText(webhook.id), webhook.status, body]));
  }

  async function processRow(
    tx: Transaction,
    handler: InboxHandler,
    retry: Required<InboxRetryOptions>,
  ): Promise<{ outcome: InboxOutcome; error?: unknown; delivery?: InboxDelivery }> {
    const row: Row | undefined = (await tx.run(takeSql))[0];
    if (row === undefined) return { outcome: 'idle' };
    const delivery: InboxDelivery = {
      id: String(row['id']),
      deliveryId: String(row['delivery_id']),
      status: String(row['status']),
      attempt: Number(row['attempts']) + 1,
    };
    try {
      // In a savepoint: a failure undoes the handler's statements while the row's attempt is still recorded.
      await tx.savepoint(async ({ run: handlerRun, connection }) => {
        const handlerTx: InboxTransaction = { query: (text, values) => handlerRun(text, values ?? []), connection };
        await handler(parseWebhook(String(row['body'])), handlerTx, delivery);
      });
    } catch (error) {
      const delay = delayOf(retry.retryDelayMs, delivery.attempt);
      const [failed] = await tx.run(failSql, [delivery.id, errorText(error), delay, String(retry.maxAttempts)]);
      return { outcome: failed?.['state'] === 'failed' ? 'failed' : 'retrying', error, delivery };
    }
    await tx.run(doneSql, [delivery.id]);
    return { outcome: 'done', delivery };
  }

  async function next(
    handler: InboxHandler,
    retry: Required<InboxRetryOptions>,
    onError?: (error: unknown, delivery?: InboxDelivery) => void,
  ): Promise<InboxOutcome> {
    const result = await withTable(migrate, 'inbox processing', () => transact((tx) => processRow(tx, handler, retry)));
    if (result.error !== undefined && onError !== undefined) onError(result.error, result.delivery);
    return result.outcome;
  }

  function checkHandler(handler: unknown): asserts handler is InboxHandler {
    if (typeof handler !== 'function') throw misuse('The inbox needs a handler: async (webhook, tx) => { … }.');
  }

  return {
    schema: ddl.map((statement) => `${statement};`).join('\n'),
    migrate,
    enqueue,
    processNext(handler, retryOptions) {
      checkHandler(handler);
      return next(handler, retrySettings(retryOptions));
    },
    process(handler, processOptions = {}) {
      checkHandler(handler);
      const retry = retrySettings(processOptions);
      const concurrency = positiveInteger(processOptions.concurrency, 'concurrency', 1);
      const pollIntervalMs = processOptions.pollIntervalMs ?? 1000;
      if (typeof pollIntervalMs !== 'number' || !(pollIntervalMs >= 0) || !Number.isFinite(pollIntervalMs)) {
        throw misuse('pollIntervalMs must be a finite number of milliseconds of 0 or more.');
      }
      const { signal } = processOptions;
      const report = processOptions.onError ?? ((error: unknown) => console.error('payhook inbox:', error));
      // A throwing onError must not end the loop (and with it the worker).
      const onError = (error: unknown, delivery?: InboxDelivery) => {
        try {
          report(error, delivery);
        } catch {
          // Nothing left to tell.
        }
      };
      let stopping = false;
      const wakers = new Set<() => void>();
      const stop = () => {
        stopping = true;
        for (const wake of wakers) wake();
      };
      const pause = () =>
        new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            wakers.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, pollIntervalMs);
          wakers.add(wake);
        });
      const loop = async () => {
        while (!stopping) {
          let outcome: InboxOutcome = 'idle';
          try {
            outcome = await next(handler, retry, onError);
          } catch (error) {
            onError(error instanceof PayhookError ? error : unavailable('inbox processing', error));
          }
          if (outcome === 'idle' && !stopping) await pause();
        }
      };
      if (signal?.aborted === true) stopping = true;
      signal?.addEventListener('abort', stop);
      const stopped = Promise.all(Array.from({ length: concurrency }, loop)).then(() => {
        signal?.removeEventListener('abort', stop);
      });
      return {
        stopped,
        stop() {
          stop();
          return stopped;
        },
      };
    },
    async stats() {
      const [row] = await withTable(migrate, 'inbox stats', () => run(statsSql));
      const oldest = row?.['oldest_pending_ms'];
      return {
        pending: Number(row?.['pending'] ?? 0),
        retrying: Number(row?.['retrying'] ?? 0),
        failed: Number(row?.['failed'] ?? 0),
        done: Number(row?.['done'] ?? 0),
        oldestPendingMs: oldest === null || oldest === undefined ? null : Math.max(0, Number(oldest)),
      };
    },
    async retryFailed() {
      return (await withTable(migrate, 'inbox retry', () => run(retryFailedSql))).length;
    },
    async prune(pruneOptions) {
      const olderThanMs = pruneOptions?.olderThanMs;
      if (typeof olderThanMs !== 'number' || !(olderThanMs >= 0) || !Number.isFinite(olderThanMs)) {
        throw misuse('inbox.prune needs { olderThanMs }: a finite number of milliseconds of 0 or more.');
      }
      const limit = positiveInteger(pruneOptions.limit, 'limit', 1000);
      const values = [String(olderThanMs), String(limit)];
      return (await withTable(migrate, 'inbox prune', () => run(pruneSql, values))).length;
    },
  };
}
