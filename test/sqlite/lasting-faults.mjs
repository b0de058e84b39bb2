// Runs in Node 22/24 or Deno (node:sqlite) or Bun (bun:sqlite), once: faults
// that every retry meets alike, and one the store can mend. Each was answered
// as something else (a 503 outage for ever, or a fix that does not apply):
// - a connection set to wait inside the driver (PRAGMA busy_timeout), which
//   stops the whole process while another one holds the file;
// - the file replaced under the open connection (a restore from a copy);
// - a table of the store's name with another shape (a NOT NULL column it does not fill, or its columns missing);
// - the table dropped by other code while the store runs.
// Prints one JSON line.
//   usage: <runtime> lasting-faults.mjs <bundled store module> <database file>
import { copyFileSync, renameSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [storeModule, file] = globalThis.Deno ? globalThis.Deno.args : process.argv.slice(2);
const { createSqliteStore } = await import(pathToFileURL(storeModule).href);
const Driver = globalThis.Bun ? (await import('bun:sqlite')).Database : (await import('node:sqlite')).DatabaseSync;
const lease = { leaseMs: 60_000 };
const outcome = (promise) =>
  promise.then(
    (result) => result.status,
    (error) => ({ code: error.code, message: error.message }),
  );

const waiting = new Driver(`${file}-waits`);
waiting.exec('PRAGMA busy_timeout = 5000');
let driverWait;
try {
  createSqliteStore({ database: waiting });
  driverWait = 'created';
} catch (error) {
  driverWait = { code: error.code, message: error.message };
}

// In memory: Deno (2.9) gives every such connection 5 s whatever its options, so it is not refused; the store sets
// the wait to 0 itself (SQL cannot tell a private database from one shared through vfs=memdb, which locks).
const inMemory = new Driver(':memory:');
inMemory.exec('PRAGMA busy_timeout = 5000');
const memory = [
  await outcome(createSqliteStore({ database: inMemory }).claim('pay_0_DEBIT:SUCCEEDED', lease)),
  Object.values(inMemory.prepare('PRAGMA busy_timeout').get())[0],
];

const movedFile = `${file}-moved`;
const moved = createSqliteStore({ database: new Driver(movedFile) });
await moved.claim('pay_1_DEBIT:SUCCEEDED', lease);
copyFileSync(movedFile, `${movedFile}.copy`);
renameSync(`${movedFile}.copy`, movedFile);

const foreignFile = `${file}-foreign`;
const foreign = new Driver(foreignFile);
foreign.exec(
  'CREATE TABLE payhook_deliveries (key TEXT PRIMARY KEY, state TEXT NOT NULL, token TEXT, expires_at REAL, created_at INTEGER NOT NULL)',
);

// Another app's table of that name, without the store's columns.
const columnsFile = `${file}-columns`;
const columns = new Driver(columnsFile);
columns.exec('CREATE TABLE payhook_deliveries (key TEXT PRIMARY KEY, value TEXT)');

const store = createSqliteStore({ database: new Driver(file) });
const before = await outcome(store.claim('pay_2_DEBIT:SUCCEEDED', lease));
new Driver(file).exec('DROP TABLE payhook_deliveries');

console.log(
  JSON.stringify({
    driverWait,
    memory,
    moved: await outcome(moved.claim('pay_3_DEBIT:SUCCEEDED', lease)),
    foreign: await outcome(createSqliteStore({ database: foreign }).claim('pay_4_DEBIT:SUCCEEDED', lease)),
    // Refused at creation, where the store sets the table up.
    columns: await outcome(
      Promise.resolve().then(() => createSqliteStore({ database: columns }).claim('pay_5_DEBIT:SUCCEEDED', lease)),
    ),
    dropped: [before, await outcome(store.claim('pay_2_DEBIT:SUCCEEDED', lease))],
  }),
);
