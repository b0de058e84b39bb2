#!/usr/bin/env node
// The runtime matrix: the conformance suite (test/conformance/suite.js) and a
// smoke test of the Web handler, run against the package as it would be
// published, in every runtime payhook supports:
//   Node 20 (this machine's), 22 and 24 — ESM and CJS; Deno; Bun (and the
//   Web handler behind Deno.serve and Bun.serve, printing nothing but its
//   tally); workerd through Miniflare (the suite inside a Worker, and the Web
//   handler answering real fetches); headless Chromium (an ES module page).
// The package is `npm pack`ed and unpacked into test/runtimes/node_modules/
// payhook, so every launcher imports it by its name through its exports map,
// with only the files the tarball holds. A runtime that cannot be found or
// started counts as failed: nothing is skipped.
//
// Needs `npm run build` first and the pinned runtimes of
// test/runtimes/package-lock.json (installed here when missing).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { installPacked } from './lib/pack.mjs';
import { runtimeBinary } from './lib/runtime-binaries.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const runtimesDir = join(root, 'test', 'runtimes');
const modulesDir = join(runtimesDir, 'node_modules');
const installed = join(modulesDir, 'payhook');
const RUNTIME_TIMEOUT_MS = 180_000;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

function die(message) {
  console.error(`test-runtimes: ${message}`);
  process.exit(1);
}

// ---------------------------------------------------------------- set-up

/** Installs test/runtimes unless node_modules already holds its lockfile's versions. */
function ensureRuntimesInstalled() {
  const wanted = JSON.parse(readFileSync(join(runtimesDir, 'package-lock.json'), 'utf8')).packages;
  const hidden = join(modulesDir, '.package-lock.json');
  const have = existsSync(hidden) ? JSON.parse(readFileSync(hidden, 'utf8')).packages : {};
  const stale = Object.entries(wanted).some(
    ([path, entry]) => path !== '' && !entry.optional && have[path]?.version !== entry.version,
  );
  if (!stale) return;
  console.log('test-runtimes: installing the pinned runtimes (npm ci --prefix test/runtimes)');
  const result = spawnSync('npm', ['ci', '--prefix', runtimesDir, '--no-audit', '--no-fund', '--loglevel=error'], {
    stdio: 'inherit',
  });
  if (result.status !== 0) die('npm ci --prefix test/runtimes failed');
}

// ---------------------------------------------------------------- runners

const SUMMARY = /^(.*): (\d+) passed, (\d+) failed$/m;

function tally(output) {
  const lines = output.trimEnd().split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const match = SUMMARY.exec(lines[i]);
    if (match) return { passed: Number(match[2]), failed: Number(match[3]) };
  }
  return undefined;
}

function runProcess(command, args, options = {}) {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { cwd: runtimesDir, env: { ...process.env, NO_COLOR: '1', ...options.env } });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      output += `\n(killed after ${RUNTIME_TIMEOUT_MS} ms)`;
      child.kill('SIGKILL');
    }, RUNTIME_TIMEOUT_MS);
    child.on('error', (error) => (output += `\n${error.message}`));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, output });
    });
  });
}

async function processRuntime(command, args, env) {
  const { code, output } = await runProcess(command, args, { env });
  const counts = tally(output);
  if (!counts) return { passed: 0, failed: 1, output: `${output}\n(exit ${code}, no summary line)` };
  if (code !== 0 && counts.failed === 0) return { ...counts, failed: 1, output: `${output}\n(exit ${code})` };
  return { ...counts, output };
}

/**
 * A launcher that must print its tally and nothing else: a line the runtime
 * adds (a deprecation warning the handler set off) fails the run, as every
 * merchant's server would print it.
 */
async function quietRuntime(command, args, env) {
  const result = await processRuntime(command, args, env);
  if (result.failed > 0) return result;
  const extra = result.output.split('\n').filter((line) => line.trim() !== '' && !SUMMARY.test(line));
  if (extra.length === 0) return result;
  return { ...result, failed: 1, output: `${result.output}\nthe runtime printed more than the tally` };
}

async function withMiniflare(use, compatibilityDate = '2025-09-01') {
  const { Miniflare } = await import('miniflare');
  const { bundleForWorkerd } = await import('./lib/bundle-worker.mjs');
  const script = await bundleForWorkerd(join(runtimesDir, 'worker.mjs'));
  // What the Worker logs (the handler's default log lines among it) is kept
  // with the result and printed only when the run fails.
  const log = [];
  const collect = (stream) => stream.on('data', (chunk) => log.push(String(chunk).trimEnd()));
  // No nodejs_compat flag: the core and payhook/web must need no Node API.
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate,
    handleRuntimeStdio: (stdout, stderr) => (collect(stdout), collect(stderr)),
  });
  try {
    await mf.ready;
    const result = await use(mf);
    const logged = log.filter((line) => line !== '').join('\n');
    return logged === '' ? result : { ...result, output: `${result.output}\nworkerd printed:\n${logged}` };
  } finally {
    await mf.dispose();
  }
}

