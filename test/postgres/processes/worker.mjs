// An inbox worker in its own process. CRASH=before|after makes it report
// (over IPC) just before or just after the merchant's order update, then hang
// inside the transaction until the test kills it with SIGKILL.
import postgres from 'postgres';
import { createPostgresInbox } from 'payhook/postgres';

const sql = postgres(process.env.DATABASE_URL, { max: 4, onnotice: () => {} });
const inbox = createPostgresInbox({ client: sql, table: process.env.INBOX_TABLE });
const crash = process.env.CRASH;
const hang = () => new Promise(() => {});

inbox.process(
  async (webhook, tx) => {
    if (crash === 'before') {
      process.send({ at: 'before-update', id: webhook.id });
      await hang();
    }
    await tx.query('UPDATE orders SET paid = paid + 1 WHERE payment_id = $1', [webhook.fields.paymentId]);
    if (crash === 'after') {
      process.send({ at: 'after-update', id: webhook.id });
      await hang();
    }
    process.send({ at: 'done', id: webhook.id });
  },
  { pollIntervalMs: 50, onError: (error) => process.send({ at: 'error', message: String(error) }) },
);
process.send({ at: 'ready' });
