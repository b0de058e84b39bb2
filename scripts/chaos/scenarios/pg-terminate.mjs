// Issue 23 defects 2 and 3: a dropped PostgreSQL connection ended processes
// (a pg Pool's checked-out client with no error listener; postgres.js's type
// fetch on a new connection). Here pg_terminate_backend on every payhook
// connection, in a loop, against two receivers (store + inbox) and two inbox
// workers on each driver, each in its own process as the guide's recipes run
// them (../pg-app.mjs; one postgres.js pair leaves fetch_types on, as a
// merchant who forgot it), while the service keeps delivering and retrying.
// Judged always: no process exits, every receiver answers on its own and every
// worker takes rows once the loop stops, every delivery is applied exactly once (judged after a lease has
// passed, so a late second run shows). The loop lasts 10 s in the quick run, 60 s in the
// full one (CHAOS_PG_SECONDS overrides).
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createPostgresInbox, createPostgresStore } from 'payhook/postgres';
import { createTestWebhook, signWebhook, TEST_KEY_PAIR } from 'payhook/testing';
import { startPostgresServer } from '../../lib/postgres-server.mjs';
import { createAgent, post, sleep } from '../net.mjs';

const APP = fileURLToPath(new URL('../pg-app.mjs', import.meta.url));
const WEBHOOK_URL = 'https://shop.example.kg/webhooks/payments';
const LANES = 4;
const ROLES = ['receiver', 'worker'].flatMap((role) => [
  { ROLE: role, DRIVER: 'pg' },
  { ROLE: role, DRIVER: 'pg' },
  { ROLE: role, DRIVER: 'postgres' },
  { ROLE: role, DRIVER: 'postgres', FETCH_TYPES: 'default' },
]);

export const pgTerminate = {
  id: '12',
  name: 'pg-terminate',
  title: 'pg_terminate_backend in a loop against receivers and inbox workers on pg and postgres.js',
  targets: [{ server: 'node', store: 'postgres (pg + postgres.js)' }],
  async run(ctx, _pair, ledger) {
    const seconds = Number(process.env.CHAOS_PG_SECONDS ?? (ctx.quick ? 10 : 60));
    const server = await startPostgresServer();
    const admin = new pg.Pool({ connectionString: server.url, max: 4, application_name: 'chaos-admin' });
    admin.on('error', () => {});
    const children = [];
    try {
      await admin.query('CREATE TABLE applied (delivery_id text NOT NULL, pid integer NOT NULL)');
      await createPostgresStore({ client: admin, table: 'fault_dedup' }).migrate();
      await createPostgresInbox({ client: admin, table: 'fault_inbox' }).migrate();
      for (const env of ROLES) {
        const child = fork(APP, [], {
          env: {
            ...process.env,
            DATABASE_URL: server.url,
            PUBLIC_KEY: TEST_KEY_PAIR.publicKey,
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
      }
      const upBy = Date.now() + 60_000;
      while (!children.every((c) => c.messages.length > 0)) {
        if (Date.now() > upBy) throw new Error('the processes did not start within 60 s');
        await sleep(50);
      }
      const ports = children.filter((c) => c.env.ROLE === 'receiver').map((c) => c.messages[0].port);
      ctx.log(`  ${children.length} processes up; terminating every payhook connection for ${seconds} s`);

      const agent = createAgent();
      let killing = true;
      let next = 0;
      let retries = 0;
      const attempt = async (body, port) => {
        const signed = await signWebhook(body, { url: WEBHOOK_URL });
        const path = new URL(signed.url).pathname;
        const answer = await post({ port, path, headers: signed.headers, body: signed.body, agent });
        if (answer.status !== 0) ledger.answer(body.id, answer.status);
        return answer.status;
      };
      const deliverOne = async (n) => {
        const body = createTestWebhook();
        ledger.sent(body.id, 'handle');
        // The service retries every answer but 200 (each attempt signed afresh), here for at most about 30 s.
        for (let tries = 0; tries < 600; tries++) {
          if ((await attempt(body, ports[(n + tries) % ports.length])) === 200) return body.id;
          retries++;
          await sleep(50);
        }
        ledger.fail(`delivery ${body.id} was never answered 200`);
        return body.id;
      };
      const sender = Promise.all(
        Array.from({ length: LANES }, async () => {
          while (killing) await deliverOne(next++);
        }),
      );
      let rounds = 0;
      let terminated = 0;
      const loopEnds = Date.now() + seconds * 1000;
      while (Date.now() < loopEnds) {
        const { rowCount } = await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
           WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND application_name <> 'chaos-admin'`,
        );
        rounds++;
        terminated += rowCount ?? 0;
        await sleep(30 + Math.random() * 70);
      }
      killing = false;
      await sender;
      // Every receiver still serves on its own, once the faults stop (a retry to
      // another receiver above could hide one that stays broken).
      for (const [index, port] of ports.entries()) {
        for (let n = 0; n < 5; n++) {
          const body = createTestWebhook();
          ledger.sent(body.id, 'handle');
          const status = await attempt(body, port);
          if (status !== 200) ledger.fail(`receiver ${index} answered ${status} after the faults stopped`);
        }
      }
      // And every worker still takes rows: a burst after the faults, spread
      // over the receivers, must be applied by each worker process in part.
      const after = [];
      await Promise.all(
        Array.from({ length: LANES }, async (_, lane) => {
          for (let n = lane; n < 100; n += LANES) after.push(await deliverOne(n));
        }),
      );
      agent.destroy();
      // Every delivery answered 200 is applied by a worker soon after.
      const appliedBy = Date.now() + 60_000;
      for (;;) {
        const { rows } = await admin.query('SELECT count(DISTINCT delivery_id)::int AS n FROM applied');
        if (rows[0].n >= ledger.entries.size || Date.now() > appliedBy) break;
        await sleep(250);
      }
      // A claim cut off by a fault is taken again once its lease (3.5 s) passes:
      // wait that long before judging "exactly once", so a late second run shows.
      await sleep(4_500);
      const { rows } = await admin.query('SELECT delivery_id, pid FROM applied');
      for (const row of rows) ledger.handled(row.delivery_id);
      const late = new Set(after);
      const pids = new Set(rows.filter((row) => late.has(row.delivery_id)).map((row) => row.pid));
      for (const c of children.filter((child) => child.env.ROLE === 'worker')) {
        if (pids.has(c.child.pid)) continue;
        const which = `${c.env.DRIVER}${c.env.FETCH_TYPES ? ' (fetch_types on)' : ''}`;
        ledger.fail(`the worker on ${which} applied none of the 100 deliveries sent after the faults`);
      }
      ledger.metric('terminationRounds', rounds);
      ledger.metric('backendsTerminated', terminated);
      ledger.metric('retriesSent', retries);
      if (rounds < seconds) ledger.fail(`only ${rounds} termination rounds in ${seconds} s`);
      if (terminated === 0) ledger.fail('no connection was terminated');
      for (const c of children) {
        if (c.child.exitCode === null && c.child.signalCode === null) continue;
        const which = `${c.env.ROLE} on ${c.env.DRIVER}${c.env.FETCH_TYPES ? ' (fetch_types on)' : ''}`;
        ledger.fail(`the ${which} process exited:\n${c.stderr.slice(-800)}`);
      }
    } finally {
      for (const c of children) c.child.kill('SIGKILL');
      await admin.end();
      await server.destroy();
    }
  },
};
