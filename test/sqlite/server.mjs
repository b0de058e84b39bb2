// Runs in Node 22/24, Deno or Bun: opens the SQLite file with the runtime's
// own driver (node:sqlite's DatabaseSync, or bun:sqlite's Database), creates
// the store from the bundled payhook/sqlite, and answers each store call on
// loopback, for the Node-side contract suite (test/helpers/remote-store.ts).
//   usage: <runtime> server.mjs <bundled store module> <database file>
// Prints `listening <port>` once ready.
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

const [storeModule, file] = globalThis.Deno ? globalThis.Deno.args : process.argv.slice(2);
const { createSqliteStore } = await import(pathToFileURL(storeModule).href);
const database = globalThis.Bun
  ? new (await import('bun:sqlite')).Database(file)
  : new (await import('node:sqlite')).DatabaseSync(file);
// Several processes share the file in the tests: WAL, as docs/sqlite.md says
// (busy_timeout left at 0: the store waits for a busy file itself).
database.exec('PRAGMA journal_mode = WAL');
// A table named like an SQL keyword: the store quotes its name (the receivers use the default name).
const store = createSqliteStore({ database, table: 'order' });

const decode = (text) =>
  JSON.parse(text, (_key, value) =>
    typeof value === 'object' && value !== null && '$number' in value ? Number(value.$number) : value,
  );

async function answer(operation, args) {
  try {
    let result = null;
    if (operation === 'claim') result = await store.claim(args.key, { leaseMs: args.leaseMs });
    else if (operation === 'complete') await store.complete(args.key, args.token, { retentionMs: args.retentionMs });
    else if (operation === 'release') await store.release(args.key, args.token);
    else throw new Error(`no operation ${operation}`);
    return { ok: true, result };
  } catch (error) {
    return { ok: false, error: { code: error?.code ?? 'NOT_A_PAYHOOK_ERROR', message: String(error) } };
  }
}

const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', async () => {
    const operation = request.url.replace('/store/', '');
    const body = await answer(operation, decode(Buffer.concat(chunks).toString('utf8')));
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
