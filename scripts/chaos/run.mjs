// `npm run chaos`: issue 12's torture run as a reproducible script. It starts
// its own receivers (node:http and a Web server, each with the memory, ioredis
// and node-redis stores) and its own redis-server (and PostgreSQL for the
// pg-terminate scenario), all on loopback, plays the
// service and the attackers against them, keeps a ledger of what was sent,
// handled and answered, prints a table, and exits non-zero when a target is
// missed. Knobs: --quick or CHAOS_QUICK=1 (the short subset `npm test` runs),
// CHAOS_SECONDS (the time bound), CHAOS_ONLY=1,query (some scenarios),
// CHAOS_JSON=<file> (the rows).
//
// The quick run judges what must hold on any machine (nothing lost, nothing
// twice, no false accept, no wrong answer) and prints the timing figures
// without judging them: a time is a measurement of the machine as much as of
// payhook, and the test suite holds no timed test. The full run judges the
// timing targets too.
import { writeFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { SERVERS, STORES } from './harness.mjs';
import { Ledger } from './ledger.mjs';
import { startRedis } from './redis.mjs';
import { judge, printDetails, printTable } from './report.mjs';
import { bomAnd500 } from './scenarios/bom-500.mjs';
import { deepBody } from './scenarios/deep-body.mjs';
import { eviction } from './scenarios/eviction.mjs';
import { flood } from './scenarios/flood.mjs';
import { invalidPayload } from './scenarios/invalid-payload.mjs';
import { mixed } from './scenarios/mixed.mjs';
import { oversized } from './scenarios/oversized.mjs';
import { pgTerminate } from './scenarios/pg-terminate.mjs';
import { query } from './scenarios/query.mjs';
import { slowStore } from './scenarios/slow-store.mjs';
import { sqliteLock } from './scenarios/sqlite-lock.mjs';

const SCENARIOS = [
  eviction,
  flood,
  slowStore,
  query,
  oversized,
  bomAnd500,
  invalidPayload,
  mixed,
  deepBody,
  sqliteLock,
  pgTerminate,
];

// --quick is the test suite's step: the short subset, and always every scenario of it.
const suiteStep = process.argv.includes('--quick');
const quick = suiteStep || process.env.CHAOS_QUICK === '1';
const seconds = Number(process.env.CHAOS_SECONDS ?? (quick ? 90 : 300));
if (!(seconds > 0)) throw new Error(`CHAOS_SECONDS must be a positive number, not ${process.env.CHAOS_SECONDS}`);
const only = suiteStep ? [] : (process.env.CHAOS_ONLY ?? '').split(',').filter(Boolean);
const started = Date.now();
const log = (line) => process.stderr.write(`[chaos ${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);

// The bound is a promise: past it the run reports what it has and fails.
const watchdog = setTimeout(() => {
  log(`time bound of ${seconds} s exceeded; stopping`);
  finish(true);
}, seconds * 1000);

const rows = [];
let redis;
const clients = {};

let finished = false;

function finish(timedOut) {
  if (finished) return;
  finished = true;
  clearTimeout(watchdog);
  process.stdout.write(
    `\npayhook chaos run (${quick ? 'quick' : 'full'}), ${((Date.now() - started) / 1000).toFixed(1)} s\n\n`,
  );
  printTable(rows);
  process.stdout.write('\n');
  printDetails(rows);
  const failed = rows.filter((row) => row.failures.length > 0);
  if (timedOut) process.stdout.write(`\nFAIL: the run did not finish within ${seconds} s\n`);
  process.stdout.write(
    `\n${failed.length === 0 && !timedOut ? 'PASS' : `FAIL: ${failed.length} of ${rows.length} rows missed a target`}\n`,
  );
  if (process.env.CHAOS_JSON) writeFileSync(process.env.CHAOS_JSON, JSON.stringify({ quick, timedOut, rows }, null, 2));
  // Clients and servers may still hold sockets after a time-out: exit outright.
  const code = failed.length === 0 && !timedOut ? 0 : 1;
  Promise.allSettled([clients.ioredis?.quit(), clients['node-redis']?.close?.()])
    .then(() => redis?.stop())
    .finally(() => process.exit(code));
  setTimeout(() => process.exit(code), 2_000).unref();
}

function selected(scenario) {
  return only.length === 0 || only.includes(scenario.id) || only.includes(scenario.name);
}

function pairsFor(scenario) {
  // A scenario with receivers of its own (another runtime, another store) names them.
  if (scenario.targets !== undefined) return scenario.targets;
  const pairs = [];
  for (const server of SERVERS) {
    for (const store of STORES) {
      if (scenario.stores !== undefined && !scenario.stores.includes(store)) continue;
      const chosen = quick ? (scenario.quickPairs ?? scenario.pairs) : scenario.pairs;
      if (chosen !== undefined && !chosen.includes(`${server}/${store}`)) continue;
      pairs.push({ server, store });
    }
  }
  return pairs;
}

function toRow(scenario, pair, ledger) {
  const summary = ledger.summary();
  const row = {
    scenario: scenario.id,
    name: scenario.name,
    target: `${pair.server}/${pair.store}`,
    ...summary,
    failures: ledger.failures,
    notes: ledger.notes,
    metrics: ledger.metrics,
  };
  // A scenario that sent nothing proved nothing.
  if (row.sent === 0) row.failures.push('sent nothing');
  row.failures = judge(row);
  return row;
}

async function connectClients() {
  const io = new Redis(redis.url, { lazyConnect: true });
  io.on('error', () => {}); // reconnects by itself; failures reach payhook as rejected commands
  await io.connect();
  clients.ioredis = io;
  const nodeRedis = createClient({ url: redis.url });
  nodeRedis.on('error', () => {});
  await nodeRedis.connect();
  clients['node-redis'] = nodeRedis;
}

async function main() {
  redis = await startRedis();
  log(`redis-server on port ${redis.port}`);
  await connectClients();
  const ctx = { quick, seconds, clients, redis, log };
  for (const scenario of SCENARIOS.filter(selected)) {
    const pairs = pairsFor(scenario);
    log(`scenario ${scenario.id} ${scenario.name}: ${scenario.title} (${pairs.length} receivers)`);
    const ledgers = pairs.map(() => new Ledger());
    try {
      if (scenario.runAll !== undefined) await scenario.runAll(ctx, pairs, ledgers);
      else for (const [i, pair] of pairs.entries()) await scenario.run(ctx, pair, ledgers[i]);
    } catch (error) {
      // A crash of the harness or of payhook is a failed row, never a skipped one.
      for (const ledger of ledgers) ledger.fail(`scenario threw: ${error?.stack ?? error}`);
    }
    for (const [i, pair] of pairs.entries()) rows.push(toRow(scenario, pair, ledgers[i]));
    if (pairs.length === 0) rows.push(failedRow(scenario.id, scenario.name, 'no receiver matched its pairs'));
  }
  // A whole run must have tried every receiver somewhere.
  if (only.length === 0) {
    for (const server of SERVERS) {
      for (const store of STORES) {
        if (!rows.some((row) => row.target === `${server}/${store}`)) {
          rows.push(failedRow('-', 'coverage', `no scenario ran against ${server}/${store}`));
        }
      }
    }
  }
  finish(false);
}

/** A row that only carries a failure: the run itself went wrong. */
function failedRow(scenario, name, failure) {
  return {
    scenario,
    name,
    target: '-',
    sent: 0,
    handled: 0,
    lost: 0,
    duplicated: 0,
    pending: 0,
    wrong: 0,
    falseAccepts: 0,
    wrongReasons: {},
    failures: [failure],
    notes: [],
    metrics: {},
  };
}

main().catch((error) => {
  log(`the run could not start: ${error?.stack ?? error}`);
  rows.push(failedRow('-', 'setup', String(error?.message ?? error)));
  finish(false);
});
