// The money-safe order snippets of docs/stores.md ("PostgreSQL store and
// inbox", the blocks marked `doc-test: run-by` this file), run as written
// against a real PostgreSQL cluster started here: the `// server.ts` block as
// a real HTTP receiver in its own process, the `// worker.ts` block as an
// inbox worker in its own process behind a real receiver. Signed deliveries
// come from payhook/testing; the assertions read the orders table.
//
// One change to the server block, and only one: payhook's published test key
// in place of `environment: 'production'` (nobody can sign with the service's
// key). The receiver's port and the database come from PORT and DATABASE_URL,
// as the blocks read them. Needs `dist/` (npm run build): the processes import
// payhook by name.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeWebhookHandler } from '../../src/node/index.js';
import { createPostgresInbox, createPostgresStore } from '../../src/postgres/index.js';
import { parseWebhook } from '../../src/webhook/parse.js';
import { createTestWebhook, sendWebhook, signWebhook, TEST_KEY_PAIR } from '../../src/testing/index.js';
import { forkCollecting, type Running } from '../helpers/processes.js';
import { freePort } from '../helpers/redis-server.js';
import { startPostgresServer, type PostgresServer } from '../helpers/postgres-server.js';

const root = new URL('../../', import.meta.url);
const scratch = new URL('.tmp/', root);
const WEBHOOK_URL = 'https://shop.example.kg/webhooks/payments';
const children = new Set<ChildProcess>();
let server: PostgresServer;
let admin: pg.Pool;

/** The blocks of docs/stores.md marked as run by this file, as written, by their first line. */
function docBlocks(): Map<string, string> {
  const doc = readFileSync(new URL('docs/stores.md', root), 'utf8');
  const marker = /<!-- doc-test: run-by test\/postgres\/order-snippets\.docs\.test\.ts -->\n\n```ts\n([\s\S]*?)```/g;
  const blocks = new Map<string, string>();
  for (const [, code] of doc.matchAll(marker)) blocks.set(code!.split('\n')[0]!, code!);
  return blocks;
}

const SERVER_BLOCK = '// server.ts: pg (node-postgres)';
const WORKER_BLOCK = '// worker.ts: postgres.js. Run as many as you like, in several processes or machines.';

it('runs every block of docs/stores.md marked run-by this file, and only those', () => {
  expect([...docBlocks().keys()].sort()).toEqual([SERVER_BLOCK, WORKER_BLOCK].sort());
});

function block(firstLine: string): string {
  const code = docBlocks().get(firstLine);
  if (code === undefined) throw new Error(`docs/stores.md has no block marked run-by this test starting ${firstLine}`);
  return code;
}

