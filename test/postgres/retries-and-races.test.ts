// The PostgreSQL store and inbox at their edges, against a real server: a lease that passes mid-claim, a
// retry delay past any interval, a park reason holding NUL, a retryDelayMs that throws.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { park } from '../../src/park.js';
import { createPostgresInbox, createPostgresStore } from '../../src/postgres/index.js';
import { parseWebhook } from '../../src/webhook/parse.js';
import { startPostgresServer, type PostgresServer } from '../helpers/postgres-server.js';
import { webhookBody } from '../helpers/sign.js';

let server: PostgresServer;
let pool: pg.Pool;

beforeAll(async () => {
  server = await startPostgresServer();
  pool = new pg.Pool({ connectionString: server.url, max: 5 });
  pool.on('error', () => {});
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await server?.destroy();
});

describe('createPostgresStore claim', () => {
  it('takes a row whose lease passes between its claim statement and its state statement', async () => {
    const table = 'race_expired';
    await createPostgresStore({ client: pool, table }).migrate();
    let raced = false;
    // A pg client that, the first time the claim finds the row taken, lets its lease pass before answering.
    const client = {
      async query(text: string, values?: unknown[]) {
        const result = await pool.query(text, values);
        if (!raced && text.startsWith(`INSERT INTO ${table}`) && result.rows.length === 0) {
          raced = true;
          await pool.query(`UPDATE ${table} SET expires_at = clock_timestamp() - interval '1 second'`);
        }
        return result;
      },
    };
    const store = createPostgresStore({ client, table });
    expect((await store.claim('k', { leaseMs: 60_000 })).status).toBe('claimed');
    // The first holder's lease passes just as the second looks: the second takes it (no 409 for a free row).
    expect((await store.claim('k', { leaseMs: 60_000 })).status).toBe('claimed');
    expect(raced).toBe(true);
  });
});

describe('createPostgresInbox retry delay', () => {
  it('records a failure whose retryDelayMs is past any interval PostgreSQL holds (2 ** attempt seconds, attempt 60)', async () => {
    const inbox = createPostgresInbox({ client: pool, table: 'inbox_huge_delay' });
    await inbox.migrate();
    await inbox.enqueue(parseWebhook(webhookBody()));
    const outcome = await inbox.processNext(
      () => {
        throw new Error('order service down');
      },
      { retryDelayMs: () => 1000 * 2 ** 60 },
    );
    // Unclamped, the UPDATE that records the attempt fails ("interval out of range"): the attempt is rolled back
    // uncounted and the row is taken again, for ever.
    expect(outcome).toBe('retrying');
    const [row] = (await pool.query('SELECT attempts FROM inbox_huge_delay')).rows as { attempts: number }[];
    expect(row?.attempts).toBe(1);
  });
});

describe('createPostgresInbox retryDelayMs that throws', () => {
  it('backs off by the default delay (1 s for a first attempt), not 0', async () => {
    const inbox = createPostgresInbox({ client: pool, table: 'inbox_throwing_delay' });
    await inbox.migrate();
    await inbox.enqueue(parseWebhook(webhookBody()));
    const fail = () => {
      throw new Error('order service down');
    };
    const retry = {
      retryDelayMs: () => {
        throw new Error('no delay');
      },
    };
    expect(await inbox.processNext(fail, retry)).toBe('retrying');
    const [row] = (
      await pool.query(
        'SELECT extract(epoch FROM next_attempt_at - clock_timestamp()) * 1000 AS ms FROM inbox_throwing_delay',
      )
    ).rows as { ms: string }[];
    expect(Number(row?.ms)).toBeGreaterThan(500);
    expect(await inbox.processNext(fail, retry)).toBe('idle');
  });
});

describe('createPostgresInbox marks', () => {
  async function inboxWithRow(table: string) {
    const inbox = createPostgresInbox({ client: pool, table });
    await inbox.migrate();
    await inbox.enqueue(parseWebhook(webhookBody()));
    return inbox;
  }

  it('parks a row whose reason holds a NUL', async () => {
    const inbox = await inboxWithRow('inbox_nul_park');
    expect(await inbox.processNext(() => park('amount \0 mismatch'))).toBe('parked');
    const [row] = (await pool.query('SELECT state FROM inbox_nul_park')).rows as { state: string }[];
    expect(row?.state).toBe('parked');
  });

  it('gives up, never retries, a row whose handler began a transaction of its own and let it abort', async () => {
    const inbox = await inboxWithRow('inbox_own_abort');
    const outcome = await inbox.processNext(async (_webhook, tx) => {
      await tx.query('COMMIT');
      await tx.query('BEGIN');
      await tx.query('SELECT 1 / 0').catch(() => {});
    });
    expect(outcome).toBe('failed');
    const [row] = (await pool.query('SELECT state FROM inbox_own_abort')).rows as { state: string }[];
    expect(row?.state).toBe('failed');
  });
});
