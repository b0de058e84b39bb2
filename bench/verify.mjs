// payhook's in-process figures: `npm run build && node bench/verify.mjs`. (`npm run bench` is the HTTP
// benchmark, bench/run.mjs; see docs/performance.md.)
//
// Measures, in one run and on the same signed deliveries, the built package
// (imported by name through its exports map) against node:crypto baselines,
// and prints ops/s plus ratios to the raw single-thread figure. It is a
// script, not a test; the process exits non-zero only when something errs
// (a valid delivery rejected, a canonical string that differs from the reference).
//
// Environment knobs (all optional):
//   BENCH_ROUNDS=5        measurement rounds (medians are reported)
//   BENCH_MS=800          milliseconds per figure per round
//   BENCH_JSON=path       also write every measurement as JSON to `path`
//   BENCH_BASELINE=dir    another build of payhook (a folder with package.json and dist/, e.g. one built from
//                         the previous release): measured beside this one in the same run, for an A/B
//   UV_THREADPOOL_SIZE    libuv's thread pool (Web Crypto runs there); printed, never set here
import { cpus, loadavg } from 'node:os';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as payhook from 'payhook';
import { makeFloorReceiver, naiveReceiver, rawVerify, rawVerifyAsync } from './baselines.mjs';
import { makeDeliveries, PUBLIC_KEY_OBJECT, PUBLIC_KEY_PEM, VARIANT_COUNT } from './deliveries.mjs';
import { formatOps, formatRatio, measureAsync, measureSync, env, median, settle, table } from './lib.mjs';

const ROUNDS = Math.max(1, Math.round(env('BENCH_ROUNDS', 5)));
const MS = env('BENCH_MS', 800);
const IN_FLIGHT = 64;
const DELIVERIES = 64;

const BASELINE = process.env.BENCH_BASELINE ? resolve(process.env.BENCH_BASELINE) : undefined;
const baseline = BASELINE ? await import(pathToFileURL(`${BASELINE}/dist/index.js`).href) : undefined;

const has = {
  parseWebhook: typeof payhook.parseWebhook === 'function',
  verifyWebhook: typeof payhook.verifyWebhook === 'function',
};

function printEnvironment() {
  const cpuList = cpus();
  const pool = process.env.UV_THREADPOOL_SIZE;
  console.log('payhook benchmark');
  console.log(
    `  node ${process.version} on ${process.platform}/${process.arch}; ${cpuList.length} logical CPUs (${cpuList[0]?.model.trim() ?? 'unknown'})`,
  );
  console.log(
    `  UV_THREADPOOL_SIZE=${pool ?? '(unset: libuv default 4)'}; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    `  ${DELIVERIES} distinct signed deliveries (RSA-2048, ${VARIANT_COUNT} body variants); ${ROUNDS} rounds × ${MS} ms per figure; medians shown`,
  );
  console.log('');
}

let checkFloor;

/** Checks every delivery once through every path: anything wrong is an error, not a figure. */
async function checkDeliveries(deliveries) {
  for (const [i, d] of deliveries.entries()) {
    const where = `delivery ${i} (${d.transactionId})`;
    if (!rawVerify(d)) throw new Error(`${where}: raw node:crypto verify failed`);
    checkFloor ??= makeFloorReceiver(await payhook.importPublicKey(PUBLIC_KEY_PEM));
    if (!(await checkFloor(d))) throw new Error(`${where}: the floor receiver rejected it`);
    if (!naiveReceiver(d)) throw new Error(`${where}: the naive receiver rejected it`);
    const canonical = payhook.buildCanonicalString({
      method: d.method,
      path: d.path,
      headers: d.headers,
      query: d.query,
      body: d.body,
    });
    if (canonical !== d.canonical) {
      throw new Error(
        `${where}: payhook's canonical string differs from the reference:\n${JSON.stringify(canonical)}\n${JSON.stringify(d.canonical)}`,
      );
    }
    if (!(await payhook.verifySignature(d.canonical, d.signature, PUBLIC_KEY_PEM)))
      throw new Error(`${where}: verifySignature returned false`);
    const flipped = d.signature.startsWith('A') ? 'B' + d.signature.slice(1) : 'A' + d.signature.slice(1);
    if (await payhook.verifySignature(d.canonical, flipped, PUBLIC_KEY_PEM))
      throw new Error(`${where}: verifySignature accepted an altered signature`);
    if (has.parseWebhook) {
      const webhook = payhook.parseWebhook(d.body);
      if (webhook.transactionId !== d.transactionId)
        throw new Error(`${where}: parseWebhook gave transactionId ${webhook.transactionId}`);
    }
    if (has.verifyWebhook) {
      const result = await payhook.verifyWebhook(verifyWebhookRequest(d), { publicKeys: PUBLIC_KEY_PEM });
      if (!result.ok)
        throw new Error(`${where}: verifyWebhook failed with ${result.error.code}: ${result.error.message}`);
      if (result.webhook.transactionId !== d.transactionId)
        throw new Error(`${where}: verifyWebhook gave transactionId ${result.webhook.transactionId}`);
    }
  }
}

