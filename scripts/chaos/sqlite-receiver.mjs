// A receiver on a SQLite file for the chaos run's sqlite-lock scenario. The
// run itself is on Node 20, which has no node:sqlite, so this runs in its own
// process on the pinned Node 24 of the runtime matrix (test/runtimes), from
// the built package. The file is opened as docs/sqlite.md says: WAL, the
// driver's busy_timeout left at 0.
//   usage: node24 sqlite-receiver.mjs <database file> <storeTimeoutMs>
// Routes: POST /hook (createNodeWebhookHandler) and GET /health (answered at
// once, without payhook). Prints `listening <port>`, then `handled <id>` each
// time onPayment ran.
import { createServer } from 'node:http';
import { DatabaseSync } from 'node:sqlite';
import { createNodeWebhookHandler } from 'payhook/node';
import { createSqliteStore } from 'payhook/sqlite';
import { TEST_KEY_PAIR } from 'payhook/testing';

const [file, storeTimeoutMs] = process.argv.slice(2);
const database = new DatabaseSync(file);
database.exec('PRAGMA journal_mode = WAL');
const store = createSqliteStore({ database });

let handler;
const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/health') {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    return;
  }
  handler(request, response);
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  handler = createNodeWebhookHandler({
    publicKeys: TEST_KEY_PAIR.publicKey,
    webhookUrl: `http://127.0.0.1:${port}/hook`,
    store,
    storeTimeoutMs: Number(storeTimeoutMs),
    logger: false,
    onPayment(webhook) {
      process.stdout.write(`handled ${webhook.id}\n`);
    },
  });
  process.stdout.write(`listening ${port}\n`);
});
