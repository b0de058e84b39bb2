// Runs in Node 22/24, Deno or Bun (all have node:sqlite), once: the store on a
// connection opened with `returnArrays: true`, which makes every statement of
// the connection hand rows back as arrays. A delivery handled once must read
// as completed when the service sends it again, and one held as in-progress.
// Prints one JSON line: whether rows came back as arrays, and what a second
// claim of a completed and of a held key answered.
//   usage: <runtime> row-arrays.mjs <bundled store module> <database file>
import { pathToFileURL } from 'node:url';

const [storeModule, file] = globalThis.Deno ? globalThis.Deno.args : process.argv.slice(2);
const { createSqliteStore } = await import(pathToFileURL(storeModule).href);
const { DatabaseSync } = await import('node:sqlite');
const database = new DatabaseSync(file, { returnArrays: true });
const store = createSqliteStore({ database });

const done = await store.claim('pay_1_DEBIT:SUCCEEDED', { leaseMs: 60_000 });
if (done.status !== 'claimed') throw new Error(done.status);
await store.complete('pay_1_DEBIT:SUCCEEDED', done.token, { retentionMs: 60_000 });
await store.claim('pay_2_DEBIT:SUCCEEDED', { leaseMs: 60_000 });

console.log(
  JSON.stringify({
    arrays: Array.isArray(database.prepare('SELECT 1 AS one').get()),
    completed: (await store.claim('pay_1_DEBIT:SUCCEEDED', { leaseMs: 60_000 })).status,
    held: (await store.claim('pay_2_DEBIT:SUCCEEDED', { leaseMs: 60_000 })).status,
  }),
);
