#!/usr/bin/env node
// `npm run check:package`: everything about the package as it would be
// published, after `npm run build`. Every step runs (so one run shows every
// problem); the command fails if any step fails.
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const script = (name) => [process.execPath, join(root, 'scripts', name)];

const steps = [
  ['publint --strict', [bin('publint'), '--strict']],
  // Every entry under node10, node16 (ESM and CJS) and bundler resolution.
  // No rule is ignored: the CLI (bin) is no import path, so attw never sees it.
  ['attw --pack', [bin('attw'), '--pack', '--format', 'table-flipped']],
  ['declarations compile for consumers', script('check-types.mjs')],
  ['core build is runtime-neutral', script('check-core-build.mjs')],
  ['npm pack contents', script('check-pack.mjs')],
  ['size budgets', script('check-size.mjs')],
  ['API reference is up to date', script('check-docs.mjs')],
  ['JSR: deno publish --dry-run', script('check-jsr.mjs')],
];

const failed = [];
for (const [name, [command, ...args]] of steps) {
  console.log(`\n── ${name}`);
  const started = Date.now();
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: { ...process.env, NO_COLOR: '1' } });
  const ok = result.status === 0;
  if (!ok) failed.push(name);
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
console.log(`\n${failed.length === 0 ? 'package checks all green' : `failing: ${failed.join('; ')}`}`);
console.log(`check-package: ${steps.length - failed.length} passed, ${failed.length} failed`);
process.exit(failed.length === 0 ? 0 : 1);
