// A receiver (ROLE=receiver) or an inbox worker (ROLE=worker) as the guide's
// recipes run them, on DRIVER=pg (a Pool) or DRIVER=postgres (postgres.js;
// FETCH_TYPES=default leaves postgres.js's fetch_types on, as a merchant who
// forgot the recipe's setting would). No process-level guard: a connection
// fault that escaped payhook would end this process, and the test would see it.
// Reports over IPC: { port } (receiver), { at: 'ready' } (worker).
import { createServer } from 'node:http';
import { createNodeWebhookHandler } from 'payhook/node';
import { createPostgresInbox, createPostgresStore } from 'payhook/postgres';

// The parent's end is this process's end: nothing is left running if the run is cut short.
process.on('disconnect', () => process.exit(1));

const url = process.env.DATABASE_URL;
let client;
let end;
if (process.env.DRIVER === 'pg') {
  const { default: pg } = await import('pg');
  client = new pg.Pool({ connectionString: url, max: 8, connectionTimeoutMillis: 2000 });
  client.on('error', () => {}); // idle connections: the recipe's listener
  end = () => client.end();
} else {
  const { default: postgres } = await import('postgres');
  const settings = { max: 8, connect_timeout: 2, onnotice: () => {} };
  client = postgres(url, process.env.FETCH_TYPES === 'default' ? settings : { ...settings, fetch_types: false });
  end = () => client.end({ timeout: 1 });
}
const inbox = createPostgresInbox({ client, table: process.env.INBOX_TABLE });

if (process.env.ROLE === 'receiver') {
  const store = createPostgresStore({ client, table: process.env.STORE_TABLE });
  // The recipe's start-up check: fail fast when the tables are not migrated.
  await Promise.all([store.check(), inbox.check()]);
  const handler = createNodeWebhookHandler({
    publicKeys: process.env.PUBLIC_KEY,
    webhookUrl: 'https://shop.example.kg/webhooks/payments',
    store,
    storeTimeoutMs: 1_000,
    handlerTimeoutMs: 1_000,
    // Short, so that a claim whose completion was cut off by the test's faults frees its delivery soon.
    leaseMs: 3_500,
    onPayment: inbox.enqueue,
    logger: false,
  });
  const server = createServer(handler);
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', (message) => {
    if (message === 'exit') server.close(() => end().then(() => process.exit(0)));
  });
} else {
  // The recipe's start-up check (docs/postgres.md). It is also the first statement: with fetch_types on, a
  // connection dropped during that one still escapes postgres.js (documented), so the faults start after it.
  await inbox.check();
  const worker = inbox.process(
    async (webhook, tx) => {
      await tx.query('INSERT INTO applied (delivery_id, pid) VALUES ($1, $2)', [webhook.id, process.pid]);
    },
    { concurrency: 3, pollIntervalMs: 50, maxBackoffMs: 500, retryDelayMs: () => 50, maxAttempts: 1000 },
  );
  process.on('message', async (message) => {
    if (message !== 'exit') return;
    await worker.stop();
    await end();
    process.exit(0);
  });
  process.send({ at: 'ready' });
}
