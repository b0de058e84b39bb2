// End to end (issue 13, "What it must show"): receivers and inbox workers in
// their own processes, importing the built package by name, over real HTTP on
// 127.0.0.1, sharing a real PostgreSQL cluster started here. Needs `dist/`
// (npm run build).
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, type HttpAnswer } from '../helpers/http.js';
import { startPostgresServer, type PostgresServer } from '../helpers/postgres-server.js';
import { PUBLIC_KEY, signDelivery, webhookBody, type SignedDelivery } from '../helpers/sign.js';

const processes = new URL('./processes/', import.meta.url);
const children = new Set<ChildProcess>();
let server: PostgresServer;
let pool: pg.Pool;

beforeAll(async () => {
  if (!existsSync(fileURLToPath(new URL('../../dist/postgres.js', import.meta.url)))) {
    throw new Error('dist/ is missing: run `npm run build` first (these child processes import payhook by name).');
  }
  server = await startPostgresServer();
  pool = new pg.Pool({ connectionString: server.url, max: 10 });
  pool.on('error', () => {});
  await pool.query('CREATE TABLE handled (delivery_id text NOT NULL, pid integer NOT NULL)');
  await pool.query('CREATE TABLE orders (payment_id text PRIMARY KEY, paid integer NOT NULL DEFAULT 0)');
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await pool?.end();
  await server?.destroy();
});