async function workerdSuite(compatibilityDate) {
  return withMiniflare(async (mf) => {
    const response = await mf.dispatchFetch('http://localhost/conformance');
    const body = await response.json();
    return { passed: body.passed, failed: body.failed, output: body.lines.join('\n') };
  }, compatibilityDate);
}

/** The Web handler inside workerd, answering real `fetch`es from outside. */
async function workerdFetch() {
  const { signDelivery, sampleBody, tamper } = await import(join(runtimesDir, 'shared.mjs'));
  const api = await import(join(installed, 'dist', 'index.js'));
  return withMiniflare(async (mf) => {
    const delivery = await signDelivery(api, sampleBody());
    const send = async (d) => {
      const response = await mf.dispatchFetch(d.url, { method: d.method, headers: d.headers, body: d.body });
      return { status: response.status, text: await response.text() };
    };
    const checks = [
      ['a signed delivery is answered 200', async () => send(delivery), 200],
      ['the same delivery again is answered 200', async () => send(delivery), 200],
      ['a tampered delivery is answered 401', async () => send(tamper(delivery)), 401],
    ];
    let passed = 0;
    const lines = [];
    for (const [name, act, expected] of checks) {
      const { status, text } = await act();
      if (status === expected) passed++;
      else lines.push(`FAIL ${name}: got ${status} ${text.slice(0, 300)}`);
    }
    const handled = await (await mf.dispatchFetch('http://localhost/handled')).json();
    if (handled.count === 1) passed++;
    else lines.push(`FAIL onPayment ran ${handled.count} times, expected once`);
    return { passed, failed: checks.length + 1 - passed, output: lines.join('\n') };
  });
}

const MIME = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.cjs': 'text/javascript',
  '.json': 'application/json',
};

/** An import map for every entry of the packed package.json's exports map. */
function importMapFor(urlPrefix) {
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  const pick = (target) => {
    if (typeof target === 'string') return target;
    for (const condition of ['browser', 'import', 'default'])
      if (target && condition in target) return pick(target[condition]);
    return undefined;
  };
  const imports = {};
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    const file = pick(target);
    if (!file || !file.endsWith('.js')) continue;
    imports[`payhook${subpath.slice(1)}`] = `${urlPrefix}${file.replace(/^\.\//, '')}`;
  }
  return { imports };
}

/** Serves test/ (read-only) and the launcher page on a loopback port. */
function serveTestDir() {
  const testDir = join(root, 'test');
  const page = `<!doctype html><meta charset="utf-8"><title>payhook</title>
<script type="importmap">${JSON.stringify(importMapFor('/runtimes/node_modules/payhook/'))}</script>
<script type="module" src="/runtimes/browser.mjs"></script>`;
  const server = createServer((request, response) => {
    const { pathname } = new URL(request.url, 'http://127.0.0.1');
    if (pathname === '/') {
      response.writeHead(200, { 'content-type': 'text/html' }).end(page);
      return;
    }
    const file = resolve(testDir, `.${decodeURIComponent(pathname)}`);
    if (!file.startsWith(testDir + sep) || !existsSync(file) || !statSync(file).isFile()) {
      response.writeHead(404).end();
      return;
    }
    response
      .writeHead(200, { 'content-type': MIME[extname(file)] ?? 'application/octet-stream' })
      .end(readFileSync(file));
  });
  return new Promise((resolvePromise) => server.listen(0, '127.0.0.1', () => resolvePromise(server)));
}

