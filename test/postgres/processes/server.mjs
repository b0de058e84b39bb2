// A webhook receiver in its own process, as a merchant would run it: the Node
// handler from the built package, the PostgreSQL store, and either a direct
// onPayment (MODE=store) or the inbox's enqueue (MODE=inbox). Reports its port
// over IPC.
import { createServer } from 'node:http';
import pg from 'pg';
import { createNodeWebhookHandler } from 'payhook/node';
import { createPostgresInbox, createPostgresStore } from 'payhook/postgres';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20, connectionTimeoutMillis: 2000 });
// Idle connections break when PostgreSQL stops; without a listener that would crash the process.
pool.on('error', () => {});
const inbox = createPostgresInbox({ client: pool, table: process.env.INBOX_TABLE });

const onPayment =
  process.env.MODE === 'inbox'
    ? inbox.enqueue
    : async (webhook) => {
        // Wide enough a window for the 99 other copies to arrive while this one holds the claim.
        await new Promise((resolve) => setTimeout(resolve, 50));
        await pool.query('INSERT INTO handled (delivery_id, pid) VALUES ($1, $2)', [webhook.id, process.pid]);
      };

const store = createPostgresStore({ client: pool, table: process.env.STORE_TABLE });
// As at a deploy: both tables brought to the current schema version before the first request.
await Promise.all([store.migrate(), inbox.migrate()]);

const handler = createNodeWebhookHandler({
  publicKeys: process.env.PUBLIC_KEY,
  webhookUrl: 'https://shop.example.kg/webhooks/payments',
  store,
  // Generous: the test machine is shared and busy; a slow claim would be a 503, which is correct but not the point.
  storeTimeoutMs: 15_000,
  onPayment,
  logger: false,
});

const server = createServer(handler);
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (message) => {
  if (message === 'exit') server.close(() => pool.end().then(() => process.exit(0)));
});
