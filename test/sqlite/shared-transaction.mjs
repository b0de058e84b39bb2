// Runs in Node 22/24, Deno or Bun, once: the store on a connection that other
// code also uses, with a transaction of its own open across an await (another
// delivery's onPayment writing an outbox row). A claim made meanwhile must not
// join that transaction, whose ROLLBACK would undo it after it was reported
// taken. Prints one JSON line: what a claim made during the transaction and a
// second claim of the same key after its ROLLBACK answered, the rows the file
// holds, what a claim answers when the transaction outlasts busyTimeoutMs, and what a store created inside a
// transaction that is then rolled back answers to its first claim.
//   usage: <runtime> shared-transaction.mjs <bundled store module> <database file>
import { pathToFileURL } from 'node:url';

const [storeModule, file] = globalThis.Deno ? globalThis.Deno.args : process.argv.slice(2);
const { createSqliteStore } = await import(pathToFileURL(storeModule).href);
const Driver = globalThis.Bun ? (await import('bun:sqlite')).Database : (await import('node:sqlite')).DatabaseSync;
const shared = new Driver(file);
shared.exec('PRAGMA journal_mode = WAL');
shared.exec('CREATE TABLE outbox (id TEXT PRIMARY KEY)');
const store = createSqliteStore({ database: shared, busyTimeoutMs: 2_000 });
const key = 'pay_1_DEBIT:SUCCEEDED';

shared.exec('BEGIN');
shared.prepare('INSERT INTO outbox VALUES (?)').run('pay_2_DEBIT');
const rolledBack = new Promise((resolve) =>
  setTimeout(() => {
    shared.exec('ROLLBACK');
    resolve();
  }, 50),
);
const first = await store.claim(key, { leaseMs: 60_000 });
await rolledBack;
const second = await store.claim(key, { leaseMs: 60_000 });
const rows = new Driver(file).prepare('SELECT count(*) AS n FROM payhook_deliveries').get().n;

shared.exec('BEGIN');
const outlasted = await createSqliteStore({ database: shared, busyTimeoutMs: 100 })
  .claim('pay_3_DEBIT:SUCCEEDED', { leaseMs: 60_000 })
  .then(
    (result) => result.status,
    (error) => error.code,
  );
shared.exec('COMMIT');

// A store created while a transaction is open: a table made inside it would go with its ROLLBACK.
shared.exec('BEGIN');
const createdInside = createSqliteStore({ database: shared, table: 'made_in_transaction' });
shared.exec('ROLLBACK');
const afterRollback = await createdInside.claim('pay_4_DEBIT:SUCCEEDED', { leaseMs: 60_000 }).then(
  (result) => result.status,
  (error) => error.code,
);

console.log(JSON.stringify({ first: first.status, second: second.status, rows, outlasted, afterRollback }));
