// The guide's worker (docs/postgres.md, the `// worker.mjs` block, run as
// written) and migrate() in their own processes against a real PostgreSQL
// cluster started here: SIGTERM with rows in hand, a 20 s outage under load, a
// schema one version behind, and ten processes migrating an empty database at
// once. Needs `dist/` (npm run build): the processes import payhook by name.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWebhook } from '../../src/webhook/parse.js';
import { createPostgresInbox } from '../../src/postgres/index.js';
import { inboxSteps, versionSql } from '../../src/postgres/sql.js';
import { forkCollecting, type Running } from '../helpers/processes.js';
import { startPostgresServer, type PostgresServer } from '../helpers/postgres-server.js';
import { webhookBody } from '../helpers/sign.js';

const root = new URL('../../', import.meta.url);
const scratch = new URL('.tmp/', root);
const children = new Set<ChildProcess>();
let server: PostgresServer;
let admin: pg.Pool;
let workerScript: string;
let migrateScript: string;

/** The guide's worker block, as written: the one block of docs/postgres.md marked run-by this file. */
function guideWorker(): string {
  const guide = readFileSync(new URL('docs/postgres.md', root), 'utf8');
  const marked = guide.match(
    /<!-- doc-test: run-by test\/postgres\/worker-process\.docs\.test\.ts -->\n\n```js\n\/\/ worker\.mjs\n/g,
  );
  const markers = guide.match(/doc-test: run-by test\/postgres\/worker-process\.docs\.test\.ts/g);
  if (marked?.length !== 1 || markers?.length !== 1) {
    throw new Error('docs/postgres.md must mark exactly one block, the `// worker.mjs` one, run-by this file');
  }
  const match = /```js\n(\/\/ worker\.mjs\n[\s\S]*?)```/.exec(guide);
  if (match === null) throw new Error('docs/postgres.md has no ```js block starting with // worker.mjs');
  return match[1]!;
}

beforeAll(async () => {
  if (!existsSync(fileURLToPath(new URL('dist/postgres.js', root)))) {
    throw new Error('dist/ is missing: run `npm run build` first (these child processes import payhook by name).');
  }
  // Inside the package, so that `payhook` resolves to this repository as it does for a merchant's install.
  mkdirSync(scratch, { recursive: true });
  workerScript = fileURLToPath(new URL(`guide-worker-${process.pid}.mjs`, scratch));
  writeFileSync(workerScript, guideWorker());
  migrateScript = fileURLToPath(new URL(`migrate-${process.pid}.mjs`, scratch));
  writeFileSync(
    migrateScript,
    `import pg from 'pg';
import { createPostgresInbox, createPostgresStore } from 'payhook/postgres';
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
await Promise.all([createPostgresStore({ client: pool }).migrate(), createPostgresInbox({ client: pool }).migrate()]);
await pool.end();
`,
  );
  server = await startPostgresServer();
  admin = new pg.Pool({ connectionString: server.url, max: 4 });
  admin.on('error', () => {});
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await admin?.end();
  await server?.destroy();
});

function run(script: string, url = server.url): Running {
  return forkCollecting(script, { DATABASE_URL: url }, children);
}

const rows = async <T>(text: string, values: unknown[] = []): Promise<T[]> =>
  (await admin.query(text, values)).rows as T[];

/** Enqueues `n` deliveries for new orders of 100.00 (and `unknown` for orders that do not exist). */
async function deliveries(n: number, unknown = 0): Promise<void> {
  const inbox = createPostgresInbox({ client: admin });
  for (let i = 0; i < n + unknown; i++) {
    const body = webhookBody();
    const paymentId = (body['fields'] as { paymentId: string }).paymentId;
    if (i < n) await admin.query('INSERT INTO orders (id, amount_minor) VALUES ($1, 10000)', [paymentId]);
    await inbox.enqueue(parseWebhook(body));
  }
}

