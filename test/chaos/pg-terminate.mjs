// Chaos: pg_terminate_backend on every payhook connection, in a loop, against
// two receivers and two inbox workers on each driver (a pg Pool, postgres.js —
// one of each postgres.js pair without `fetch_types: false`, as a merchant who
// forgot it), each in its own process importing the built package, while the
// service keeps delivering. Afterwards: no process has exited, every delivery
// was answered 200, and every one was applied exactly once.
//
//   npm run build && node --import tsx test/chaos/pg-terminate.mjs
//
// tsx loads the test helper that starts the PostgreSQL cluster. Knobs:
// CHAOS_PG_SECONDS (the loop's length, default 60), CHAOS_PG_LANES (deliveries
// in flight, default 4). Exits 1 when a target is missed.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createPostgresInbox, createPostgresStore } from 'payhook/postgres';
import { startPostgresServer } from '../helpers/postgres-server.ts';
import { PUBLIC_KEY, signDelivery, webhookBody } from '../helpers/sign.ts';
import { send } from '../helpers/http.ts';

const seconds = Number(process.env.CHAOS_PG_SECONDS ?? 60);
const lanes = Number(process.env.CHAOS_PG_LANES ?? 4);
const app = fileURLToPath(new URL('../postgres/processes/app.mjs', import.meta.url));
const started = Date.now();
const log = (line) => process.stderr.write(`[pg-terminate ${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const server = await startPostgresServer();
const admin = new pg.Pool({ connectionString: server.url, max: 4, application_name: 'chaos-admin' });
admin.on('error', () => {});
const failures = [];
const children = [];
try {
  await admin.query('CREATE TABLE applied (delivery_id text NOT NULL, pid integer NOT NULL)');
  await createPostgresStore({ client: admin, table: 'fault_dedup' }).migrate();
  await createPostgresInbox({ client: admin, table: 'fault_inbox' }).migrate();

  const start = (env) => {
    const child = fork(app, [], {
      env: {
        ...process.env,
        DATABASE_URL: server.url,
        PUBLIC_KEY,
        STORE_TABLE: 'fault_dedup',
        INBOX_TABLE: 'fault_inbox',
        ...env,
      },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const entry = { env, child, messages: [], stderr: '' };
    child.on('message', (message) => entry.messages.push(message));
    child.stderr.on('data', (chunk) => (entry.stderr += chunk.toString()));
    children.push(entry);
    return entry;
  };
  const roles = [];
  for (const role of ['receiver', 'worker']) {
    roles.push(
      { ROLE: role, DRIVER: 'pg' },
      { ROLE: role, DRIVER: 'pg' },
      { ROLE: role, DRIVER: 'postgres' },
      { ROLE: role, DRIVER: 'postgres', FETCH_TYPES: 'default' },
    );
  }
  for (const env of roles) start(env);
  while (!children.every((c) => c.messages.length > 0)) {
    if (Date.now() - started > 60_000) throw new Error('the processes did not start within 60 s');
    await sleep(50);
  }
  const ports = children.filter((c) => c.env.ROLE === 'receiver').map((c) => c.messages[0].port);
  log(`${children.length} processes up; terminating every payhook connection in a loop for ${seconds} s`);

  const ids = [];
  let answered = 0;
  let retries = 0;
  let killing = true;
  const deliverOne = async (n) => {
    const body = webhookBody();
    ids.push(String(body.id));
    for (let attempt = 0; ; attempt++) {
      const answer = await send(ports[(n + attempt) % ports.length], signDelivery(body)).catch(() => undefined);
      if (answer?.status === 200) break;
      retries++;
      await sleep(50);
    }
    answered++;
  };
  let next = 0;
  const sender = Promise.all(
    Array.from({ length: lanes }, async () => {
      while (killing) await deliverOne(next++);
    }),
  );
  let kills = 0;
  let terminated = 0;
  const loopEnds = Date.now() + seconds * 1000;
  while (Date.now() < loopEnds) {
    const { rowCount } = await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND application_name <> 'chaos-admin'`,
    );
    kills++;
    terminated += rowCount ?? 0;
    await sleep(30 + Math.random() * 70);
  }
  killing = false;
  log(`loop over: ${kills} rounds, ${terminated} backends terminated; finishing the deliveries in flight`);
  await sender;
  const deadline = Date.now() + 60_000;
  let applied = 0;
  while (Date.now() < deadline) {
    applied = (await admin.query('SELECT count(*)::int AS n FROM applied')).rows[0].n;
    if (applied >= ids.length) break;
    await sleep(250);
  }
  const twice = (await admin.query('SELECT delivery_id FROM applied GROUP BY delivery_id HAVING count(*) > 1')).rows
    .length;
  const distinct = new Set(
    (await admin.query('SELECT DISTINCT delivery_id FROM applied')).rows.map((r) => r.delivery_id),
  );
  const missing = ids.filter((id) => !distinct.has(id)).length;
  const exited = children.filter((c) => c.child.exitCode !== null || c.child.signalCode !== null);

  log(
    `deliveries ${ids.length} (answered 200: ${answered}, retries sent: ${retries}); applied ${applied}, ` +
      `missing ${missing}, applied twice ${twice}; processes exited ${exited.length} of ${children.length}`,
  );
  if (kills < seconds) failures.push(`only ${kills} termination rounds`);
  if (missing > 0) failures.push(`${missing} deliveries never applied`);
  if (twice > 0) failures.push(`${twice} deliveries applied more than once`);
  for (const c of exited) {
    failures.push(
      `${c.env.ROLE} on ${c.env.DRIVER}${c.env.FETCH_TYPES ? ' (fetch_types on)' : ''} exited:\n${c.stderr.slice(-800)}`,
    );
  }
} catch (error) {
  failures.push(String(error?.stack ?? error));
} finally {
  for (const c of children) c.child.kill('SIGKILL');
  await admin.end();
  await server.destroy();
}
process.stdout.write(failures.length === 0 ? 'PASS\n' : `FAIL\n${failures.map((f) => `- ${f}`).join('\n')}\n`);
process.exit(failures.length === 0 ? 0 : 1);
