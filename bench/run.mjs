// payhook's benchmark: `npm run bench` (builds, then runs this script). See docs/performance.md.
//
// Over HTTP, in one run and alternating, it measures payhook's handlers against bare servers that do the same work
// by hand, and three well-known webhook libraries against their own bare servers. Each server runs alone in its own
// process; autocannon runs in this one, with 64 connections, every request a distinct signed delivery. For each
// server it reports requests per second, p50 and p99 latency, and the server process's CPU time per request. In each
// round the servers of a group are measured in alternating half-second slices (bench/http.mjs runGroup); each ratio
// is taken between two servers' sums over one round, and the median over rounds is printed.
// Then it measures what an unsigned request with a maximal body costs the event loop.
//
// A script, not a test: a missed target is reported, never failed. It exits non-zero only when something errs
// (a server refuses a valid delivery or accepts a forged one, a canonical string differs from the reference).
//
// Environment knobs (all optional):
//   BENCH_QUICK=1         a quick run (1-2 minutes on an idle machine): 2 rounds of 1.5 s
//   BENCH_ROUNDS=5        rounds (each round runs every server once; medians are reported)
//   BENCH_HTTP_S=3        measured seconds per server per round
//   BENCH_SLICES=6        slices those seconds are split into, alternating with the group's other servers
//                         (default: one per half second)
//   BENCH_WARMUP=32768    warm-up requests before each measured run (other deliveries); the first 2,048 of them
//                         are timed too, for the "just started" figures
//   BENCH_POOL            distinct signed deliveries per measured run (default 32,000 per measured second)
//   BENCH_PEERS=0         skip the peer libraries
//   BENCH_ONLY=node,web   measure only these groups (node, web, octokit, stripe, standardwebhooks)
//   BENCH_WEB_ADAPTOR     how the two Web servers are served on node:http: `hono` (default: @hono/node-server's
//                         getRequestListener) or `node` (a minimal adaptor by hand: Readable.toWeb into a Request)
//   BENCH_BASELINE=dir    another build of payhook (a folder with package.json and dist/, e.g. the previous
//                         release): its handlers are measured beside this build's in the same run, and this build
//                         is also compared with it directly, round by round
//   BENCH_SERVER_ARGS     Node flags for the server processes (e.g. '--cpu-prof --cpu-prof-dir=/tmp/prof')
//   BENCH_JSON=path       also write every run as JSON to `path`
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { canonicalString } from './bare.mjs';
import { makeDeliveries, PUBLIC_KEY_PEM, signatureOf } from './deliveries.mjs';
import { runGroup } from './http.mjs';
import { formatOps, formatRatio, env, median, settle, table } from './lib.mjs';
import { PEERS, signPeerDeliveries, tamper } from './peers.mjs';
import { unsignedCost } from './unsigned.mjs';

const QUICK = env('BENCH_QUICK', 0) !== 0;
// Short runs and several rounds: other processes' load changes from second to second, and the more often the
// servers alternate, the less one of them gains from a quiet moment.
const ROUNDS = Math.max(1, Math.round(env('BENCH_ROUNDS', QUICK ? 2 : 5)));
const HTTP_S = env('BENCH_HTTP_S', QUICK ? 1.5 : 3);
// Each server's measured seconds are split into slices of about half a second, alternating with the other servers of
// its group. Measured on this kind of machine with nothing else running, one process's RSA verify took from 26 to
// 56 µs in 250 ms windows, slow phases lasting from a quarter of a second to a few seconds: two servers measured
// for 3 s one after the other often met different machines (single rounds' ratios from 0.48 to 0.99 for one build).
const SLICES = Math.max(1, Math.round(env('BENCH_SLICES', HTTP_S / 0.5)));
// Measured in 1-second windows after 2,048 warm-up requests, every server was still speeding up for seconds while
// the JIT compiled its code: the bare servers for about 15,000 more requests, payhook/web up to about 30,000 (on
// Node 24 its first two seconds ran at about half its later rate). The warm-up goes past that, so the table is
// each server's steady state; the first COLD requests of the warm-up are timed on their own, for the figure of a
// server that has just started.
const WARMUP = Math.max(0, Math.round(env('BENCH_WARMUP', QUICK ? 8192 : 32_768)));
const WARMUP_POOL = Math.max(1, WARMUP);
const COLD = Math.min(2048, WARMUP);
// Enough for the fastest server (a peer's bare one answered up to 29,000 req/s here): a run that uses up its pool
// stops early and is measured over a shorter window than the others of its round.
const POOL = Math.max(1, Math.round(env('BENCH_POOL', HTTP_S * 32_000)));
const CONNECTIONS = 64;
const PEERS_ON = env('BENCH_PEERS', 1) !== 0;
const ONLY = process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(',').map((id) => id.trim()) : undefined;
const WEB_ADAPTOR = process.env.BENCH_WEB_ADAPTOR || 'hono';
if (WEB_ADAPTOR !== 'hono' && WEB_ADAPTOR !== 'node') throw new Error('BENCH_WEB_ADAPTOR must be hono or node');
const ADAPTOR_LABEL = WEB_ADAPTOR === 'hono' ? '@hono/node-server' : 'Readable.toWeb';
const BASELINE = process.env.BENCH_BASELINE ? resolve(process.env.BENCH_BASELINE) : undefined;
// Deliveries are signed with a timestamp this far ahead of the signing time: CONTRACT §3's window is ±5 minutes,
// so one signed pool stays fresh for 9.5 minutes and every server is measured on the same deliveries. They are
// signed again if a run would end outside the window.
const AHEAD_MS = 270_000;
const WINDOW_MS = 300_000;