function verifyWebhookRequest(d) {
  return { method: d.method, url: d.url, headers: d.headers, body: d.body };
}

/**
 * The figures. `sync` ones run back to back on this thread; `async` ones are
 * measured sequentially (one awaited at a time) and with 64 in flight. A
 * synchronous function cannot overlap with itself, so for the baselines the
 * "64 in flight" column wraps each call in an async function to show that.
 */
function figures(importedKey) {
  const list = [
    {
      id: 'raw',
      name: 'raw node:crypto verify (sync, cached KeyObject, bytes ready)',
      sync: rawVerify,
      inFlight: true,
    },
    { id: 'rawAsync', name: 'node:crypto verify, callback form (libuv pool)', async: rawVerifyAsync },
    {
      id: 'webCrypto',
      name: 'Web Crypto subtle.verify (imported CryptoKey, bytes ready)',
      async: (d) =>
        globalThis.crypto.subtle.verify('RSASSA-PKCS1-v1_5', importedKey, d.signatureBytes, d.canonicalBytes),
    },
    {
      id: 'floor',
      name: 'floor: least a Web Crypto receiver must run (no validation)',
      async: makeFloorReceiver(importedKey),
    },
    {
      id: 'naive',
      name: 'naive receiver (PEM re-read, body re-sorted, createVerify)',
      sync: naiveReceiver,
      inFlight: true,
    },
    {
      id: 'canonical',
      name: 'payhook buildCanonicalString',
      sync: (d) =>
        payhook.buildCanonicalString({
          method: d.method,
          path: d.path,
          headers: d.headers,
          query: d.query,
          body: d.body,
        }),
    },
    {
      id: 'verifySignature',
      name: 'payhook verifySignature (PEM each call)',
      async: (d) => payhook.verifySignature(d.canonical, d.signature, PUBLIC_KEY_PEM),
    },
  ];
  if (has.parseWebhook)
    list.push({ id: 'parse', name: 'payhook parseWebhook (raw text)', sync: (d) => payhook.parseWebhook(d.body) });
  if (has.verifyWebhook) {
    const options = { publicKeys: PUBLIC_KEY_PEM };
    list.push({
      id: 'verifyWebhook',
      name: 'payhook verifyWebhook (PEM, text body)',
      async: async (d) => (await payhook.verifyWebhook(verifyWebhookRequest(d), options)).ok,
    });
  }
  if (baseline) {
    const options = { publicKeys: PUBLIC_KEY_PEM };
    list.push({
      id: 'verifyWebhookBaseline',
      name: 'baseline build: verifyWebhook (PEM, text body)',
      async: async (d) => (await baseline.verifyWebhook(verifyWebhookRequest(d), options)).ok,
    });
  }
  return list;
}

async function measureFigure(figure, deliveries, ms) {
  const out = {
    seq: Number.NaN,
    par: Number.NaN,
    seqCpu: Number.NaN,
    parCpu: Number.NaN,
    seqMain: Number.NaN,
    parMain: Number.NaN,
  };
  const record = (column, { opsPerSecond, cpuPerOp, mainCpuPerOp }) => {
    out[column] = opsPerSecond;
    out[`${column}Cpu`] = cpuPerOp;
    out[`${column}Main`] = mainCpuPerOp;
  };
  if (figure.sync) {
    record('seq', measureSync(figure.sync, deliveries, ms));
    if (figure.inFlight) {
      await settle();
      const fn = figure.sync;
      record('par', await measureAsync(async (d) => fn(d), deliveries, ms, IN_FLIGHT));
    }
  } else {
    record('seq', await measureAsync(figure.async, deliveries, ms, 1));
    await settle();
    record('par', await measureAsync(figure.async, deliveries, ms, IN_FLIGHT));
  }
  await settle();
  return out;
}

