#!/usr/bin/env node
// `npm test`: the whole suite, with real servers, as CI runs it.
//
//   1. set-up   scripts/setup-test-env.sh installs what is missing (redis-server, chromium,
//               PostgreSQL, the runtime matrix) and says what it installs; output shown as it comes
//   2. build    scripts/build-if-stale.mjs: skipped when dist/ is newer than its sources
//   3. stages   independent of each other, run a few at a time (the chaos run last, alone); each
//               one's output is kept and printed only when it fails, with its time and a one-line
//               summary otherwise
//
//   node scripts/test-all.mjs [stage …] [--jobs N]
//     stage …   run only these stages (after set-up and build), e.g. `npm test -- lint typecheck`
//     --jobs N  stages at a time (default: the number of cores, at least 2)
//
// Ends with `N passed, N failed` (stages) and exits 1 when any stage failed.
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const STAGE_TIMEOUT_MS = 20 * 60_000;

// Longest first, so the slowest stage starts at once and the short ones fill
// the other slots. `summary` picks the stage's own tally from its output.
// `alone`: runs after the others, by itself (the chaos run measures the
// machine's answers under load and wants no other stage competing for the CPU).
const STAGES = [
  { name: 'vitest', script: 'test:unit', summary: /^\s*Tests\s+(.+)$/m },
  { name: 'check:package', script: 'check:package', summary: /^check-package: .+$/m },
  { name: 'lint', script: 'lint' },
  { name: 'typecheck', script: 'typecheck' },
  { name: 'runtimes', script: 'test:runtimes', summary: /^runtimes: .+$/m },
  { name: 'docs', script: 'test:docs', summary: /^doc snippets: ([^,]+, \d+ ran)/m },
  { name: 'chaos', script: 'test:chaos', summary: /^payhook chaos run.*$/m, alone: true },
];

const args = process.argv.slice(2);
let jobs = Math.max(2, availableParallelism());
const only = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--jobs') jobs = Number(args[++i]);
  else if (args[i].startsWith('--jobs=')) jobs = Number(args[i].slice('--jobs='.length));
  else only.push(args[i]);
}
if (!Number.isInteger(jobs) || jobs < 1) fail(`--jobs wants a whole number ≥ 1, got ${args.join(' ')}`);
const unknown = only.filter((name) => !STAGES.some((stage) => stage.name === name));
if (unknown.length > 0) fail(`no stage named ${unknown.join(', ')}; stages: ${STAGES.map((s) => s.name).join(', ')}`);
const stages = only.length > 0 ? STAGES.filter((stage) => only.includes(stage.name)) : STAGES;

const children = new Set();
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) killGroup(child);
    process.exit(130);
  });
}

const started = Date.now();
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
const strip = (text) => text.replace(/\x1b\[[0-9;]*m/g, ''); // eslint-disable-line no-control-regex

function fail(message) {
  console.error(`test: ${message}`);
  process.exit(2);
}

function killGroup(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * Runs a command in its own process group. `show` streams its output; otherwise
 * the output is collected and returned.
 * @returns {Promise<{ code: number | null, output: string, timedOut: boolean }>}
 */
function run(command, commandArgs, { show = false } = {}) {
  return new Promise((resolvePromise) => {
    const child = spawn(command, commandArgs, {
      cwd: root,
      detached: true,
      stdio: show ? 'inherit' : ['ignore', 'pipe', 'pipe'],
      env: show ? process.env : { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    children.add(child);
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, STAGE_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolvePromise({ code, output, timedOut });
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      children.delete(child);
      resolvePromise({ code: null, output: `${output}\n${error.message}`, timedOut });
    });
  });
}

/** The stage's own tally, or its last line. */
function summaryOf(stage, output) {
  const text = strip(output);
  const match = stage.summary?.exec(text);
  if (match) return (match[1] ?? match[0]).trim();
  const last = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('npm warn'))
    .at(-1);
  return last ? last.slice(0, 110) : '';
}

// ---------------------------------------------------------------- 1, 2: set-up and build

for (const [name, command, commandArgs] of [
  ['set-up', 'bash', ['scripts/setup-test-env.sh']],
  ['build', process.execPath, ['scripts/build-if-stale.mjs', '--verbose']],
]) {
  console.log(`── ${name}`);
  const t0 = Date.now();
  const { code } = await run(command, commandArgs, { show: true });
  if (code !== 0) {
    console.log(`FAIL ${name} (exit ${code}, ${seconds(t0)}); no stage was run`);
    console.log(`0 passed, 1 failed`);
    process.exit(1);
  }
  console.log(`ok   ${name} (${seconds(t0)})`);
}

// ---------------------------------------------------------------- 3: the stages

const results = [];
async function lane(queue) {
  for (let stage = queue.shift(); stage; stage = queue.shift()) {
    const t0 = Date.now();
    const { code, output, timedOut } = await run(npm, ['run', '--silent', stage.script]);
    const ok = code === 0;
    const time = seconds(t0);
    const why = timedOut ? `timed out after ${STAGE_TIMEOUT_MS / 60_000} min` : `exit ${code}`;
    console.log(
      ok
        ? `ok   ${stage.name.padEnd(14)} ${time.padStart(8)}  ${summaryOf(stage, output)}`
        : `FAIL ${stage.name.padEnd(14)} ${time.padStart(8)}  ${why}; its output follows at the end`,
    );
    results.push({ stage, ok, output, time, why });
  }
}
const together = stages.filter((stage) => !stage.alone);
if (together.length > 0) {
  console.log(`── ${together.length} stages, ${jobs} at a time: ${together.map((stage) => stage.name).join(', ')}`);
  await Promise.all(Array.from({ length: Math.min(jobs, together.length) }, () => lane(together)));
}
for (const stage of stages.filter((candidate) => candidate.alone)) {
  console.log(`── ${stage.name}, alone`);
  await lane([stage]);
}

const failed = results.filter((result) => !result.ok);
for (const { stage, output, why, time } of failed) {
  const command = `npm run ${stage.script}`;
  console.log(`\n━━━━ FAIL ${stage.name} (${command}: ${why}, ${time}) ━━━━`);
  console.log(output.trimEnd());
  console.log(`━━━━ end of ${stage.name}; run it alone with: ${command}`);
}
console.log(
  `\n${failed.length === 0 ? 'all stages green' : `failing: ${failed.map((r) => r.stage.name).join(', ')}`} in ${seconds(started)}`,
);
console.log(`${results.length - failed.length} passed, ${failed.length} failed`);
process.exit(failed.length === 0 ? 0 : 1);