const loads = [];
const sampleLoad = () => {
  const one = loadavg()[0];
  loads.push(one);
  return one;
};
const formatLoad = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** Which servers are measured: one group per bare server, each with the servers whose ratio is taken to it. */
async function groups() {
  const list = [
    {
      id: 'node',
      bare: { key: 'bare-node', mode: 'bare-node', label: 'bare node:http + node:crypto (KeyObject)' },
      members: [{ key: 'payhook-node', mode: 'payhook-node', label: 'payhook/node + memory store' }],
      scheme: 'payhook',
    },
    {
      id: 'web',
      bare: { key: 'bare-web', mode: 'bare-web', label: `bare Web Crypto (CryptoKey), via ${ADAPTOR_LABEL}` },
      members: [
        { key: 'payhook-web', mode: 'payhook-web', label: `payhook/web + memory store, via ${ADAPTOR_LABEL}` },
        { key: 'bare-web-stream', mode: 'bare-web-stream', label: 'bare Web Crypto, body read from request.body' },
      ],
      scheme: 'payhook',
    },
  ];
  if (BASELINE) {
    list[0].members.push({
      key: 'baseline-node',
      mode: 'payhook-node',
      label: 'baseline build: payhook/node',
      dir: BASELINE,
    });
    list[1].members.push({
      key: 'baseline-web',
      mode: 'payhook-web',
      label: 'baseline build: payhook/web',
      dir: BASELINE,
    });
  }
  const skipped = [];
  if (PEERS_ON) {
    for (const peer of PEERS) {
      try {
        import.meta.resolve(peer.pkg);
      } catch {
        skipped.push(peer.pkg);
        continue;
      }
      list.push({
        id: peer.id,
        bare: { key: `${peer.id}-bare`, mode: `peer-bare:${peer.id}`, label: `bare node:crypto, ${peer.id}'s checks` },
        members: [{ key: peer.id, mode: `peer:${peer.id}`, label: peer.label }],
        scheme: peer.id,
      });
    }
  }
  return { list: ONLY ? list.filter((group) => ONLY.includes(group.id)) : list, skipped };
}

/** Signs every pool: distinct deliveries for the measured runs, others for warm-up, one valid and one forged. */
async function makePools(schemes) {
  const started = performance.now();
  const at = Date.now() + AHEAD_MS;
  const all = await makeDeliveries(POOL + WARMUP_POOL + 1, at);
  // The bare servers build the canonical string themselves: it must be the reference's, byte for byte.
  for (const d of all.slice(POOL)) {
    const apiHeaders = Object.entries(d.headers).filter(([name]) => name.startsWith('x-api-'));
    const mine = canonicalString(d.method, d.url, d.headers.host, apiHeaders, JSON.parse(d.body));
    if (mine !== d.canonical) throw new Error(`bare canonical string differs:\n${mine}\n${d.canonical}`);
  }
  const requests = all.map((d) => ({ url: d.url, headers: d.headers, body: d.body }));
  const split = (list) => ({
    pool: list.slice(0, POOL),
    warmup: list.slice(POOL, POOL + WARMUP_POOL),
    valid: list[POOL + WARMUP_POOL],
    forged: tamper(list[POOL + WARMUP_POOL]),
  });
  const pools = { payhook: split(requests) };
  const bodies = requests.map((r) => r.body);
  for (const scheme of schemes) if (scheme !== 'payhook') pools[scheme] = split(signPeerDeliveries(scheme, bodies, at));
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`  signed ${POOL + WARMUP_POOL + 1} deliveries per scheme in ${seconds} s`);
  return { pools, validUntil: at + WINDOW_MS };
}

