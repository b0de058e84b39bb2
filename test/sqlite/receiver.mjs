// Runs in Node 22/24, Deno or Bun: a whole receiver on a SQLite file, opened
// as the guide says (the driver's busy_timeout left at 0; WAL, or SQLite's
// default rollback journal), with the Web handler served over node:http on
// loopback, for busy.test.ts.
//   usage: <runtime> receiver.mjs <bundled module> <database file> <options JSON>
// The options JSON: { journalMode: 'wal' | 'delete', handler: { publicKeys, …
// any other handler option } }. Routes: POST /hook (the handler), GET /health (answered at once,
// without payhook) and GET /handled (how often onPayment ran, per id).
// Prints `listening <port>` once ready.
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

const [bundle, file, json] = globalThis.Deno ? globalThis.Deno.args : process.argv.slice(2);
const options = JSON.parse(json);
const { createSqliteStore, createWebhookHandler } = await import(pathToFileURL(bundle).href);
const database = globalThis.Bun
  ? new (await import('bun:sqlite')).Database(file)
  : new (await import('node:sqlite')).DatabaseSync(file);
database.exec(`PRAGMA journal_mode = ${options.journalMode === 'wal' ? 'WAL' : 'DELETE'}`);
const store = createSqliteStore({ database });
const handled = {};

let handler;
const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', async () => {
    if (request.method === 'GET') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(request.url === '/handled' ? handled : { ok: true }));
      return;
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) headers.set(name, String(value));
    const answer = await handler(
      new Request(`http://${request.headers.host}${request.url}`, {
        method: request.method,
        headers,
        body: Buffer.concat(chunks),
      }),
    );
    response.writeHead(answer.status, Object.fromEntries(answer.headers));
    response.end(Buffer.from(await answer.arrayBuffer()));
  });
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  handler = createWebhookHandler({
    webhookUrl: `http://127.0.0.1:${port}/hook`,
    store,
    logger: false,
    onPayment(webhook) {
      handled[webhook.id] = (handled[webhook.id] ?? 0) + 1;
    },
    ...options.handler,
  });
  console.log(`listening ${port}`);
});
