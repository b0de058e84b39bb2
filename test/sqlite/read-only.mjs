// Runs in Node 22/24, Deno or Bun (all have node:sqlite), once: the store on a
// connection opened read-only, on a file whose table is already set up (a
// volume mounted read-only, a file owned by another user). Every claim fails
// alike, so it must be a misconfiguration (500, `misconfigured`), not an
// outage answered 503 for ever. Prints one JSON line: the code and whether
// the message says what to fix.
//   usage: <runtime> read-only.mjs <bundled store module> <database file>
import { pathToFileURL } from 'node:url';

const [storeModule, file] = globalThis.Deno ? globalThis.Deno.args : process.argv.slice(2);
const { createSqliteStore } = await import(pathToFileURL(storeModule).href);
const { DatabaseSync } = await import('node:sqlite');
const writable = new DatabaseSync(file);
createSqliteStore({ database: writable });
writable.close();

// Deno (2.9) gives a read-only connection a 5 s busy timeout, its `timeout` option notwithstanding, and the store
// refuses a connection that waits inside the driver: set to 0 as that refusal says.
const readOnly = new DatabaseSync(file, { readOnly: true });
readOnly.exec('PRAGMA busy_timeout = 0');
const store = createSqliteStore({ database: readOnly });
const error = await store.claim('pay_1_DEBIT:SUCCEEDED', { leaseMs: 60_000 }).then(
  () => ({}),
  (caught) => caught,
);
console.log(JSON.stringify({ code: error.code, fix: /write the file/.test(String(error.message)) }));