async function httpBenchmarks() {
  const { list, skipped } = await groups();
  if (skipped.length > 0) {
    console.log(`  not installed, so not measured: ${skipped.join(', ')} (npm install adds them: dev dependencies)`);
  }
  const runSeconds = HTTP_S + 30;
  let signed = await makePools(list.map((g) => g.scheme));
  const storeOptions = { maxEntries: Math.max(100_000, (POOL + WARMUP_POOL) * 2) };
  const runs = {};
  for (const group of list) for (const server of [group.bare, ...group.members]) runs[server.key] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the groups, and swap the order inside each group, every round: no server always runs first.
    for (let k = 0; k < list.length; k++) {
      const group = list[(k + round) % list.length];
      const servers = [group.bare, ...group.members];
      if (round % 2 === 1) servers.reverse();
      if (Date.now() + runSeconds * servers.length * 1000 > signed.validUntil) {
        console.log('  the deliveries would leave the timestamp window: signing them again');
        signed = await makePools(list.map((g) => g.scheme));
      }
      const modes = servers.map((server) => ({
        mode: server.mode,
        setup: { pem: PUBLIC_KEY_PEM, storeOptions, packageDir: server.dir, webAdaptor: WEB_ADAPTOR },
      }));
      const results = await runGroup(
        modes,
        {
          ...signed.pools[group.scheme],
          connections: CONNECTIONS,
          warmupRequests: WARMUP,
          coldRequests: COLD,
        },
        HTTP_S,
        SLICES,
      );
      const load = sampleLoad();
      for (const [i, server] of servers.entries()) {
        const run = results[i];
        if (run.errors > 0 || run.timeouts > 0) {
          throw new Error(`${server.key}: ${run.errors} errors, ${run.timeouts} timeouts`);
        }
        if (run.non2xx > 0) throw new Error(`${server.key} answered non-2xx: ${JSON.stringify(run.statusCodes)}`);
        runs[server.key].push(run);
        // A few requests in flight when a slice stops are handled but never answered: hence the cap.
        const fresh = run.answered > 0 ? Math.min(100, Math.round((100 * run.handled) / run.answered)) : 0;
        console.log(
          `  round ${round + 1} ${server.key.padEnd(22)} ${formatOps(run.requestsPerSecond).padStart(7)} req/s` +
            `  p99 ${String(run.p99Ms).padStart(3)} ms  CPU ${run.cpuPerRequest.toFixed(0).padStart(3)} µs/req` +
            ` (${run.systemPerRequest.toFixed(0)} kernel)  ${fresh}% first deliveries` +
            `${run.exhausted ? ' (pool ran out: stopped early)' : ''}  load ${load.toFixed(2)}`,
        );
      }
      await settle(300);
    }
  }
  return { list, runs };
}

function summarise({ list, runs }) {
  const rows = [];
  const ratios = [];
  for (const group of list) {
    const bare = runs[group.bare.key];
    const row = (server, base) => {
      const own = runs[server.key];
      const perRound = (pick) => own.map((run, i) => pick(run, bare[i]));
      const summary = {
        key: server.key,
        label: server.label,
        requestsPerSecond: median(own.map((r) => r.requestsPerSecond)),
        p50Ms: median(own.map((r) => r.p50Ms)),
        p99Ms: median(own.map((r) => r.p99Ms)),
        cpuPerRequest: median(own.map((r) => r.cpuPerRequest)),
        systemPerRequest: median(own.map((r) => r.systemPerRequest)),
        rpsRatios: perRound((r, b) => r.requestsPerSecond / b.requestsPerSecond),
        cpuRatios: perRound((r, b) => r.cpuPerRequest / b.cpuPerRequest),
        cpuExtra: perRound((r, b) => r.cpuPerRequest - b.cpuPerRequest),
        // Undefined with no warm-up: median() skips what is not a finite number.
        coldRequestsPerSecond: median(own.map((r) => r.coldRequestsPerSecond)),
        coldRatios: perRound((r, b) => r.coldRequestsPerSecond / b.coldRequestsPerSecond),
      };
      summary.rpsRatio = base ? 1 : median(summary.rpsRatios);
      summary.cpuRatio = base ? 1 : median(summary.cpuRatios);
      summary.extra = base ? 0 : median(summary.cpuExtra);
      summary.coldRatio = base ? 1 : median(summary.coldRatios);
      return summary;
    };
    rows.push({ group: group.id, ...row(group.bare, true) });
    for (const member of group.members) {
      const summary = { group: group.id, bareKey: group.bare.key, ...row(member, false) };
      rows.push(summary);
      ratios.push(summary);
    }
  }
  return { rows, ratios };
}

