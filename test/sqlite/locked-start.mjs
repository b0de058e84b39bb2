// Runs in Node 22/24, Deno or Bun, once: a store created while another
// connection holds the file in one EXCLUSIVE transaction, in SQLite's default
// rollback journal, where even finding the existing table has to wait. Its
// creation must not fail for that: the first call sets the table up, waiting
// for the lock as every call does. Prints one JSON line: how the creation
// went, what the first claim answered once the holder let go 100 ms later (and
// whether it waited for that), and what a claim answers when the hold outlasts
// busyTimeoutMs (the message must name the time it really waited).
//   usage: <runtime> locked-start.mjs <bundled store module> <database file>
import { pathToFileURL } from 'node:url';

const [storeModule, file] = globalThis.Deno ? globalThis.Deno.args : process.argv.slice(2);
const { createSqliteStore } = await import(pathToFileURL(storeModule).href);
const Driver = globalThis.Bun ? (await import('bun:sqlite')).Database : (await import('node:sqlite')).DatabaseSync;
createSqliteStore({ database: new Driver(file) }); // the table, from an earlier start
const holder = new Driver(file);

/** Creates a store on a new connection while `holder` holds the file, and makes one claim, letting go after `holdMs`. */
async function startWhileHeld(key, holdMs, busyTimeoutMs) {
  holder.exec('BEGIN EXCLUSIVE');
  let letGo = false;
  setTimeout(() => {
    holder.exec('COMMIT');
    letGo = true;
  }, holdMs);
  let store;
  try {
    store = createSqliteStore({ database: new Driver(file), busyTimeoutMs });
  } catch (error) {
    await new Promise((resolve) => setTimeout(resolve, holdMs));
    return { created: error.code, message: error.message };
  }
  // Waited: answered only once the holder let go (not timed, so a loaded machine cannot fail it).
  return store.claim(key, { leaseMs: 60_000 }).then(
    (result) => ({ created: 'ok', claim: result.status, waited: letGo }),
    (error) => ({ created: 'ok', claim: error.code, message: error.message }),
  );
}

const freed = await startWhileHeld('pay_1_DEBIT:SUCCEEDED', 100, 2_000);
const outlasted = await startWhileHeld('pay_2_DEBIT:SUCCEEDED', 400, 100);
console.log(
  JSON.stringify({
    ...freed,
    outlasted: outlasted.claim ?? outlasted.created,
    said: /locked by another connection for 100 ms/.test(outlasted.message ?? ''),
  }),
);
