// Connection faults never end a process: receivers and inbox workers on both
// drivers, in their own processes (the built package), while every payhook
// connection is terminated with pg_terminate_backend in a loop. Afterwards no
// process has exited and every delivery was applied exactly once. The long
// version is the pg-terminate chaos scenario. Needs `dist/` (npm run build).
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresInbox, createPostgresStore } from '../../src/postgres/index.js';
import { send } from '../helpers/http.js';
import { startPostgresServer, type PostgresServer } from '../helpers/postgres-server.js';
import { PUBLIC_KEY, signDelivery, webhookBody } from '../helpers/sign.js';

const app = fileURLToPath(new URL('../../scripts/chaos/pg-app.mjs', import.meta.url));
const children = new Set<ChildProcess>();
let server: PostgresServer;
let admin: pg.Pool;

beforeAll(async () => {
  if (!existsSync(fileURLToPath(new URL('../../dist/postgres.js', import.meta.url)))) {
    throw new Error('dist/ is missing: run `npm run build` first (these child processes import payhook by name).');
  }
  server = await startPostgresServer();
  admin = new pg.Pool({ connectionString: server.url, max: 4, application_name: 'test-admin' });
  admin.on('error', () => {});
  await admin.query('CREATE TABLE applied (delivery_id text NOT NULL, pid integer NOT NULL)');
  await createPostgresStore({ client: admin, table: 'fault_dedup' }).migrate();
  await createPostgresInbox({ client: admin, table: 'fault_inbox' }).migrate();
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await admin?.end();
  await server?.destroy();
});

interface Child {
  child: ChildProcess;
  messages: Record<string, unknown>[];
  output: string[];
}

function start(env: Record<string, string>): Child {
  const child = fork(app, [], {
    env: {
      ...process.env,
      DATABASE_URL: server.url,
      PUBLIC_KEY,
      STORE_TABLE: 'fault_dedup',
      INBOX_TABLE: 'fault_inbox',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  children.add(child);
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const messages: Record<string, unknown>[] = [];
  child.on('message', (message) => messages.push(message as Record<string, unknown>));
  return { child, messages, output };
}

/** Terminates every backend but the test's own, as a failover or an operator would. */
const terminateAll = () =>
  admin.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
     WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND application_name <> 'test-admin'`,
  );

describe('PostgreSQL connection faults', () => {
  it('ends no receiver or worker on either driver, and applies every delivery exactly once', async () => {
    const receivers = [
      start({ ROLE: 'receiver', DRIVER: 'pg' }),
      start({ ROLE: 'receiver', DRIVER: 'postgres', FETCH_TYPES: 'default' }),
    ];
    const workers = [
      start({ ROLE: 'worker', DRIVER: 'pg' }),
      start({ ROLE: 'worker', DRIVER: 'postgres', FETCH_TYPES: 'default' }),
    ];
    const everyone = [...receivers, ...workers];
    await expect.poll(() => everyone.every((c) => c.messages.length > 0), { timeout: 20_000 }).toBe(true);
    const ports = receivers.map((r) => r.messages[0]!['port'] as number);

    // The service's side: each delivery sent until it is answered 200, to the receivers in turn.
    const bodies = Array.from({ length: 120 }, () => webhookBody());
    let sent = 0;
    const deliverAll = async (lane: number) => {
      for (let i = lane; i < bodies.length; i += 4) {
        for (let attempt = 0; ; attempt++) {
          const answer = await send(ports[(i + attempt) % 2]!, signDelivery(bodies[i]!)).catch(() => undefined);
          if (answer?.status === 200) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        sent++;
      }
    };
    let killing = true;
    let kills = 0;
    const killer = (async () => {
      while (killing) {
        await terminateAll();
        kills++;
        await new Promise((resolve) => setTimeout(resolve, 30 + Math.random() * 70));
      }
    })();
    const delivering = Promise.all([0, 1, 2, 3].map(deliverAll));
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    killing = false;
    await killer;
    await delivering;
    expect(sent).toBe(bodies.length);
    expect(kills).toBeGreaterThan(20);

    const ids = bodies.map((body) => String(body['id']));
    await expect
      .poll(async () => (await admin.query('SELECT count(*)::int AS n FROM applied')).rows[0].n, { timeout: 30_000 })
      .toBe(ids.length);
    const { rows } = await admin.query(
      'SELECT delivery_id, count(*)::int AS n FROM applied GROUP BY delivery_id HAVING count(*) <> 1',
    );
    expect(rows).toEqual([]);
    const applied = await admin.query('SELECT DISTINCT delivery_id FROM applied');
    expect(new Set(applied.rows.map((row: { delivery_id: string }) => row.delivery_id))).toEqual(new Set(ids));
    // Nobody died: every process is still running and leaves when asked.
    for (const c of everyone)
      expect({ exit: c.child.exitCode, signal: c.child.signalCode }).toEqual({ exit: null, signal: null });
    const exits = everyone.map((c) => new Promise<number | null>((resolve) => c.child.once('exit', resolve)));
    for (const c of everyone) c.child.send('exit');
    expect(await Promise.all(exits)).toEqual([0, 0, 0, 0]);
  }, 90_000);
});