async function chromium() {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found (apt-get install chromium, or set CHROMIUM_PATH)`);
  const { chromium: launcher } = await import('playwright-core');
  const server = await serveTestDir();
  const browser = await launcher.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
  try {
    const page = await browser.newPage();
    const lines = [];
    page.on('console', (message) => lines.push(message.text()));
    page.on('pageerror', (error) => lines.push(`page error: ${error.message}`));
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    try {
      await page.waitForFunction(() => globalThis.__payhookResult !== undefined, undefined, {
        timeout: RUNTIME_TIMEOUT_MS,
      });
    } catch (error) {
      return { passed: 0, failed: 1, output: `${lines.join('\n')}\nthe page never finished: ${error.message}` };
    }
    const { passed, failed } = await page.evaluate(() => globalThis.__payhookResult);
    return { passed, failed, output: lines.join('\n') };
  } finally {
    await browser.close();
    server.close();
  }
}

// ---------------------------------------------------------------- matrix

function matrix() {
  const node = (label, binary) => [
    [`${label} ESM`, () => processRuntime(binary(), ['esm.mjs'])],
    [`${label} CJS`, () => processRuntime(binary(), ['cjs.cjs'])],
  ];
  const path = (name) => () => runtimeBinary(name).path;
  return [
    ...node(`node ${process.versions.node}`, () => process.execPath),
    ...node(`node ${tryVersion('node22')}`, path('node22')),
    ...node(`node ${tryVersion('node24')}`, path('node24')),
    [
      `deno ${tryVersion('deno')}`,
      () =>
        processRuntime(
          runtimeBinary('deno').path,
          ['run', '--no-lock', '--no-prompt', `--allow-read=${join(root, 'test')}`, 'esm.mjs'],
          { DENO_NO_UPDATE_CHECK: '1' },
        ),
    ],
    [`bun ${tryVersion('bun')}`, () => processRuntime(runtimeBinary('bun').path, ['esm.mjs'])],
    [
      `deno ${tryVersion('deno')} Web handler via Deno.serve`,
      () =>
        quietRuntime(
          runtimeBinary('deno').path,
          [
            'run',
            '--no-lock',
            '--no-prompt',
            `--allow-read=${join(root, 'test')}`,
            '--allow-net=127.0.0.1',
            'serve.mjs',
          ],
          { DENO_NO_UPDATE_CHECK: '1' },
        ),
    ],
    [
      `bun ${tryVersion('bun')} Web handler via Bun.serve`,
      () => quietRuntime(runtimeBinary('bun').path, ['serve.mjs']),
    ],
    ['workerd (Miniflare) suite', () => workerdSuite()],
    // Workers keep the compatibility date they were deployed with: before 2024-09-26 a CryptoKey's class string
    // is "[object Object]".
    ['workerd (Miniflare) suite, compatibility date 2024-09-25', () => workerdSuite('2024-09-25')],
    // The oldest date Workers accept: before 2023-12-01 a CryptoKey's algorithm.publicExponent is an ArrayBuffer,
    // not a Uint8Array.
    ['workerd (Miniflare) suite, compatibility date 2021-11-03', () => workerdSuite('2021-11-03')],
    ['workerd (Miniflare) Web handler via fetch', workerdFetch],
    ['chromium', chromium],
  ];
}

/** Every entry but the Web handler checks through a server (`… via …`) runs the whole shared suite. */
function wholeSuite(name) {
  return !name.includes(' via ');
}

function tryVersion(name) {
  try {
    return runtimeBinary(name).version;
  } catch {
    return `(${name} missing)`;
  }
}

async function main() {
  const only = process.argv.slice(2);
  ensureRuntimesInstalled();
  installPacked(runtimesDir);
  // Every runtime must run every case: one that passes fewer (a variant left
  // out for lack of an API) fails, so nothing can be skipped silently.
  const { runtimeCases } = await import(pathToFileURL(join(runtimesDir, 'shared.mjs')).href);
  const expected = runtimeCases(
    await import(pathToFileURL(join(installed, 'dist', 'index.js')).href),
    await import(pathToFileURL(join(installed, 'dist', 'web.js')).href),
  ).length;
  const started = Date.now();
  const results = [];
  for (const [name, run] of matrix()) {
    if (only.length > 0 && !only.some((word) => name.includes(word))) continue;
    const t0 = Date.now();
    let result;
    try {
      result = await run();
    } catch (error) {
      result = { passed: 0, failed: 1, output: `could not start: ${(error && error.stack) || error}` };
    }
    const seconds = ((Date.now() - t0) / 1000).toFixed(1);
    if (wholeSuite(name) && result.passed + result.failed !== expected) {
      result = {
        ...result,
        failed: result.failed + 1,
        output: `${result.output}\nran ${result.passed + result.failed} cases, expected ${expected}`,
      };
    }
    const ok = result.failed === 0 && result.passed > 0;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}: ${result.passed} passed, ${result.failed} failed (${seconds} s)`);
    if (!ok) {
      const failures = result.output
        .split('\n')
        .filter((line) => line.trim() !== '')
        .slice(0, 40);
      for (const line of failures) console.log(`       ${line}`);
    }
    results.push({ name, ok, ...result });
  }
  if (results.length === 0) die(`no runtime matches ${only.join(' ')}`);
  const passed = results.reduce((sum, r) => sum + r.passed, 0);
  const failed = results.reduce((sum, r) => sum + r.failed, 0);
  const bad = results.filter((r) => !r.ok).map((r) => r.name);
  console.log(
    `\n${results.length} runtimes in ${((Date.now() - started) / 1000).toFixed(1)} s; ${bad.length ? `failing: ${bad.join(', ')}` : 'all green'}`,
  );
  console.log(`runtimes: ${passed} passed, ${failed} failed`);
  process.exit(bad.length === 0 ? 0 : 1);
}

await main();