async function microBenchmarks(deliveries) {
  const list = figures(await payhook.importPublicKey(PUBLIC_KEY_PEM));
  // Warm-up: JIT, key caches, the thread pool's threads.
  for (const figure of list) await measureFigure(figure, deliveries, Math.min(200, MS));
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Fresh deliveries each round: their x-api-timestamp stays inside the
    // 5-minute window however long the run takes.
    const roundDeliveries = round === 0 ? deliveries : await makeDeliveries(DELIVERIES);
    if (round > 0) await checkDeliveries(roundDeliveries);
    const results = {};
    // Rotate the order every round, so that no figure always runs first or
    // last while the machine's load changes.
    for (let k = 0; k < list.length; k++) {
      const figure = list[(k + round) % list.length];
      results[figure.id] = await measureFigure(figure, roundDeliveries, MS);
    }
    rounds.push(results);
    const line = [
      `raw ${formatOps(results.raw.seq)}`,
      `verifySignature@${IN_FLIGHT} ${formatOps(results.verifySignature.par)}`,
    ];
    if (results.verifyWebhook) line.push(`verifyWebhook@${IN_FLIGHT} ${formatOps(results.verifyWebhook.par)}`);
    console.log(`  round ${round + 1}/${ROUNDS}: ${line.join(', ')} ops/s; load average ${loadavg()[0].toFixed(2)}`);
  }
  const summary = {};
  for (const figure of list) {
    const seq = rounds.map((r) => r[figure.id].seq);
    const par = rounds.map((r) => r[figure.id].par);
    summary[figure.id] = {
      name: figure.name,
      seq: median(seq),
      par: median(par),
      seqCpu: median(rounds.map((r) => r[figure.id].seqCpu)),
      parCpu: median(rounds.map((r) => r[figure.id].parCpu)),
      parMain: median(rounds.map((r) => r[figure.id].parMain)),
      // Ratios are taken within each round (same load), then the median.
      seqRatio: median(rounds.map((r) => r[figure.id].seq / r.raw.seq)),
      parRatio: median(rounds.map((r) => r[figure.id].par / r.raw.seq)),
      rounds: rounds.map((r) => r[figure.id]),
    };
  }
  // Against the naive receiver: its best column in the same round.
  const versusNaive = (id) => median(rounds.map((r) => r[id].par / Math.max(r.naive.seq, r.naive.par)));
  return { summary, rounds, versusNaive, ids: list.map((f) => f.id) };
}

function printMicro({ summary, ids }) {
  const cpu = (value) => (Number.isFinite(value) ? value.toFixed(1) : '');
  const rows = ids.map((id) => {
    const s = summary[id];
    const par = Number.isFinite(s.par)
      ? [formatOps(s.par), formatRatio(s.parRatio), cpu(s.parCpu), cpu(s.parMain)]
      : ['n/a (sync)', '', '', ''];
    return [s.name, formatOps(s.seq), formatRatio(s.seqRatio), cpu(s.seqCpu), ...par];
  });
  if (!has.parseWebhook) rows.push(['payhook parseWebhook', 'not built yet', '', '', '', '', '', '']);
  if (!has.verifyWebhook) rows.push(['payhook verifyWebhook', 'not built yet', '', '', '', '', '', '']);
  console.log('');
  console.log(
    table(
      [
        'figure (per delivery)',
        'sequential ops/s',
        '× raw',
        'CPU µs/op',
        `${IN_FLIGHT} in flight ops/s`,
        '× raw',
        'CPU µs/op',
        'of it main thread',
      ],
      rows,
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  );
  console.log('  × raw: divided by the raw sequential figure of the same round (median over rounds).');
  console.log(
    '  CPU µs/op: CPU time of the whole process (main thread, libuv pool, GC) per operation; on 2 idle cores',
  );
  console.log(`  a figure with ${IN_FLIGHT} in flight can reach at most 2,000,000 / (CPU µs/op) ops/s, and at most`);
  console.log(
    '  1,000,000 / (main thread µs/op): JavaScript runs on one thread, only the RSA work on the pool. "n/a (sync)": a synchronous helper.',
  );
}

function printRatios(micro) {
  const lines = [];
  const s = micro.summary;
  lines.push(`verifyWebhook@${IN_FLIGHT}: ${formatRatio(s.verifyWebhook?.parRatio ?? Number.NaN)} raw`);
  if (s.verifyWebhookBaseline) {
    lines.push(`verifyWebhook@${IN_FLIGHT}, baseline build: ${formatRatio(s.verifyWebhookBaseline.parRatio)} raw`);
  }
  console.log('');
  for (const line of lines) console.log(line);
}

async function main() {
  printEnvironment();
  const deliveries = await makeDeliveries(DELIVERIES);
  await checkDeliveries(deliveries);
  // A KeyObject is already cached in deliveries.mjs; touch it so it is not lazily built in round one.
  if (PUBLIC_KEY_OBJECT.asymmetricKeyDetails?.modulusLength !== 2048) throw new Error('expected a 2048-bit test key');
  const micro = await microBenchmarks(deliveries);
  printMicro(micro);
  printRatios(micro);
  console.log(
    `\nload average at the end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  if (process.env.BENCH_JSON) {
    const { summary, rounds } = micro;
    writeFileSync(
      process.env.BENCH_JSON,
      JSON.stringify(
        {
          node: process.version,
          cpus: cpus().length,
          uvThreadpoolSize: process.env.UV_THREADPOOL_SIZE ?? null,
          summary,
          rounds,
        },
        null,
        2,
      ),
    );
  }
}

main().catch((error) => {
  console.error('\nbenchmark error:', error?.stack ?? error);
  process.exitCode = 1;
});