describe('the guide worker and migrate() in their own processes', () => {
  // First: it needs the empty database.
  it('lets ten processes migrate an empty database at once, recording one version', async () => {
    const runs = Array.from({ length: 10 }, () => run(migrateScript));
    const exits = await Promise.all(runs.map((r) => r.exited));
    expect(exits.map((exit) => exit.code)).toEqual(Array(10).fill(0));
    expect(runs.flatMap((r) => r.lines)).toEqual([]);
    expect(await rows('SELECT name, version FROM payhook_schema ORDER BY name')).toEqual([
      { name: 'inbox:payhook_inbox', version: inboxSteps('payhook_inbox').length },
      { name: 'store:payhook_dedup', version: 1 },
    ]);
    await admin.query(
      `CREATE TABLE orders (id text PRIMARY KEY, amount_minor bigint NOT NULL, paid_at timestamptz, paid_by text)`,
    );
    // Every update of an order waits slow.seconds: rows stay in the worker's hands that long.
    await admin.query(`CREATE TABLE slow (seconds float8 NOT NULL); INSERT INTO slow VALUES (0)`);
    await admin.query(`CREATE FUNCTION slow_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_sleep((SELECT seconds FROM slow)); RETURN NEW; END $$`);
    await admin.query(`CREATE TRIGGER orders_slow BEFORE UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION slow_update()`);
  }, 60_000);

  it('pays an order once: the paying SUCCEEDED again is a no-op, another payment that succeeds is parked', async () => {
    const inbox = createPostgresInbox({ client: admin });
    const first = webhookBody();
    const paymentId = (first['fields'] as { paymentId: string }).paymentId;
    await admin.query('INSERT INTO orders (id, amount_minor) VALUES ($1, 10000)', [paymentId]);
    const order = async () => (await rows('SELECT paid_at, paid_by FROM orders WHERE id = $1', [paymentId]))[0];
    const inboxRow = (id: unknown) =>
      rows('SELECT state, parked_reason FROM payhook_inbox WHERE delivery_id = $1', [id]);
    const worker = run(workerScript);
    await inbox.enqueue(parseWebhook(first));
    await expect
      .poll(() => inboxRow(first['id']), { timeout: 15_000 })
      .toEqual([{ state: 'done', parked_reason: null }]);
    const paid = await order();

    // The same payment's SUCCEEDED once its row is pruned: stored and applied again, changing nothing.
    await admin.query('DELETE FROM payhook_inbox WHERE delivery_id = $1', [first['id']]);
    await inbox.enqueue(parseWebhook(first));
    await expect
      .poll(() => inboxRow(first['id']), { timeout: 15_000 })
      .toEqual([{ state: 'done', parked_reason: null }]);
    expect(await order()).toEqual(paid);

    // Another payment (transactionId) of the same order succeeds too: the customer was charged twice.
    const second = webhookBody({ fields: first['fields'] });
    await inbox.enqueue(parseWebhook(second));
    const details = { reference: paymentId, paidBy: first['transactionId'], transactionId: second['transactionId'] };
    await expect
      .poll(() => inboxRow(second['id']), { timeout: 15_000 })
      .toEqual([{ state: 'parked', parked_reason: `paid twice ${JSON.stringify(details)}` }]);
    expect(await order()).toEqual(paid);
    expect(paid).toEqual({ paid_at: expect.any(Date), paid_by: first['transactionId'] });

    // The paying transaction itself FAILED after its SUCCEEDED: parked for a look, the order stays paid.
    await inbox.enqueue(parseWebhook({ ...first, status: 'FAILED' }));
    const contradiction = JSON.stringify({ reference: paymentId, transactionId: first['transactionId'] });
    await expect
      .poll(
        () =>
          rows("SELECT parked_reason FROM payhook_inbox WHERE status = 'FAILED' AND delivery_id = $1", [first['id']]),
        {
          timeout: 15_000,
        },
      )
      .toEqual([{ parked_reason: `FAILED after SUCCEEDED ${contradiction}` }]);
    expect(await order()).toEqual(paid);

    worker.child.kill('SIGTERM');
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    // The tests below count every row: leave none behind.
    await admin.query('DELETE FROM payhook_inbox WHERE delivery_id = ANY($1)', [[first['id'], second['id']]]);
    await admin.query('DELETE FROM orders WHERE id = $1', [paymentId]);
  }, 60_000);

  it('fails at start-up, naming the fix, when the schema is one version behind', async () => {
    await admin.query('CREATE DATABASE behind');
    const behind = new pg.Client({ connectionString: server.url.replace(/\/postgres$/, '/behind') });
    await behind.connect();
    for (const statement of inboxSteps('payhook_inbox')[0]!) await behind.query(statement);
    await behind.query(versionSql.create('payhook_schema'));
    await behind.query(versionSql.record('payhook_schema'), ['inbox:payhook_inbox', 1]);
    await behind.end();
    const started = Date.now();
    const worker = run(workerScript, server.url.replace(/\/postgres$/, '/behind'));
    const exit = await worker.exited;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(exit.code).not.toBe(0);
    const output = worker.lines.join('\n');
    expect(output).toContain('INVALID_ARGUMENT');
    expect(output).toContain('payhook_inbox is at payhook schema version 1');
    expect(output).toContain('inbox.migrate()');
  }, 30_000);

  it('on SIGTERM finishes the rows in hand and exits 0 within 10 s', async () => {
    await admin.query('UPDATE slow SET seconds = 2');
    await deliveries(10);
    const worker = run(workerScript);
    // Four rows in hand (concurrency 4), each inside its 2 s update.
    await expect
      .poll(
        async () =>
          (
            await rows<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'UPDATE orders%'`,
            )
          )[0]!.n,
        { timeout: 15_000, interval: 50 },
      )
      .toBe(4);
    const signalled = Date.now();
    worker.child.kill('SIGTERM');
    const exit = await worker.exited;
    expect(Date.now() - signalled).toBeLessThan(10_000);
    expect(exit).toEqual({ code: 0, signal: null });
    // The four in hand were finished and committed; the rest wait for the next worker.
    expect(await rows("SELECT count(*)::int AS n FROM payhook_inbox WHERE state = 'done'")).toEqual([{ n: 4 }]);
    expect(await rows('SELECT count(*)::int AS n FROM orders WHERE paid_at IS NOT NULL')).toEqual([{ n: 4 }]);
    expect(await rows("SELECT count(*)::int AS n FROM payhook_inbox WHERE state = 'pending'")).toEqual([{ n: 6 }]);
  }, 40_000);

  // Last: it stops the cluster.
  it('survives PostgreSQL stopped for 20 s under load, says so in few lines, and then processes every row', async () => {
    await admin.query('UPDATE slow SET seconds = 0.05');
    await deliveries(150, 3);
    // Two more for orders that exist but must not be paid by them: a _CREDIT, and 0.01 for an order of 100.00.
    const inbox = createPostgresInbox({ client: admin });
    for (const overrides of [{ id: `${randomUUID()}_CREDIT` }, { amount: 0.01 }]) {
      const body = webhookBody(overrides);
      const paymentId = (body['fields'] as { paymentId: string }).paymentId;
      await admin.query('INSERT INTO orders (id, amount_minor) VALUES ($1, 10000)', [paymentId]);
      await inbox.enqueue(parseWebhook(body));
    }
    const worker = run(workerScript);
    await expect
      .poll(
        async () =>
          (await rows<{ n: number }>("SELECT count(*)::int AS n FROM payhook_inbox WHERE state = 'done'"))[0]!.n,
        {
          timeout: 15_000,
        },
      )
      .toBeGreaterThan(10);
    const before = worker.lines.length;
    await server.stop();
    await new Promise((resolve) => setTimeout(resolve, 20_000));
    await server.start();
    await expect
      .poll(async () => rows('SELECT state, count(*)::int AS n FROM payhook_inbox GROUP BY state ORDER BY state'), {
        timeout: 30_000,
        interval: 250,
      })
      .toEqual([
        { state: 'done', n: 160 },
        { state: 'parked', n: 5 },
      ]);
    expect(worker.child.exitCode).toBeNull();
    const outage = worker.lines.slice(before);
    expect(outage.length).toBeGreaterThan(0);
    expect(outage.length).toBeLessThanOrEqual(5);
    expect(outage.join('\n')).not.toMatch(/\n\s+at /); // no stack trace
    // Every order paid but the _CREDIT's and the short payment's, which were parked with their reason.
    expect(await rows('SELECT count(*)::int AS n FROM orders WHERE paid_at IS NULL')).toEqual([{ n: 2 }]);
    expect(
      await rows(`SELECT parked_reason FROM payhook_inbox WHERE state = 'parked' ORDER BY parked_reason`),
    ).toMatchObject([
      { parked_reason: expect.stringMatching(/^amount differs/) },
      { parked_reason: expect.stringMatching(/^not a debit/) },
      { parked_reason: expect.stringMatching(/^unknown order/) },
      { parked_reason: expect.stringMatching(/^unknown order/) },
      { parked_reason: expect.stringMatching(/^unknown order/) },
    ]);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toEqual({ code: 0, signal: null });
  }, 90_000);
});