function start(script: string, env: Record<string, string>): { child: ChildProcess; messages: unknown[] } {
  const child = fork(fileURLToPath(new URL(script, processes)), [], {
    env: { ...process.env, DATABASE_URL: server.url, PUBLIC_KEY, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const messages: unknown[] = [];
  child.on('message', (message) => messages.push(message));
  return { child, messages };
}

async function receiver(env: Record<string, string>): Promise<{ port: number; child: ChildProcess }> {
  const { child, messages } = start('server.mjs', env);
  await expect.poll(() => messages.length, { timeout: 15_000 }).toBeGreaterThan(0);
  return { port: (messages[0] as { port: number }).port, child };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.send('exit');
  return exited;
}

async function killed(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

const deliver = (port: number, delivery: SignedDelivery): Promise<HttpAnswer> => send(port, delivery);

async function rows<T>(text: string, values: unknown[] = []): Promise<T[]> {
  return (await pool.query(text, values)).rows as T[];
}

describe('payhook/postgres end to end', () => {
  it('handles one delivery sent 100 times at once to two server processes exactly once', async () => {
    const env = { MODE: 'store', STORE_TABLE: 'dedup_race', INBOX_TABLE: 'unused_inbox' };
    const [a, b] = await Promise.all([receiver(env), receiver(env)]);
    // Warm both servers' connection pools first, as in production, so that the race is about the claim.
    const warmup = await Promise.all(
      Array.from({ length: 40 }, (_, i) => deliver(i % 2 === 0 ? a.port : b.port, signDelivery(webhookBody()))),
    );
    expect(warmup.every((answer) => answer.status === 200)).toBe(true);
    await pool.query('DELETE FROM handled');
    const delivery = signDelivery(webhookBody());
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => deliver(i % 2 === 0 ? a.port : b.port, delivery)),
    );
    const statuses = answers.map((answer) => answer.status);
    // One handled it; the others were told "in progress" (409, the service retries) or "already handled" (200).
    expect(statuses.filter((status) => status !== 200 && status !== 409)).toEqual([]);
    expect(statuses).toContain(200);
    expect(await rows('SELECT delivery_id FROM handled')).toEqual([{ delivery_id: delivery.id }]);
    // The service's retries, after the fact, to both: 200 without handling again.
    const retries = await Promise.all([deliver(a.port, delivery), deliver(b.port, delivery)]);
    expect(retries.map((answer) => answer.status)).toEqual([200, 200]);
    expect(await rows('SELECT count(*)::int AS n FROM handled')).toEqual([{ n: 1 }]);
    await Promise.all([stopChild(a.child), stopChild(b.child)]);
  }, 60_000);

  it('applies an inbox row exactly once when its worker is killed before and after the update', async () => {
    const { port, child: receiverChild } = await receiver({
      MODE: 'inbox',
      STORE_TABLE: 'dedup_inbox',
      INBOX_TABLE: 'inbox_crash',
    });
    const body = webhookBody();
    const paymentId = (body['fields'] as { paymentId: string }).paymentId;
    await pool.query('INSERT INTO orders (payment_id) VALUES ($1)', [paymentId]);
    expect((await deliver(port, signDelivery(body))).status).toBe(200);
    // Answered 200 only once the row was committed.
    expect(await rows('SELECT state, attempts FROM inbox_crash')).toEqual([{ state: 'pending', attempts: 0 }]);

    for (const crash of ['before', 'after']) {
      const worker = start('worker.mjs', { INBOX_TABLE: 'inbox_crash', CRASH: crash });
      await expect
        .poll(() => worker.messages.some((m) => (m as { at: string }).at === `${crash}-update`), { timeout: 15_000 })
        .toBe(true);
      if (crash === 'after') {
        // The update ran inside the worker's open transaction; nobody else sees it yet.
        expect(await rows('SELECT paid FROM orders WHERE payment_id = $1', [paymentId])).toEqual([{ paid: 0 }]);
      }
      await killed(worker.child);
      // The transaction died with the worker: the row is free (unlocked) and pending, the order untouched.
      await expect
        .poll(() => rows('SELECT state, attempts FROM inbox_crash FOR UPDATE SKIP LOCKED'), { timeout: 10_000 })
        .toEqual([{ state: 'pending', attempts: 0 }]);
      expect(await rows('SELECT paid FROM orders WHERE payment_id = $1', [paymentId])).toEqual([{ paid: 0 }]);
    }

    const worker = start('worker.mjs', { INBOX_TABLE: 'inbox_crash' });
    await expect.poll(() => rows('SELECT state FROM inbox_crash'), { timeout: 15_000 }).toEqual([{ state: 'done' }]);
    expect(await rows('SELECT paid FROM orders WHERE payment_id = $1', [paymentId])).toEqual([{ paid: 1 }]);
    // A redelivery after the fact changes nothing.
    expect((await deliver(port, signDelivery(body))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await rows('SELECT count(*)::int AS n FROM inbox_crash')).toEqual([{ n: 1 }]);
    expect(await rows('SELECT paid FROM orders WHERE payment_id = $1', [paymentId])).toEqual([{ paid: 1 }]);
    await killed(worker.child);
    await stopChild(receiverChild);
  }, 90_000);

  // Last: it stops the cluster.
  it('answers 503 while PostgreSQL is down, never 200 without a durable row, and recovers when it is back', async () => {
    const { port, child } = await receiver({ MODE: 'inbox', STORE_TABLE: 'dedup_outage', INBOX_TABLE: 'inbox_outage' });
    const before = signDelivery(webhookBody());
    expect((await deliver(port, before)).status).toBe(200);

    await server.stop();
    const during = Array.from({ length: 5 }, () => signDelivery(webhookBody()));
    const answers = await Promise.all(during.map((delivery) => deliver(port, delivery)));
    expect(answers.map((answer) => answer.status)).toEqual([503, 503, 503, 503, 503]);
    expect(answers.map((answer) => answer.json?.code)).toEqual(Array(5).fill('STORE_UNAVAILABLE'));

    await server.start();
    // The service retries: the same deliveries, freshly signed, now flow.
    const after = await Promise.all(
      during.map((delivery) => deliver(port, signDelivery(JSON.parse(delivery.body) as Record<string, unknown>))),
    );
    expect(after.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    const stored = await rows<{ delivery_id: string }>('SELECT delivery_id FROM inbox_outage ORDER BY id');
    expect(new Set(stored.map((row) => row.delivery_id))).toEqual(new Set([before.id, ...during.map((d) => d.id)]));
    await stopChild(child);
  }, 90_000);
});
