// Runs in Node 22/24, Deno or Bun, once: a claim whose commit meets another
// connection's read lock (SQLite's default rollback journal, where a writer
// cannot commit while anyone reads). The other connection starts reading just
// before the claim statement and lets go 20 ms later. Prints one JSON line:
// what the claim answered, how many rows the file holds afterwards, and what a
// second store on the other connection answers for the same key.
//   usage: <runtime> commit-busy.mjs <bundled store module> <database file>
import { pathToFileURL } from 'node:url';

const [storeModule, file] = globalThis.Deno ? globalThis.Deno.args : process.argv.slice(2);
const { createSqliteStore } = await import(pathToFileURL(storeModule).href);
const Driver = globalThis.Bun ? (await import('bun:sqlite')).Database : (await import('node:sqlite')).DatabaseSync;
const own = new Driver(file);
const other = new Driver(file);
const table = 'payhook_deliveries';

let pending = true;
function readerSlipsIn() {
  if (!pending) return;
  pending = false;
  other.exec('BEGIN');
  other.prepare(`SELECT count(*) AS n FROM ${table}`).get();
  setTimeout(() => other.exec('COMMIT'), 20);
}
const database = {
  exec: (sql) => own.exec(sql),
  prepare(sql) {
    const statement = own.prepare(sql);
    if (!sql.startsWith('INSERT') || !sql.includes("'claimed'")) return statement;
    return {
      run: (...values) => statement.run(...values),
      get: (...values) => (readerSlipsIn(), statement.get(...values)),
      all: (...values) => (readerSlipsIn(), statement.all(...values)),
    };
  },
};

const key = 'pay_1_DEBIT:SUCCEEDED';
const claim = await createSqliteStore({ database }).claim(key, { leaseMs: 60_000 });
await new Promise((resolve) => setTimeout(resolve, 50));
const rows = other.prepare(`SELECT count(*) AS n FROM ${table}`).get().n;
const second = await createSqliteStore({ database: other }).claim(key, { leaseMs: 60_000 });
console.log(JSON.stringify({ claim: claim.status, rows, second: second.status }));
