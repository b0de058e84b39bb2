// The transactional inbox against a real PostgreSQL cluster started here,
// through a pg Pool and through postgres.js.
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { park } from '../../src/park.js';
import { parseWebhook } from '../../src/webhook/parse.js';
import type { PaymentWebhook } from '../../src/webhook/types.js';
import {
  createPostgresInbox,
  createPostgresStore,
  type InboxDelivery,
  type PostgresInbox,
} from '../../src/postgres/index.js';
import { startPostgresServer, type PostgresServer } from '../helpers/postgres-server.js';
import { webhookBody } from '../helpers/sign.js';

let server: PostgresServer;
let pool: pg.Pool;
let sql: postgres.Sql;

beforeAll(async () => {
  server = await startPostgresServer();
  pool = new pg.Pool({ connectionString: server.url, max: 30 });
  pool.on('error', () => {});
  sql = postgres(server.url, { max: 30, onnotice: () => {} });
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await sql?.end();
  await server?.destroy();
});

let tables = 0;
const webhook = (overrides: Record<string, unknown> = {}): PaymentWebhook => parseWebhook(webhookBody(overrides));
const silent = () => {};

for (const driver of ['pg', 'postgres.js'] as const) {
  describe(`createPostgresInbox via ${driver}`, () => {
    async function fresh(): Promise<{ inbox: PostgresInbox; table: string; orders: string }> {
      const n = tables++;
      const table = `inbox_${n}`;
      const orders = `orders_${n}`;
      await pool.query(`CREATE TABLE ${orders} (delivery_id text NOT NULL, status text NOT NULL, note text)`);
      const inbox = createPostgresInbox({ client: driver === 'pg' ? pool : sql, table });
      await inbox.migrate();
      return { inbox, table, orders };
    }

    it('stores a delivery once per id and status, and hands back the typed webhook', async () => {
      const { inbox, orders } = await fresh();
      const paid = webhook({ amount: 100.5, fields: { amount: 100.5, paymentId: 'order-1', note: 'é ✓' } });
      await Promise.all(Array.from({ length: 20 }, () => inbox.enqueue(paid)));
      const failed = parseWebhook({ ...paid.raw, status: 'FAILED' });
      await inbox.enqueue(failed);
      expect(await inbox.stats()).toMatchObject({ pending: 2, done: 0, failed: 0 });
      const seen: PaymentWebhook[] = [];
      const apply = async (received: PaymentWebhook, tx: { query: (t: string, v?: unknown[]) => Promise<unknown> }) => {
        seen.push(received);
        await tx.query(`INSERT INTO ${orders} VALUES ($1, $2)`, [received.id, received.status]);
      };
      expect(await inbox.processNext(apply)).toBe('done');
      expect(await inbox.processNext(apply)).toBe('done');
      expect(await inbox.processNext(apply)).toBe('idle');
      expect(seen.map((w) => w.status)).toEqual(['SUCCEEDED', 'FAILED']);
      expect(seen[0]).toEqual(paid);
      expect((await pool.query(`SELECT count(*)::int AS n FROM ${orders}`)).rows).toEqual([{ n: 2 }]);
      expect(await inbox.stats()).toEqual({
        pending: 0,
        retrying: 0,
        failed: 0,
        parked: 0,
        done: 2,
        oldestPendingMs: null,
      });
    });

    it('stores any JSON the service can send, a NUL character included', async () => {
      const { inbox } = await fresh();
      const odd = webhook({ fields: { amount: 1, paymentId: 'order-\u0000-x', comment: '\u2028 \ud800 ✓' } });
      await inbox.enqueue(odd);
      const seen: PaymentWebhook[] = [];
      expect(await inbox.processNext((received) => void seen.push(received))).toBe('done');
      expect(seen[0]?.raw).toEqual(odd.raw);
    });

    it('rolls the handler back on failure, retries with backoff, then gives up and can be retried', async () => {
      const { inbox, table, orders } = await fresh();
      await inbox.enqueue(webhook());
      let calls = 0;
      const flaky = async (received: PaymentWebhook, tx: { query: (t: string, v?: unknown[]) => Promise<unknown> }) => {
        calls++;
        await tx.query(`INSERT INTO ${orders} VALUES ($1, $2, 'half-done')`, [received.id, received.status]);
        throw new Error(`boom ${calls}`);
      };
      // Delays of seconds, so that a loaded machine's slow statements do not make a row due early.
      const retry = { maxAttempts: 3, retryDelayMs: (attempt: number) => attempt * 1_000 };
      expect(await inbox.processNext(flaky, retry)).toBe('retrying');
      // Not due yet: the backoff holds it back.
      expect(await inbox.processNext(flaky, retry)).toBe('idle');
      const [row] = (
        await pool.query(
          `SELECT attempts, last_error, state,
             extract(epoch FROM next_attempt_at - clock_timestamp()) * 1000 AS wait_ms FROM ${table}`,
        )
      ).rows as { attempts: number; last_error: string; state: string; wait_ms: string }[];
      expect(row).toMatchObject({ attempts: 1, last_error: 'boom 1', state: 'pending' });
      expect(Number(row!.wait_ms)).toBeGreaterThan(0);
      expect(Number(row!.wait_ms)).toBeLessThanOrEqual(1_000);
      expect(await inbox.stats()).toMatchObject({ pending: 1, retrying: 1 });
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(await inbox.processNext(flaky, retry)).toBe('retrying');
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      expect(await inbox.processNext(flaky, retry)).toBe('failed');
      expect(calls).toBe(3);
      expect(await inbox.stats()).toMatchObject({ pending: 0, failed: 1, done: 0, oldestPendingMs: null });
      // Every failed attempt's statements were rolled back.
      expect((await pool.query(`SELECT count(*)::int AS n FROM ${orders}`)).rows).toEqual([{ n: 0 }]);
      expect(await inbox.retryFailed()).toBe(1);
      expect(await inbox.processNext(async () => {})).toBe('done');
      expect(await inbox.stats()).toMatchObject({ failed: 0, done: 1 });
      // Done, with the last failure kept as the row's history.
      expect((await pool.query(`SELECT state, last_error FROM ${table}`)).rows).toEqual([
        { state: 'done', last_error: 'boom 3' },
      ]);
    });

    it('records any failure, even one whose message holds a NUL or whose retryDelayMs throws', async () => {
      const { inbox, table } = await fresh();
      await inbox.enqueue(webhook());
      const outcome = await inbox.processNext(
        () => {
          throw new Error('bad byte \0 here');
        },
        {
          retryDelayMs: () => {
            throw new Error('no delay');
          },
        },
      );
      expect(outcome).toBe('retrying');
      const [row] = (await pool.query(`SELECT attempts, last_error FROM ${table}`)).rows as {
        attempts: number;
        last_error: string;
      }[];
      expect(row?.attempts).toBe(1);
      expect(row?.last_error).toContain('bad byte');
    });

    // Such an error once made recording the failure itself throw (its text was the number 42): the attempt was rolled
    // back uncounted, reported as an outage, and the row taken again for ever.
    it('records a handler error whose message is not a string, and gives the row up after maxAttempts', async () => {
      const { inbox, table } = await fresh();
      await inbox.enqueue(webhook());
      const odd = () => {
        throw Object.assign(new Error('unused'), { message: 42 });
      };
      const retry = { maxAttempts: 2, retryDelayMs: () => 0 };
      expect(await inbox.processNext(odd, retry)).toBe('retrying');
      expect(await inbox.processNext(odd, retry)).toBe('failed');
      expect((await pool.query(`SELECT state, attempts, last_error FROM ${table}`)).rows).toEqual([
        { state: 'failed', attempts: 2, last_error: '42' },
      ]);
    });

    it('recovers from a handler whose own statement failed and aborted the transaction', async () => {
      const { inbox, table, orders } = await fresh();
      await inbox.enqueue(webhook());
      const broken = async (_: PaymentWebhook, tx: { query: (t: string) => Promise<unknown> }) => {
        await tx.query('SELECT * FROM no_such_table').catch(() => {}); // swallowed, but the transaction is aborted
      };
      expect(await inbox.processNext(broken, { retryDelayMs: () => 0 })).toBe('retrying');
      // The row's error names the statement that failed, not only "current transaction is aborted" (pg said that).
      const [row] = (await pool.query(`SELECT last_error FROM ${table}`)).rows as Array<{ last_error: string }>;
      expect(row?.last_error).toContain('relation "no_such_table" does not exist');
      expect(
        await inbox.processNext(async (received, tx) => {
          await tx.query(`INSERT INTO ${orders} VALUES ($1, $2)`, [received.id, received.status]);
        }),
      ).toBe('done');
      expect((await pool.query(`SELECT count(*)::int AS n FROM ${orders}`)).rows).toEqual([{ n: 1 }]);
    });

    // Such a handler once had its update committed without the mark and applied again on every retry (pg), or its
    // row marked done with the update rolled back (postgres.js).
    it.each([
      ['COMMIT', 'returns', ['COMMIT'], 1],
      ['COMMIT', 'throws', ['COMMIT'], 1],
      ['ROLLBACK', 'returns', ['ROLLBACK'], 0],
      ['ROLLBACK', 'throws', ['ROLLBACK'], 0],
      ["BEGIN … COMMIT (pg's usual transaction helper)", 'returns', ['BEGIN', 'SELECT 1', 'COMMIT'], 1],
      ["BEGIN … ROLLBACK (that helper's failure path)", 'throws', ['BEGIN', 'SELECT 1', 'ROLLBACK'], 0],
      // The marks then fail in the handler's own transaction, aborted by payhook's missing savepoint: once an outage,
      // retried (and applied) for ever; then, with postgres.js (which fails a transaction for any statement that
      // failed in it), still reported as an outage though the row was given up.
      ['COMMIT then BEGIN (a transaction of its own left open)', 'returns', ['COMMIT', 'BEGIN'], 1],
      ['COMMIT then BEGIN (a transaction of its own left open)', 'throws', ['COMMIT', 'BEGIN'], 1],
    ] as const)(
      'fails, and never retries, a row whose handler ran %s through tx and then %s',
      async (_, then, statements, applied) => {
        const { inbox, table, orders } = await fresh();
        await inbox.enqueue(webhook());
        let calls = 0;
        const ending = async (
          received: PaymentWebhook,
          tx: { query: (t: string, v?: unknown[]) => Promise<unknown> },
        ) => {
          calls++;
          await tx.query(`INSERT INTO ${orders} VALUES ($1, $2)`, [received.id, received.status]);
          for (const text of statements) await tx.query(text);
          if (then === 'throws') throw new Error('after the transaction ended');
        };
        expect(await inbox.processNext(ending, { retryDelayMs: () => 0 })).toBe('failed');
        expect(await inbox.processNext(ending, { retryDelayMs: () => 0 })).toBe('idle');
        expect(calls).toBe(1);
        const [row] = (await pool.query(`SELECT state, attempts, last_error FROM ${table}`)).rows as {
          state: string;
          attempts: number;
          last_error: string;
        }[];
        expect(row).toMatchObject({ state: 'failed', attempts: 1 });
        expect(row?.last_error).toContain('The inbox handler ended the transaction payhook runs it in');
        expect((await pool.query(`SELECT count(*)::int AS n FROM ${orders}`)).rows).toEqual([{ n: applied }]);
        expect(await inbox.stats()).toMatchObject({ pending: 0, failed: 1, done: 0 });
      },
    );

    // The row is unlocked from the handler's COMMIT on: another worker may hold it, or a transaction the handler
    // prepared (PREPARE TRANSACTION), which would hold it for good. Giving the row up once waited for that lock.
    it('does not wait for a row another transaction holds once the handler ended the inbox transaction', async () => {
      const { inbox, table } = await fresh();
      await inbox.enqueue(webhook());
      const other = await pool.connect();
      try {
        const outcome = await inbox.processNext(async (_, tx) => {
          await tx.query('COMMIT');
          await other.query('BEGIN');
          await other.query(`SELECT id FROM ${table} FOR UPDATE`);
        });
        expect(outcome).toBe('failed');
        await other.query('ROLLBACK');
      } finally {
        other.release();
      }
      // Not given up: the worker that holds it decides.
      expect((await pool.query(`SELECT state, attempts FROM ${table}`)).rows).toEqual([
        { state: 'pending', attempts: 0 },
      ]);
    }, 10_000);

    it('reports a handler that ended the inbox transaction to onError as INVALID_ARGUMENT, once', async () => {
      const { inbox, orders } = await fresh();
      const delivered = webhook();
      await inbox.enqueue(delivered);
      const reports: Array<[unknown, string | undefined]> = [];
      const worker = inbox.process(
        async (received, tx) => {
          await tx.query(`INSERT INTO ${orders} VALUES ($1, $2)`, [received.id, received.status]);
          await tx.query('COMMIT');
        },
        {
          pollIntervalMs: 10,
          retryDelayMs: () => 0,
          onError: (error, delivery) => void reports.push([error, delivery?.deliveryId]),
        },
      );
      await expect.poll(() => inbox.stats()).toMatchObject({ failed: 1 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await worker.stop();
      expect(reports).toHaveLength(1);
      expect(reports[0]?.[0]).toMatchObject({ name: 'PayhookError', code: 'INVALID_ARGUMENT' });
      expect(reports[0]?.[1]).toBe(delivered.id);
      expect((await pool.query(`SELECT count(*)::int AS n FROM ${orders}`)).rows).toEqual([{ n: 1 }]);
    });

    it('shares rows among several concurrent workers, each row applied once', async () => {
      const { inbox, orders } = await fresh();
      const n = 120;
      await Promise.all(Array.from({ length: n }, () => inbox.enqueue(webhook())));
      const apply = async (received: PaymentWebhook, tx: { query: (t: string, v?: unknown[]) => Promise<unknown> }) => {
        await tx.query(`INSERT INTO ${orders} VALUES ($1, $2)`, [received.id, received.status]);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
      };
      // Four workers of three loops each, on both drivers: twelve transactions at once.
      const workers = [pool, sql, pool, sql].map((client) =>
        createPostgresInbox({ client, table: `inbox_${tables - 1}` }).process(apply, {
          concurrency: 3,
          pollIntervalMs: 20,
          onError: silent,
        }),
      );
      await expect.poll(() => inbox.stats(), { timeout: 20_000 }).toMatchObject({ pending: 0, done: n });
      await Promise.all(workers.map((worker) => worker.stop()));
      const [counts] = (
        await pool.query(`SELECT count(*)::int AS n, count(DISTINCT delivery_id)::int AS distinct FROM ${orders}`)
      ).rows;
      expect(counts).toEqual({ n, distinct: n });
    });

    it('prunes done rows older than asked, in bounded batches, and nothing else', async () => {
      const { inbox, table } = await fresh();
      for (let i = 0; i < 4; i++) await inbox.enqueue(webhook());
      for (let i = 0; i < 3; i++) await inbox.processNext(async () => {});
      // A second apart, so that the rows done just now stay younger than olderThanMs on a loaded machine.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      await inbox.enqueue(webhook());
      await inbox.processNext(async () => {}); // the pending one of the first four
      await inbox.processNext(async () => {}); // the fresh one: done just now
      expect(await inbox.prune({ olderThanMs: 1_000, limit: 2 })).toBe(2);
      expect(await inbox.prune({ olderThanMs: 1_000 })).toBe(1);
      expect(await inbox.prune({ olderThanMs: 1_000 })).toBe(0);
      expect((await pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows).toEqual([{ n: 2 }]);
      await expect(inbox.prune({} as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    });

    it('reports the oldest pending age by the database clock', async () => {
      const { inbox } = await fresh();
      await inbox.enqueue(webhook());
      await new Promise((resolve) => setTimeout(resolve, 150));
      await inbox.enqueue(webhook());
      const stats = await inbox.stats();
      expect(stats.pending).toBe(2);
      expect(stats.oldestPendingMs).toBeGreaterThanOrEqual(140);
      expect(stats.oldestPendingMs).toBeLessThan(10_000);
    });

    it('stops on stop() and on an AbortSignal, finishing the row in hand', async () => {
      const { inbox, orders } = await fresh();
      await inbox.enqueue(webhook());
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let started!: () => void;
      const began = new Promise<void>((resolve) => (started = resolve));
      const worker = inbox.process(
        async (received, tx) => {
          started();
          await gate;
          await tx.query(`INSERT INTO ${orders} VALUES ($1, $2)`, [received.id, received.status]);
        },
        { pollIntervalMs: 10_000, onError: silent },
      );
      await began;
      const stopping = worker.stop();
      release();
      await stopping;
      expect(await inbox.stats()).toMatchObject({ done: 1, pending: 0 });

      const controller = new AbortController();
      const idle = inbox.process(async () => {}, {
        pollIntervalMs: 60_000,
        signal: controller.signal,
        onError: silent,
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const before = Date.now();
      controller.abort();
      await idle.stopped;
      expect(Date.now() - before).toBeLessThan(1000);
    });

    // A loop that was still waiting for a connection (or for BEGIN) when stop() came must not take a row once it
    // has one: stop() promises to wait only for the rows already in hand.
    it('takes no row after stop(), not even in loops that were waiting for a connection', async () => {
      const { table } = await fresh();
      const narrow =
        driver === 'pg'
          ? new pg.Pool({ connectionString: server.url, max: 1 })
          : postgres(server.url, { max: 1, onnotice: () => {} });
      try {
        const inbox = createPostgresInbox({ client: narrow, table });
        for (let i = 0; i < 5; i++) await inbox.enqueue(webhook());
        await inbox.check();
        const starts: number[] = [];
        const worker = inbox.process(
          async () => {
            starts.push(Date.now());
            await new Promise((resolve) => setTimeout(resolve, 300));
          },
          { concurrency: 3, pollIntervalMs: 10, onError: silent },
        );
        await new Promise((resolve) => setTimeout(resolve, 100));
        const stoppedAt = Date.now();
        await worker.stop();
        expect(starts.filter((at) => at >= stoppedAt)).toEqual([]);
        expect(await inbox.stats()).toMatchObject({ done: 1, pending: 4 });
      } finally {
        await narrow.end();
      }
    });

    it('keeps unknown statuses apart that PostgreSQL text could not (NUL, lone surrogates)', async () => {
      const { inbox } = await fresh();
      const base = webhookBody();
      for (const status of ['PAID\u0000', 'X\ud800', 'X\ud801']) await inbox.enqueue(parseWebhook({ ...base, status }));
      expect(await inbox.stats()).toMatchObject({ pending: 3 });
    });

    it('answers health() within its bound while the counts cannot be read (a table locked, a network that never refuses)', async () => {
      const { inbox, table } = await fresh();
      await inbox.enqueue(webhook());
      expect(await inbox.health()).toMatchObject({ pending: 1, databaseUp: true });
      const locker = await pool.connect();
      try {
        await locker.query(`BEGIN; LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
        const started = Date.now();
        const health = await inbox.health({ timeoutMs: 200 });
        expect(Date.now() - started).toBeLessThan(2_000);
        expect(health).toMatchObject({ pending: 1, databaseUp: false });
        expect(health.lastError).toContain('did not arrive within 200 ms');
      } finally {
        await locker.query('COMMIT');
        locker.release();
      }
      expect(await inbox.health()).toMatchObject({ pending: 1, databaseUp: true });
      await expect(inbox.health({ timeoutMs: 0 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    });

    // A count past its bound keeps running on the server: scrapes meanwhile wait for it instead of starting more.
    it('runs one count at a time for health() while scrapes miss its bound, one more past 30 s, never a third', async () => {
      const { inbox, table } = await fresh();
      await inbox.enqueue(webhook());
      const locker = await pool.connect();
      const counts = async () =>
        (
          await pool.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%count(*) FILTER%' AND query LIKE $1",
            [`%${table}%`],
          )
        ).rows[0].n as number;
      try {
        await locker.query(`BEGIN; LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
        const late = await Promise.all([inbox.health({ timeoutMs: 100 }), inbox.health({ timeoutMs: 100 })]);
        await inbox.health({ timeoutMs: 100 });
        expect(late.map((health) => health.databaseUp)).toEqual([false, false]);
        expect(await counts()).toBe(1);
        // One older than ten bounds (at least 30 s) may wait on a dead connection: the next scrape counts anew, but
        // never starts a third while the one left still runs (each holds a connection of the pool).
        const monotonic = performance.now.bind(performance);
        let ahead = 31_000;
        vi.spyOn(performance, 'now').mockImplementation(() => monotonic() + ahead);
        try {
          await inbox.health({ timeoutMs: 100 });
          expect(await counts()).toBe(2);
          ahead = 62_000;
          await inbox.health({ timeoutMs: 100 });
          expect(await counts()).toBe(2);
        } finally {
          vi.restoreAllMocks();
        }
      } finally {
        await locker.query('COMMIT');
        locker.release();
      }
      expect(await inbox.health()).toMatchObject({ pending: 1, databaseUp: true });
    });

    it('parks a delivery the handler returns park() for: acknowledged, not applied, never retried', async () => {
      const { inbox, table, orders } = await fresh();
      await inbox.enqueue(webhook());
      const outcome = await inbox.processNext(async (received, tx) => {
        await tx.query(`INSERT INTO ${orders} VALUES ($1, $2)`, [received.id, received.status]);
        return park('unknown order', { paymentId: received.fields.paymentId });
      });
      expect(outcome).toBe('parked');
      expect(await inbox.processNext(async () => {})).toBe('idle');
      expect(await inbox.stats()).toMatchObject({ pending: 0, parked: 1, done: 0, failed: 0 });
      // The reason and the details given to park(), as the handler's log line has them.
      expect((await pool.query(`SELECT state, parked_reason, attempts FROM ${table}`)).rows).toEqual([
        { state: 'parked', parked_reason: expect.stringMatching(/^unknown order \{"paymentId":"order-/), attempts: 1 },
      ]);
      // Kept whole, however long (only log lines are cut).
      await inbox.enqueue(webhook());
      const note = 'x'.repeat(1_000);
      expect(await inbox.processNext(() => park('amount differs', { note }))).toBe('parked');
      const { rows } = await pool.query(`SELECT parked_reason FROM ${table} WHERE parked_reason LIKE 'amount%'`);
      expect(rows).toEqual([{ parked_reason: `amount differs ${JSON.stringify({ note })}` }]);
      // What the handler did before parking commits with the mark, as for a done row.
      expect((await pool.query(`SELECT count(*)::int AS n FROM ${orders}`)).rows).toEqual([{ n: 1 }]);
      expect(await inbox.health()).toMatchObject({ parked: 2, databaseUp: true });
      // Handed back as docs/postgres.md says, once its cause is dealt with: applied, the reason kept as a record.
      const [first] = (await pool.query(`SELECT id FROM ${table} WHERE parked_reason LIKE 'unknown%'`)).rows;
      const replay = `UPDATE ${table} SET state = 'pending', next_attempt_at = now() WHERE id = $1 AND state = 'parked'`;
      await pool.query(replay, [first.id]);
      expect(await inbox.processNext(async () => {})).toBe('done');
      expect((await pool.query(`SELECT state, parked_reason FROM ${table} WHERE id = $1`, [first.id])).rows).toEqual([
        { state: 'done', parked_reason: expect.stringMatching(/^unknown order/) },
      ]);
      expect(await inbox.stats()).toMatchObject({ parked: 1, done: 1 });
    });

    it('retries, not marks done, a handler that returns a park without a reason', async () => {
      const { inbox, orders } = await fresh();
      await inbox.enqueue(webhook());
      const outcome = await inbox.processNext(async (received, tx) => {
        await tx.query(`INSERT INTO ${orders} VALUES ($1, $2)`, [received.id, received.status]);
        return { park: '' };
      });
      expect(outcome).toBe('retrying');
      expect(await inbox.stats()).toMatchObject({ done: 0, parked: 0 });
      // Undone with the failed attempt, as for a handler that throws.
      expect((await pool.query(`SELECT count(*)::int AS n FROM ${orders}`)).rows).toEqual([{ n: 0 }]);
    });

    it('retries, not marks done, a handler that resolves an Error or an object with ok: false', async () => {
      for (const [name, result] of [
        ['an Error', new Error('unknown order')],
        ['{ ok: false }', { ok: false }],
      ] as const) {
        const { inbox } = await fresh();
        await inbox.enqueue(webhook());
        expect(await inbox.processNext(() => result), name).toBe('retrying');
        expect(await inbox.stats()).toMatchObject({ done: 0, parked: 0 });
      }
    });

    it('reports a failing handler and keeps going', async () => {
      const { inbox } = await fresh();
      await inbox.enqueue(webhook());
      const errors: unknown[] = [];
      const worker = inbox.process(
        () => {
          throw new Error('nope');
        },
        { pollIntervalMs: 10, maxAttempts: 2, retryDelayMs: () => 0, onError: (error) => errors.push(error) },
      );
      await expect.poll(() => inbox.stats()).toMatchObject({ failed: 1 });
      await worker.stop();
      expect(errors).toHaveLength(2);
      expect(String(errors[0])).toContain('nope');
    });

    it('reports a handler that rejects with undefined: each failed attempt reaches onError', async () => {
      const { inbox } = await fresh();
      await inbox.enqueue(webhook());
      const reports: Array<[unknown, string | undefined]> = [];
      const worker = inbox.process(
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- what some libraries do
        () => Promise.reject(undefined),
        {
          pollIntervalMs: 10,
          maxAttempts: 2,
          retryDelayMs: () => 0,
          onError: (error, delivery) => void reports.push([error, delivery?.deliveryId]),
        },
      );
      await expect.poll(() => inbox.stats()).toMatchObject({ failed: 1 });
      await worker.stop();
      expect(reports).toHaveLength(2);
      expect(reports.every(([, deliveryId]) => deliveryId !== undefined)).toBe(true);
    });

    it.each([
      [
        'throws',
        () => {
          throw new Error('onError');
        },
      ],
      ['rejects (an async one)', () => Promise.reject(new Error('async onError'))],
    ])('keeps working, with no unhandled rejection, when onError itself %s', async (_, failing) => {
      const unhandled: unknown[] = [];
      const listener = (reason: unknown): void => void unhandled.push(reason);
      process.on('unhandledRejection', listener);
      try {
        const { inbox } = await fresh();
        await inbox.enqueue(webhook());
        let reports = 0;
        const worker = inbox.process(
          () => {
            throw new Error('handler');
          },
          {
            pollIntervalMs: 10,
            maxAttempts: 2,
            retryDelayMs: () => 0,
            // eslint-disable-next-line @typescript-eslint/no-misused-promises -- an async one, as a merchant may pass despite the type
            onError: () => {
              reports++;
              return failing();
            },
          },
        );
        await expect.poll(() => inbox.stats()).toMatchObject({ failed: 1 });
        await worker.stop();
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(reports).toBe(2);
        expect(unhandled).toEqual([]);
      } finally {
        process.off('unhandledRejection', listener);
      }
    });
  });
}

describe('createPostgresInbox misuse and outages', () => {
  it('bounds stop(): a row still in hand after timeoutMs is dropped (pg) and taken again later', async () => {
    const inbox = createPostgresInbox({ client: pool, table: 'inbox_stop_bound', autoMigrate: true });
    await inbox.enqueue(webhook());
    let started!: () => void;
    const began = new Promise<void>((resolve) => (started = resolve));
    const worker = inbox.process(
      async () => {
        started();
        await new Promise(() => {}); // never settles
      },
      { pollIntervalMs: 10_000, onError: silent },
    );
    await began;
    const before = Date.now();
    await worker.stop({ timeoutMs: 300 });
    expect(Date.now() - before).toBeLessThan(2_000);
    // Its transaction was rolled back with the dropped connection: the row is free and pending again.
    await expect.poll(() => inbox.processNext(async () => {}), { timeout: 5_000 }).toBe('done');
  });

  // The server ends the session with a FATAL naming its reason; pg then fails the next statement with "not queryable".
  it('names the reason the server gave for ending the session, not only that the connection broke (pg)', async () => {
    const short = new pg.Pool({ connectionString: server.url, options: '-c idle_in_transaction_session_timeout=200' });
    short.on('error', () => {});
    try {
      const inbox = createPostgresInbox({ client: short, table: 'inbox_idle_timeout', autoMigrate: true });
      await inbox.enqueue(webhook());
      const slow = () => new Promise<void>((resolve) => setTimeout(resolve, 600));
      await expect(inbox.processNext(slow)).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
        message: expect.stringMatching(/idle-in-transaction timeout/),
      });
      // Rolled back whole: taken again, no attempt charged.
      expect(await inbox.processNext(async () => {})).toBe('done');
    } finally {
      await short.end();
    }
  });

  it('reads its columns through a postgres.js client that renames them (transform: postgres.camel or kebab)', async () => {
    for (const [name, transform] of [
      ['camel', postgres.camel],
      ['kebab', postgres.kebab],
    ] as const) {
      const renaming = postgres(server.url, { max: 4, onnotice: () => {}, transform });
      try {
        const inbox = createPostgresInbox({ client: renaming, table: `inbox_${name}`, autoMigrate: true });
        const paid = webhook();
        await inbox.enqueue(paid);
        await new Promise((resolve) => setTimeout(resolve, 50));
        const stats = await inbox.stats();
        expect(stats).toMatchObject({ pending: 1, done: 0 });
        expect(stats.oldestPendingMs).toBeGreaterThanOrEqual(40);
        expect((await inbox.health()).oldestPendingMs).toBeGreaterThanOrEqual(40);
        const deliveries: InboxDelivery[] = [];
        expect(await inbox.processNext((_, __, delivery) => void deliveries.push(delivery))).toBe('done');
        expect(deliveries).toEqual([{ id: expect.any(String), deliveryId: paid.id, status: 'SUCCEEDED', attempt: 1 }]);
        const store = createPostgresStore({ client: renaming, table: `dedup_${name}`, autoMigrate: true });
        const claim = await store.claim('tx-renamed', { leaseMs: 60_000 });
        expect((await store.claim('tx-renamed', { leaseMs: 60_000 })).status).toBe('in-progress');
        if (claim.status !== 'claimed') throw new Error('unreachable');
        await store.complete('tx-renamed', claim.token, { retentionMs: 60_000 });
        expect((await store.claim('tx-renamed', { leaseMs: 60_000 })).status).toBe('completed');
      } finally {
        await renaming.end();
      }
    }
  });

  it('names the fix when the table was never migrated, and never calls it an outage', async () => {
    const inbox = createPostgresInbox({ client: pool, table: 'never_migrated' });
    await expect(inbox.check()).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringMatching(/table never_migrated is not set up .*inbox\.migrate\(\)/),
    });
    await expect(inbox.enqueue(webhook())).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(await inbox.health()).toMatchObject({ databaseUp: false, lastError: expect.stringContaining('migrate') });
    await inbox.migrate();
    await inbox.check();
    await inbox.enqueue(webhook());
    expect(await inbox.stats()).toMatchObject({ pending: 1 });
  });

  it('migrates again a table dropped after its version was recorded (a reset, a partial restore)', async () => {
    for (const [driver, db] of [
      ['pg', pool],
      ['postgres.js', sql],
    ] as const) {
      const table = `inbox_dropped_${driver === 'pg' ? 'pg' : 'js'}`;
      await createPostgresInbox({ client: db, table }).migrate();
      await pool.query(`DROP TABLE ${table}`);
      await expect(createPostgresInbox({ client: db, table }).check()).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringMatching(/is not set up .*inbox\.migrate\(\)/),
      });
      const inbox = createPostgresInbox({ client: db, table });
      await inbox.migrate();
      await inbox.enqueue(webhook());
      expect(await inbox.processNext(() => park('dropped'))).toBe('parked');
      expect(await inbox.stats()).toMatchObject({ pending: 0, parked: 1 });
    }
  });

  it('migrates without a notice, the second time too (postgres.js prints notices by default)', async () => {
    const notices: unknown[] = [];
    const heard = postgres(server.url, { max: 2, onnotice: (notice) => void notices.push(notice) });
    try {
      for (let start = 0; start < 2; start++) {
        await createPostgresStore({ client: heard, table: 'dedup_quiet' }).migrate();
        await createPostgresInbox({ client: heard, table: 'inbox_quiet' }).migrate();
      }
      // The same statements outside the migration do send one (the test would otherwise prove nothing).
      await heard.unsafe('CREATE TABLE IF NOT EXISTS dedup_quiet (key text)');
      expect(notices).toEqual([expect.objectContaining({ message: expect.stringContaining('already exists') })]);
    } finally {
      await heard.end();
    }
  });

  it('names a reserved key word as the table (order, user.…) as a configuration error, not an outage', async () => {
    for (const table of ['order', 'user.payhook_inbox']) {
      const inbox = createPostgresInbox({ client: pool, table });
      await expect(inbox.check()).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(inbox.migrate()).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringMatching(/reserved key word/),
      });
    }
    const inbox = createPostgresInbox({ client: sql, table: 'order', autoMigrate: true });
    await expect(inbox.enqueue(webhook())).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    // The worker reports it at once, once, as a configuration error naming the cause.
    const errors: unknown[] = [];
    const worker = inbox.process(async () => {}, { pollIntervalMs: 10, onError: (error) => errors.push(error) });
    await expect.poll(() => errors.length).toBeGreaterThan(0);
    await worker.stop();
    expect(errors).toEqual([expect.objectContaining({ code: 'INVALID_ARGUMENT' })]);
    expect(String(errors[0])).toContain('reserved key word');
  });

  // PostgreSQL folds an unquoted name to lower case: dup_inbox and DUP_INBOX are one table, and must be one record
  // of its schema version (not a second migration under ACCESS EXCLUSIVE, nor "not set up" for the other spelling).
  it('keeps one schema record for a table spelled in another letter case, and finds one written as given', async () => {
    const n = tables++;
    const versionsOf = async (table: string) =>
      (
        await pool.query(`SELECT name, version FROM payhook_schema WHERE lower(name) = $1 ORDER BY name`, [
          `inbox:${table}`,
        ])
      ).rows;
    const indexesOf = async (table: string) =>
      (await pool.query(`SELECT count(*)::int AS n FROM pg_indexes WHERE tablename = $1`, [table])).rows[0];

    await createPostgresInbox({ client: pool, table: `dup_inbox_${n}` }).migrate();
    const shouting = createPostgresInbox({ client: sql, table: `DUP_INBOX_${n}` });
    await shouting.check();
    await shouting.migrate();
    await createPostgresInbox({ client: pool, table: `Dup_Inbox_${n}` }).migrate();
    expect(await versionsOf(`dup_inbox_${n}`)).toEqual([{ name: `inbox:dup_inbox_${n}`, version: 2 }]);
    expect(createPostgresInbox({ client: pool, table: `DUP_INBOX_${n}` }).schema).toContain(`'inbox:dup_inbox_${n}'`);
    await shouting.enqueue(webhook());
    expect(await shouting.processNext(async () => {})).toBe('done');

    // A table migrated by an earlier payhook, which recorded the name as given: found under any spelling, and not
    // migrated again (the step that takes ACCESS EXCLUSIVE would run, and the record would be written anew).
    const legacy = `LEGACY_INBOX_${n}`;
    await createPostgresInbox({ client: pool, table: legacy }).migrate();
    await pool.query(`UPDATE payhook_schema SET name = $1 WHERE name = $2`, [
      `inbox:${legacy}`,
      `inbox:${legacy.toLowerCase()}`,
    ]);
    const indexes = await indexesOf(legacy.toLowerCase());
    for (const spelling of [legacy, legacy.toLowerCase()]) {
      const inbox = createPostgresInbox({ client: pool, table: spelling });
      await inbox.check();
      await inbox.migrate();
    }
    expect(await versionsOf(legacy.toLowerCase())).toEqual([{ name: `inbox:${legacy}`, version: 2 }]);
    expect(await indexesOf(legacy.toLowerCase())).toEqual(indexes);
  });

  it('rejects enqueue with STORE_UNAVAILABLE when PostgreSQL cannot be reached', async () => {
    const down = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres' });
    down.on('error', () => {});
    const inbox = createPostgresInbox({ client: down });
    await expect(inbox.enqueue(webhook())).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', name: 'PayhookError' });
    await expect(inbox.processNext(async () => {})).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(inbox.stats()).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    const errors: unknown[] = [];
    const worker = inbox.process(async () => {}, { pollIntervalMs: 10, onError: (error) => errors.push(error) });
    await expect.poll(() => errors.length, { timeout: 5000 }).toBeGreaterThan(0);
    // One report for the outage, however many tries: not one per attempt.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await worker.stop();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    const health = await inbox.health();
    expect(health).toMatchObject({ databaseUp: false, pending: 0 });
    expect(health.lastError).toContain('ECONNREFUSED');
    await down.end();
  });

  // A value postgres.js refuses (UNDEFINED_VALUE) or cannot serialise (a BigInt in a JSON parameter: a TypeError
  // without a code) fails the statement, not the connection: recorded against the row, which ends failed and lets
  // the next row through. Taken for a lost connection, the row was never charged an attempt and blocked the queue.
  it.each([
    ['a value postgres.js refuses to send (UNDEFINED_VALUE)', 'SELECT $1::text', [undefined]],
    ['a value postgres.js cannot serialise (a BigInt in JSON)', 'SELECT $1::jsonb', [{ amountMinor: 100n }]],
  ])("records %s as the handler's failure, not an outage", async (_name, text, values) => {
    const inbox = createPostgresInbox({ client: sql, table: `client_side_refusal_${tables++}` });
    await inbox.migrate();
    await inbox.enqueue(webhook({ id: 'bad_DEBIT' }));
    await inbox.enqueue(webhook({ id: 'good_DEBIT' }));
    const handler = async (received: PaymentWebhook, tx: { query: (t: string, v?: unknown[]) => Promise<unknown> }) => {
      if (received.id === 'bad_DEBIT') await tx.query(text, values);
    };
    const retry = { maxAttempts: 2, retryDelayMs: () => 0 };
    const outcomes = [];
    for (let turn = 0; turn < 3; turn++) outcomes.push(await inbox.processNext(handler, retry));
    expect(outcomes.sort()).toEqual(['done', 'failed', 'retrying']);
    expect(await inbox.stats()).toMatchObject({ pending: 0, failed: 1, done: 1 });
  });

  // The server refuses a statement with an ERROR whose SQLSTATE reads like a lost connection (08P01: too few
  // parameters), or a deferred constraint fails only at COMMIT: either is the handler's failure, charged to the row,
  // which ends failed and lets the next row through. Before, the attempt was rolled back uncounted (the failed
  // COMMIT undid its record; postgres.js took 08P01 for a lost connection) and the row was taken again for ever.
  type Query = (text: string, values?: unknown[]) => Promise<unknown>;
  const lateFailures: Array<[string, (tx: { query: Query }, ledger: string) => Promise<unknown>]> = [
    ['a statement sent with too few parameters (08P01)', (tx) => tx.query('SELECT $1::text, $2::text', ['one'])],
    ['a deferred constraint it violates', (tx, ledger) => tx.query(`INSERT INTO ${ledger} VALUES ('no-such-order')`)],
  ];
  describe.each(['pg', 'postgres.js'] as const)('via %s', (driver) => {
    it.each(lateFailures)("records %s as the handler's failure", async (_name, fail) => {
      const n = tables++;
      const ledger = `ledger_${n}`;
      await pool.query(`CREATE TABLE parent_${n} (id text PRIMARY KEY)`);
      await pool.query(`CREATE TABLE ${ledger} (id text REFERENCES parent_${n} (id) DEFERRABLE INITIALLY DEFERRED)`);
      const inbox = createPostgresInbox({ client: driver === 'pg' ? pool : sql, table: `late_failure_${n}` });
      await inbox.migrate();
      await inbox.enqueue(webhook({ id: 'bad_DEBIT' }));
      await inbox.enqueue(webhook({ id: 'good_DEBIT' }));
      const handler = async (received: PaymentWebhook, tx: { query: Query }) => {
        if (received.id === 'bad_DEBIT') await fail(tx, ledger);
      };
      const retry = { maxAttempts: 2, retryDelayMs: () => 0 };
      const outcomes = [];
      for (let turn = 0; turn < 3; turn++) outcomes.push(await inbox.processNext(handler, retry));
      expect(outcomes.sort()).toEqual(['done', 'failed', 'retrying']);
      expect(await inbox.stats()).toMatchObject({ pending: 0, failed: 1, done: 1 });
    });
  });

  it('refuses to enqueue a delivery with an empty id (two would be one row) or without its body', async () => {
    const inbox = createPostgresInbox({ client: pool, table: `enqueue_misuse_${tables++}`, autoMigrate: true });
    const { raw: _raw, ...bodiless } = webhook();
    for (const wrong of [webhook({ id: '' }), bodiless]) {
      await expect(inbox.enqueue(wrong as PaymentWebhook)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    await expect(inbox.enqueue(webhook({ id: '' }))).rejects.toThrow(/empty id/);
    await inbox.enqueue(webhook());
    expect(await inbox.stats()).toMatchObject({ pending: 1 });
  });

  it('works for a role granted what the fix names, and names it when a grant is missing', async () => {
    const table = `least_privilege_${tables++}`;
    const role = `role_${table}`;
    await createPostgresInbox({ client: pool, table }).migrate();
    await pool.query(`DROP ROLE IF EXISTS ${role}`);
    await pool.query(`CREATE ROLE ${role} LOGIN`);
    await pool.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO ${role}`);
    const rolePool = new pg.Pool({ connectionString: server.url.replace('postgres@', `${role}@`), max: 2 });
    rolePool.on('error', () => {});
    try {
      await expect(createPostgresInbox({ client: rolePool, table }).check()).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining('SELECT on payhook_schema'),
      });
      await pool.query(`GRANT SELECT ON payhook_schema TO ${role}`);
      const inbox = createPostgresInbox({ client: rolePool, table });
      await inbox.check();
      await inbox.enqueue(webhook());
      expect(await inbox.processNext(async () => {})).toBe('done');
    } finally {
      await rolePool.end();
    }
  });

  it('refuses a single pg Client, a non-client, bad tables and bad options', async () => {
    const single = new pg.Client({ connectionString: server.url });
    expect(() => createPostgresInbox({ client: single })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    for (const client of [{}, null, 'postgres://x']) {
      expect(() => createPostgresInbox({ client: client as never })).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
    }
    expect(() => createPostgresInbox({ client: pool, table: 'x; drop' })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    const inbox = createPostgresInbox({ client: pool, table: 'misuse_inbox' });
    expect(() => inbox.process(undefined as never)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => inbox.process(async () => {}, { concurrency: 0 })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    // A delay past the longest timer would fire at once (a busy loop, or stop() dropping rows in hand at once).
    for (const pollIntervalMs of [-1, 2 ** 31, Infinity]) {
      expect(() => inbox.process(async () => {}, { pollIntervalMs })).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
    }
    const idle = inbox.process(async () => {}, { pollIntervalMs: 2 ** 31 - 1, onError: () => {} });
    await expect(idle.stop({ timeoutMs: 2 ** 31 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await idle.stop();
    // Numbers past what the statements take (PostgreSQL int, interval) are misuse, not a database outage; like every
    // other method returning a promise, processNext rejects (a .catch() catches it) rather than throws.
    for (const maxAttempts of [0, 1.5, 2 ** 31, Number.MAX_SAFE_INTEGER]) {
      const caught = await inbox.processNext(async () => {}, { maxAttempts }).catch((error: unknown) => error);
      expect(caught).toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    const caught = await inbox.processNext(undefined as never).catch((error: unknown) => error);
    expect(caught).toMatchObject({ code: 'INVALID_ARGUMENT' });
    for (const options of [{ olderThanMs: 1, limit: 2 ** 31 }, { olderThanMs: 1e300 }]) {
      await expect(inbox.prune(options)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    await expect(inbox.enqueue({} as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});

describe('a database whose encoding is not UTF8', () => {
  // A LATIN1 database holds no Cyrillic; the service's payers have Cyrillic names.
  let latinPool: pg.Pool;
  let latinSql: postgres.Sql;
  beforeAll(async () => {
    await pool.query("CREATE DATABASE latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
    const url = server.url.replace(/\/postgres$/, '/latin1');
    latinPool = new pg.Pool({ connectionString: url, max: 4 });
    latinPool.on('error', () => {});
    latinSql = postgres(url, { max: 4, onnotice: () => {} });
  }, 30_000);
  afterAll(async () => {
    await latinPool?.end();
    await latinSql?.end();
  });

  for (const driver of ['pg', 'postgres.js'] as const) {
    it(`stores and hands back a body with text the encoding lacks, via ${driver}`, async () => {
      const client = driver === 'pg' ? latinPool : latinSql;
      const inbox = createPostgresInbox({ client, table: `latin_inbox_${tables++}` });
      await inbox.migrate();
      const named = webhook({ fields: { amount: 1, paymentId: 'order-1', payerName: 'Айбек Токтогулов ✓ 😀 é' } });
      await inbox.enqueue(named);
      const seen: PaymentWebhook[] = [];
      expect(await inbox.processNext((received) => void seen.push(received))).toBe('done');
      expect(seen[0]).toEqual(named);
    });

    it(`refuses a key the encoding cannot hold as misconfiguration, not an outage, via ${driver}`, async () => {
      const client = driver === 'pg' ? latinPool : latinSql;
      const store = createPostgresStore({ client, table: `latin_store_${tables++}` });
      await store.migrate();
      const caught = await store.claim('Айбек:SUCCEEDED', { leaseMs: 10_000 }).catch((error: unknown) => error);
      expect(caught).toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect((caught as Error).message).toContain(
        "The database's encoding cannot hold this text: use a UTF8 database.",
      );
    });
  }
});

describe('a key longer than an index entry holds', () => {
  // PostgreSQL refuses such a key on every attempt: an outage answer would have the service retry it for days.
  // Random text: PostgreSQL compresses an index entry first, and a repetitive key would fit.
  const long = Buffer.from(crypto.getRandomValues(new Uint8Array(4_000))).toString('base64');
  for (const driver of ['pg', 'postgres.js'] as const) {
    it(`is refused as misconfiguration by the store and the inbox, via ${driver}`, async () => {
      const client = driver === 'pg' ? pool : sql;
      const store = createPostgresStore({ client, table: `long_store_${tables++}` });
      await store.migrate();
      const claimed = await store.claim(long, { leaseMs: 10_000 }).catch((error: unknown) => error);
      expect(claimed).toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining('does not fit its index'),
      });
      const inbox = createPostgresInbox({ client, table: `long_inbox_${tables++}` });
      await inbox.migrate();
      const enqueued = await inbox.enqueue(webhook({ id: `${long}_DEBIT` })).catch((error: unknown) => error);
      expect(enqueued).toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('return a hash') });
      // A short key still works: the refusal is the key's, not the table's.
      expect(await store.claim('short:SUCCEEDED', { leaseMs: 10_000 })).toMatchObject({ status: 'claimed' });
    });
  }
});