function printTable({ rows }) {
  console.log('');
  console.log(
    table(
      [
        'server (64 connections, a new signed delivery per request)',
        'req/s',
        '× bare',
        'p50 ms',
        'p99 ms',
        'CPU µs/req',
        '× bare',
        '+µs',
      ],
      rows.map((r) => {
        const bare = r.bareKey === undefined;
        return [
          bare ? r.label : `  ${r.label}`,
          formatOps(r.requestsPerSecond),
          bare ? '' : formatRatio(r.rpsRatio),
          r.p50Ms,
          r.p99Ms,
          r.cpuPerRequest.toFixed(0),
          bare ? '' : formatRatio(r.cpuRatio),
          bare ? '' : `${r.extra >= 0 ? '+' : ''}${r.extra.toFixed(0)}`,
        ];
      }),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  );
  console.log(
    `  ${ROUNDS} rounds × ${HTTP_S} s per server; medians. "× bare" and "+µs" are taken within each round against` +
      " the group's bare server (the first row above it), then the median. CPU µs/req: the server process's" +
      ' CPU time (all threads) over the measured window divided by the requests it answered.',
  );
  if (rows.some((r) => r.key === 'bare-web-stream') && WEB_ADAPTOR === 'hono') {
    console.log(
      '  @hono/node-server answers request.arrayBuffer() and text() from the Node stream directly, but builds a web' +
        ' stream for request.body: the "body read from request.body" row shows what that alone costs a receiver.',
    );
  }
}

/** The first COLD requests each server answered after it started, before the rest of its warm-up. */
function printCold({ rows }) {
  if (COLD === 0) return;
  console.log('');
  console.log(
    table(
      [`just started: the first ${COLD.toLocaleString('en-US')} requests`, 'req/s', '× bare'],
      rows.map((r) => {
        const bare = r.bareKey === undefined;
        return [
          bare ? r.label : `  ${r.label}`,
          formatOps(r.coldRequestsPerSecond),
          bare ? '' : formatRatio(r.coldRatio),
        ];
      }),
      ['l', 'r', 'r'],
    ),
  );
  console.log(
    '  each server in a new process, before the JIT has compiled its code: what a receiver that has just started' +
      ' answers, not its steady state (the table above).',
  );
}

const TARGETS = {
  'payhook-node': { rps: 0.8, cpu: 1.3 },
  'payhook-web': { rps: 0.9 },
};

function printRatios({ ratios }) {
  console.log('');
  const rounds = (list, digits = 2) => list.map((v) => v.toFixed(digits)).join(' ');
  for (const r of ratios) {
    const target = TARGETS[r.key];
    const rpsTarget = target?.rps
      ? ` (target ≥ ${target.rps.toFixed(2)}×: ${r.rpsRatio >= target.rps ? 'met' : 'missed'})`
      : '';
    const cpuTarget = target?.cpu
      ? ` (target ≤ ${target.cpu.toFixed(2)}×: ${r.cpuRatio <= target.cpu ? 'met' : 'missed'})`
      : '';
    console.log(
      `${r.key} vs ${r.bareKey}: req/s ${formatRatio(r.rpsRatio)}${rpsTarget},` +
        ` CPU ${formatRatio(r.cpuRatio)}${cpuTarget}, ${r.extra >= 0 ? '+' : ''}${r.extra.toFixed(1)} µs/req;` +
        ` per round: req/s ${rounds(r.rpsRatios)}, CPU ${rounds(r.cpuRatios)}`,
    );
  }
}

/**
 * With BENCH_BASELINE: this build against the baseline build directly, round by round. Both run in the same round
 * within seconds of each other, so the machine's drift between rounds cancels out of these ratios more than out of
 * the ratios to the bare servers.
 */
function printBaseline({ runs }) {
  if (!BASELINE) return;
  console.log('');
  for (const [mine, theirs] of [
    ['payhook-node', 'baseline-node'],
    ['payhook-web', 'baseline-web'],
  ]) {
    const a = runs[mine];
    const b = runs[theirs];
    if (!a?.length || !b?.length) continue;
    const rps = a.map((run, i) => run.requestsPerSecond / b[i].requestsPerSecond);
    const cpu = a.map((run, i) => run.cpuPerRequest - b[i].cpuPerRequest);
    const ahead = rps.filter((ratio) => ratio > 1).length;
    const signed = (v) => `${v >= 0 ? '+' : ''}${v.toFixed(1)}`;
    console.log(
      `${mine} vs ${theirs} (this build ÷ baseline, same rounds): req/s ${formatRatio(median(rps))},` +
        ` CPU ${signed(median(cpu))} µs/req; ahead in ${ahead} of ${rps.length} rounds;` +
        ` per round: req/s ${rps.map((v) => v.toFixed(2)).join(' ')}, CPU µs ${cpu.map(signed).join(' ')}`,
    );
  }
}

async function printUnsigned() {
  const builds = [['this build', await import('payhook'), await import('payhook/web')]];
  if (BASELINE) {
    builds.push([
      'baseline build',
      await import(pathToFileURL(`${BASELINE}/dist/index.js`).href),
      await import(pathToFileURL(`${BASELINE}/dist/web.js`).href),
    ]);
  }
  const rows = [];
  let current;
  // A genuine signature of another delivery: what any merchant of the service can send to any other.
  const genuine = signatureOf('post\n/another/merchant\nhost:another.example\n{"id":"1"}');
  for (const [name, core, web] of builds) {
    const cost = await unsignedCost(core, web, PUBLIC_KEY_PEM, genuine);
    current ??= cost;
    for (const [signature, under] of [
      ['junk signature', cost.junk],
      ["another delivery's signature", cost.genuine],
      ["another delivery's signature, names under one key", cost.underOneKey],
    ]) {
      for (const [path, m] of [
        ['verifyWebhook', under.verify],
        ['payhook/web handler', under.handler],
      ]) {
        rows.push([`${name}, ${signature}: ${path}`, under.bytes, m.busyMs.toFixed(1), m.wallMs.toFixed(1)]);
      }
    }
  }
  console.log('');
  console.log(
    table(['unsigned request, maximal body of tiny keys', 'bytes', 'event loop ms', 'wall ms'], rows, [
      'l',
      'r',
      'r',
      'r',
    ]),
  );
  const worstOf = (under) => Math.max(under.verify.busyMs, under.handler.busyMs);
  const junk = worstOf(current.junk);
  const worst = Math.max(junk, worstOf(current.genuine), worstOf(current.underOneKey));
  const verdict = (ms, target) => `${ms.toFixed(1)} ms ${ms <= target ? 'met' : 'missed'}`;
  console.log(
    '  one request at a time, default options (a silent logger), median of 10; event loop ms: the time the' +
      ` JavaScript thread was busy with it. Targets: junk signature ≤ 20 ms: ${verdict(junk, 20)};` +
      ` any signature ≤ 5 ms: ${verdict(worst, 5)}`,
  );
  return current;
}

async function main() {
  const started = performance.now();
  const cpuList = cpus();
  console.log('payhook benchmark');
  console.log(
    `  node ${process.version} on ${process.platform}/${process.arch}; ${cpuList.length} logical CPUs` +
      ` (${cpuList[0]?.model.trim() ?? 'unknown'}); UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? 'unset'}`,
  );
  console.log(`  load average at the start: ${formatLoad()}`);
  console.log(
    `  ${QUICK ? 'quick: ' : ''}${ROUNDS} rounds × ${HTTP_S} s per server (after ${WARMUP} warm-up requests), ${CONNECTIONS}` +
      ` connections, RSA-2048; pool of ${POOL} distinct deliveries per run${BASELINE ? `; baseline ${BASELINE}` : ''}`,
  );
  console.log('  (each payhook server logs one refused delivery: the forged one every server must refuse first)');
  const http = await httpBenchmarks();
  const summary = summarise(http);
  printTable(summary);
  printRatios(summary);
  printCold(summary);
  printBaseline(http);
  const unsigned = await printUnsigned();
  const low = Math.min(...loads);
  const high = Math.max(...loads);
  console.log(
    `\nload average (1 min) during the runs: ${low.toFixed(2)}–${high.toFixed(2)}; at the end: ${formatLoad()}` +
      ` (on ${cpuList.length} CPUs; the benchmark itself keeps about 2 busy); took` +
      ` ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  if (process.env.BENCH_JSON) {
    writeFileSync(
      process.env.BENCH_JSON,
      JSON.stringify(
        { node: process.version, cpus: cpuList.length, loads, summary, runs: http.runs, unsigned },
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