/** Writes `code` (TypeScript) as a module inside the package, so that `payhook` resolves to this repository. */
function script(name: string, code: string): string {
  const { outputText } = ts.transpileModule(code, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  const path = fileURLToPath(new URL(`${name}-${process.pid}.mjs`, scratch));
  writeFileSync(path, outputText);
  return path;
}

/** `text` with `from` replaced by `to`, which must occur exactly once. */
function replaceOnce(text: string, from: string, to: string): string {
  const parts = text.split(from);
  if (parts.length !== 2)
    throw new Error(`expected ${JSON.stringify(from)} once in the block, found ${parts.length - 1}`);
  return parts.join(to);
}

function run(path: string, env: Record<string, string>): Running {
  return forkCollecting(path, { DATABASE_URL: server.url, ...env }, children);
}

interface OrderRow {
  payment_status: string | null;
  paid_at: Date | null;
  paid_by: string | null;
}

async function order(id: string): Promise<OrderRow | undefined> {
  const { rows } = await admin.query<OrderRow>('SELECT payment_status, paid_at, paid_by FROM orders WHERE id = $1', [
    id,
  ]);
  return rows[0];
}

const UNPAID = { payment_status: null, paid_at: null, paid_by: null };

/** Every change made to order `id`, in order: `from→to`. */
async function changes(id: string): Promise<string[]> {
  const { rows } = await admin.query<{ change: string }>(
    `SELECT coalesce(old_status, '-') || '→' || coalesce(new_status, '-') AS change
       FROM order_changes WHERE order_id = $1 ORDER BY n`,
    [id],
  );
  return rows.map((row) => row.change);
}

/** An order of 100.00 (10 000 hundredths), not yet paid; returns its id. */
async function newOrder(name: string): Promise<string> {
  const id = `${name}-${Math.random().toString(36).slice(2, 10)}`;
  await admin.query('INSERT INTO orders (id, amount_minor) VALUES ($1, 10000)', [id]);
  return id;
}

type Body = ReturnType<typeof createTestWebhook>;

/** A delivery of payment `transactionId` for order `paymentId`. */
function delivery(paymentId: string, status: string, amount: number, transactionId = `tx-${paymentId}`): Body {
  return createTestWebhook({ transactionId, id: `${transactionId}_DEBIT`, status, amount, fields: { paymentId } });
}

/** Signs `body` for the registered URL and sends it to `baseUrl`; the status and JSON answer. */
async function send(body: Body, baseUrl: string): Promise<{ status: number; answer: Record<string, unknown> }> {
  const signed = await signWebhook(body, { url: WEBHOOK_URL, privateKey: TEST_KEY_PAIR.privateKey });
  const response = await sendWebhook(signed, baseUrl);
  return { status: response.status, answer: (await response.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  if (!existsSync(fileURLToPath(new URL('dist/postgres.js', root)))) {
    throw new Error('dist/ is missing: run `npm run build` first (these child processes import payhook by name).');
  }
  mkdirSync(scratch, { recursive: true });
  server = await startPostgresServer();
  admin = new pg.Pool({ connectionString: server.url, max: 4 });
  admin.on('error', () => {});
  // What docs/postgres.md's migrations do, and the table the snippets name.
  await createPostgresStore({ client: admin }).migrate();
  await createPostgresInbox({ client: admin }).migrate();
  await admin.query(
    `CREATE TABLE orders (id text PRIMARY KEY, amount_minor bigint NOT NULL, payment_status text, paid_at timestamptz,
      paid_by text)`,
  );
  // Where the server block keeps what it parks (its deadLetter).
  await admin.query(
    'CREATE TABLE dead_letters (n bigserial PRIMARY KEY, reason text NOT NULL, capture jsonb NOT NULL)',
  );
  // Every update of an order, recorded, so that "paid once" and "nothing changed" can be read back.
  await admin.query(`CREATE TABLE order_changes (n bigserial PRIMARY KEY, order_id text, old_status text,
    new_status text, paid_at_changed boolean)`);
  await admin.query(`CREATE FUNCTION record_order_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO order_changes (order_id, old_status, new_status, paid_at_changed)
        VALUES (NEW.id, OLD.payment_status, NEW.payment_status, OLD.paid_at IS DISTINCT FROM NEW.paid_at);
      RETURN NEW;
    END $$`);
  await admin.query(
    'CREATE TRIGGER orders_changes AFTER UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION record_order_change()',
  );
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await admin?.end();
  await server?.destroy();
});

describe('docs/stores.md: the store snippet (// server.ts) as a real receiver', () => {
  let receiver: Running;
  let baseUrl: string;

  beforeAll(async () => {
    const code = replaceOnce(
      block(SERVER_BLOCK),
      "environment: 'production',",
      'publicKeys: process.env.TEST_PUBLIC_KEY,',
    );
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    receiver = run(script('stores-server', code), { PORT: String(port), TEST_PUBLIC_KEY: TEST_KEY_PAIR.publicKey });
    // Up once it answers (a GET is refused, 405, without touching the database).
    const deadline = Date.now() + 20_000;
    for (;;) {
      const status = await fetch(baseUrl).then(
        (response) => response.status,
        () => 0,
      );
      if (status === 405) break;
      if (Date.now() > deadline || receiver.child.exitCode !== null) {
        throw new Error(`the server block did not start:\n${receiver.lines.join('\n')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 30_000);

  afterAll(async () => {
    receiver?.child.kill('SIGTERM');
    await receiver?.exited;
  });

  it('a FAILED payment: 200, the order unpaid (FAILED recorded); then SUCCEEDED pays it once', async () => {
    const id = await newOrder('failed-then-paid');
    const failed = await send(delivery(id, 'FAILED', 100), baseUrl);
    expect(failed).toEqual({ status: 200, answer: { ok: true } });
    expect(await order(id)).toEqual({ payment_status: 'FAILED', paid_at: null, paid_by: null });

    const succeeded = delivery(id, 'SUCCEEDED', 100);
    expect(await send(succeeded, baseUrl)).toEqual({ status: 200, answer: { ok: true } });
    const paid = await order(id);
    expect(paid?.payment_status).toBe('SUCCEEDED');
    expect(paid?.paid_at).toBeInstanceOf(Date);
    expect(paid?.paid_by).toBe(succeeded.transactionId);

    // The same delivery again (signed afresh, as a retry is): a duplicate, the order untouched.
    const again = await send(succeeded, baseUrl);
    expect(again.status).toBe(200);
    expect(again.answer).toMatchObject({ ok: true, duplicate: true });
    // A late PROCESSING of the same payment: acknowledged, nothing changes.
    expect(await send(delivery(id, 'PROCESSING', 100), baseUrl)).toEqual({ status: 200, answer: { ok: true } });
    expect(await order(id)).toEqual(paid);
    expect(await changes(id)).toEqual(['-→FAILED', 'FAILED→SUCCEEDED']);
  });

  it('an unknown order and wrong amounts: 200, parked with the reason, no order paid or changed', async () => {
    const unknown = `no-such-order-${Date.now()}`;
    expect(await send(delivery(unknown, 'SUCCEEDED', 100), baseUrl)).toEqual({
      status: 200,
      answer: { ok: true, parked: true },
    });
    expect(await order(unknown)).toBeUndefined();

    const id = await newOrder('wrong-amount');
    for (const [amount, n] of [
      [99.99, 1],
      [100.005, 2], // three decimals: matches nothing (and never throws into days of retries)
      [10000, 3],
    ] as const) {
      const parked = await send(delivery(id, 'SUCCEEDED', amount, `tx-${id}-${n}`), baseUrl);
      expect(parked).toEqual({ status: 200, answer: { ok: true, parked: true } });
    }
    expect(await order(id)).toEqual(UNPAID);
    expect(await changes(id)).toEqual([]);

    const log = receiver.lines.join('\n');
    // The log line names what was parked: the reason and the details given to park().
    expect(log).toMatch(/Parked by onPayment \(unknown order \{"reference":"[^"]+"\}\)/);
    expect(log.match(/Parked by onPayment \(amount differs \{"reference":/g)).toHaveLength(3);
    // A parked delivery is recorded as handled: its retry is a duplicate, not a second look.
    const retry = await send(delivery(unknown, 'SUCCEEDED', 100), baseUrl);
    expect(retry.answer).toMatchObject({ ok: true, duplicate: true });
    // Each kept by the block's deadLetter, with the signed request to check again.
    const { rows } = await admin.query<{ reason: string; capture: { body: string } }>(
      'SELECT reason, capture FROM dead_letters ORDER BY n',
    );
    expect(
      rows.filter((row) => row.reason.startsWith('unknown order') && row.capture.body.includes(unknown)),
    ).toHaveLength(1);
    expect(rows.filter((row) => row.reason.startsWith('amount differs') && row.capture.body.includes(id))).toHaveLength(
      3,
    );
  });

  it("paid twice: another payment's SUCCEEDED is parked; the paying one again changes nothing", async () => {
    const id = await newOrder('paid-twice');
    const first = delivery(id, 'SUCCEEDED', 100);
    expect(await send(first, baseUrl)).toEqual({ status: 200, answer: { ok: true } });
    const paid = await order(id);

    // The same payment's SUCCEEDED once the store has forgotten it (after retentionMs): handled, nothing changes.
    const forgotten = await admin.query('DELETE FROM payhook_dedup WHERE key = $1', [`${first.id}:SUCCEEDED`]);
    expect(forgotten.rowCount).toBe(1);
    expect(await send(first, baseUrl)).toEqual({ status: 200, answer: { ok: true } });

    // Another payment of the same order succeeds too (a new transactionId): the customer was charged twice.
    const second = delivery(id, 'SUCCEEDED', 100, `tx-${id}-again`);
    expect(await send(second, baseUrl)).toEqual({ status: 200, answer: { ok: true, parked: true } });
    expect(await order(id)).toEqual(paid);
    expect(paid?.paid_by).toBe(first.transactionId);
    expect(await changes(id)).toEqual(['-→SUCCEEDED']);
    const details = { reference: id, paidBy: first.transactionId, transactionId: second.transactionId };
    expect(receiver.lines.join('\n')).toContain(`Parked by onPayment (paid twice ${JSON.stringify(details)})`);

    // The paying transaction itself FAILED or CANCELED after its SUCCEEDED: parked for a look, the order stays paid.
    for (const status of ['FAILED', 'CANCELED']) {
      expect(await send(delivery(id, status, 100), baseUrl)).toEqual({
        status: 200,
        answer: { ok: true, parked: true },
      });
      const contradiction = { reference: id, transactionId: first.transactionId };
      expect(receiver.lines.join('\n')).toContain(
        `Parked by onPayment (${status} after SUCCEEDED ${JSON.stringify(contradiction)})`,
      );
    }
    expect(await order(id)).toEqual(paid);
    expect(await changes(id)).toEqual(['-→SUCCEEDED']);
  });
});

describe('docs/stores.md: the inbox worker snippet (// worker.ts) behind a real receiver', () => {
  let worker: Running;
  let inboxPool: pg.Pool;
  let inbox: ReturnType<typeof createPostgresInbox>;
  let http: Server;
  let baseUrl: string;

  /** The inbox rows of order `id`'s deliveries: state and parked reason, by status. */
  async function inboxRows(id: string): Promise<Record<string, string>> {
    const { rows } = await admin.query<{ status: string; state: string; parked_reason: string | null }>(
      `SELECT status, state, parked_reason FROM payhook_inbox WHERE delivery_id LIKE $1 || '%' ORDER BY id`,
      [`tx-${id}`],
    );
    return Object.fromEntries(rows.map((row) => [row.status, row.parked_reason ?? row.state]));
  }

  beforeAll(async () => {
    // The receiver of docs/postgres.md ("Receiving"): every verified delivery enqueued before its 200.
    inboxPool = new pg.Pool({ connectionString: server.url, max: 4 });
    inboxPool.on('error', () => {});
    inbox = createPostgresInbox({ client: inboxPool });
    const handler = createNodeWebhookHandler({
      publicKeys: TEST_KEY_PAIR.publicKey,
      webhookUrl: WEBHOOK_URL,
      onPayment: (webhook) => inbox.enqueue(webhook),
      logger: false,
    });
    http = createServer((request, response) => void handler(request, response));
    http.listen(0, '127.0.0.1');
    await once(http, 'listening');
    baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    worker = run(script('stores-worker', block(WORKER_BLOCK)), {});
  }, 30_000);

  afterAll(async () => {
    http?.close();
    if (worker !== undefined && worker.child.exitCode === null) worker.child.kill('SIGKILL');
    await inboxPool?.end();
  });

  it('FAILED: 200, applied as FAILED, unpaid; then SUCCEEDED pays it once; a late PROCESSING changes nothing', async () => {
    const id = await newOrder('inbox-failed-then-paid');
    expect((await send(delivery(id, 'FAILED', 100), baseUrl)).status).toBe(200);
    await expect.poll(() => inboxRows(id), { timeout: 15_000 }).toEqual({ FAILED: 'done' });
    expect(await order(id)).toEqual({ payment_status: 'FAILED', paid_at: null, paid_by: null });

    const succeeded = delivery(id, 'SUCCEEDED', 100);
    expect((await send(succeeded, baseUrl)).status).toBe(200);
    await expect.poll(() => inboxRows(id), { timeout: 15_000 }).toEqual({ FAILED: 'done', SUCCEEDED: 'done' });
    const paid = await order(id);
    expect(paid?.payment_status).toBe('SUCCEEDED');
    expect(paid?.paid_at).toBeInstanceOf(Date);
    expect(paid?.paid_by).toBe(succeeded.transactionId);

    // A redelivery is a duplicate: no second row, no second update.
    expect((await send(succeeded, baseUrl)).status).toBe(200);
    expect((await send(delivery(id, 'PROCESSING', 100), baseUrl)).status).toBe(200);
    await expect
      .poll(() => inboxRows(id), { timeout: 15_000 })
      .toEqual({ FAILED: 'done', SUCCEEDED: 'done', PROCESSING: 'done' });
    expect(await order(id)).toEqual(paid);
    expect(await changes(id)).toEqual(['-→FAILED', 'FAILED→SUCCEEDED']);
  });

  it('an unknown order and a wrong amount: 200, the rows parked with the reason, the order untouched', async () => {
    const unknown = `inbox-no-such-order-${Date.now()}`;
    expect((await send(delivery(unknown, 'SUCCEEDED', 100), baseUrl)).status).toBe(200);
    const ids = [await newOrder('inbox-wrong-amount'), await newOrder('inbox-three-decimals')];
    expect((await send(delivery(ids[0]!, 'SUCCEEDED', 100.5), baseUrl)).status).toBe(200);
    expect((await send(delivery(ids[1]!, 'SUCCEEDED', 100.005), baseUrl)).status).toBe(200);
    // Parked with the reason and park()'s details.
    await expect
      .poll(() => inboxRows(unknown), { timeout: 15_000 })
      .toEqual({ SUCCEEDED: `unknown order {"reference":"${unknown}"}` });
    expect(await order(unknown)).toBeUndefined();
    for (const id of ids) {
      await expect
        .poll(() => inboxRows(id), { timeout: 15_000 })
        .toEqual({ SUCCEEDED: expect.stringMatching(/^amount differs \{"reference":/) });
      expect(await order(id)).toEqual(UNPAID);
      expect(await changes(id)).toEqual([]);
    }
  });

  it("paid twice: another payment's SUCCEEDED is parked; the paying one again changes nothing", async () => {
    const id = await newOrder('inbox-paid-twice');
    const first = delivery(id, 'SUCCEEDED', 100);
    expect((await send(first, baseUrl)).status).toBe(200);
    await expect.poll(() => inboxRows(id), { timeout: 15_000 }).toEqual({ SUCCEEDED: 'done' });
    const paid = await order(id);

    // The same payment's SUCCEEDED once its row is pruned (and the receiver's memory store restarted): applied, as
    // a no-op.
    await admin.query('DELETE FROM payhook_inbox WHERE delivery_id = $1', [first.id]);
    await inbox.enqueue(parseWebhook(first));
    await expect.poll(() => inboxRows(id), { timeout: 15_000 }).toEqual({ SUCCEEDED: 'done' });

    // Another payment of the same order succeeds too (a new transactionId): the customer was charged twice.
    const second = delivery(id, 'SUCCEEDED', 100, `tx-${id}-again`);
    expect((await send(second, baseUrl)).status).toBe(200);
    const secondRows = async () =>
      (await admin.query('SELECT state, parked_reason FROM payhook_inbox WHERE delivery_id = $1', [second.id])).rows;
    const details = { reference: id, paidBy: first.transactionId, transactionId: second.transactionId };
    await expect
      .poll(secondRows, { timeout: 15_000 })
      .toEqual([{ state: 'parked', parked_reason: `paid twice ${JSON.stringify(details)}` }]);
    expect(await order(id)).toEqual(paid);
    expect(paid?.paid_by).toBe(first.transactionId);
    expect(await changes(id)).toEqual(['-→SUCCEEDED']);

    // The paying transaction itself FAILED or CANCELED after its SUCCEEDED: parked for a look, the order stays paid.
    const contradiction = JSON.stringify({ reference: id, transactionId: first.transactionId });
    for (const status of ['FAILED', 'CANCELED'])
      expect((await send(delivery(id, status, 100), baseUrl)).status).toBe(200);
    const contradictions = async () =>
      (
        await admin.query(
          "SELECT status, parked_reason FROM payhook_inbox WHERE delivery_id = $1 AND status <> 'SUCCEEDED' ORDER BY id",
          [first.id],
        )
      ).rows;
    await expect.poll(contradictions, { timeout: 15_000 }).toEqual([
      { status: 'FAILED', parked_reason: `FAILED after SUCCEEDED ${contradiction}` },
      { status: 'CANCELED', parked_reason: `CANCELED after SUCCEEDED ${contradiction}` },
    ]);
    expect(await order(id)).toEqual(paid);
    expect(await changes(id)).toEqual(['-→SUCCEEDED']);
  });

  it('on SIGTERM stops and exits 0 by itself', async () => {
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toEqual({ code: 0, signal: null });
  }, 20_000);
});
