#!/usr/bin/env node
// Size budgets (.size-limit.json), measured by size-limit (minified and
// gzipped, with every dependency bundled): prints each figure against its
// budget and fails over budget. size-limit 14 needs Node ≥ 22.19, so it is no
// devDependency of the package (npm ci would warn on Node 20): it lives in
// scripts/size-limit, which scripts/setup-test-env.sh installs with the pinned
// Node 22 of test/runtimes, and runs with that Node.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const tool = join(root, 'scripts', 'size-limit');
const node = join(root, 'test', 'runtimes', 'node_modules', 'node22', 'bin', 'node');
const bin = join(tool, 'node_modules', 'size-limit', 'bin.js');
for (const [path, what] of [
  [node, 'the pinned Node 22 (test/runtimes)'],
  [bin, 'size-limit (scripts/size-limit)'],
]) {
  if (!existsSync(path)) {
    console.log(`FAIL ${what} is not installed: bash scripts/setup-test-env.sh`);
    process.exit(1);
  }
}
// size-limit finds its plugins in the package.json of the directory it runs
// in (scripts/size-limit); --config makes the budgets' paths relative to the root.
const result = spawnSync(node, [bin, '--config', join(root, '.size-limit.json'), ...process.argv.slice(2)], {
  cwd: tool,
  stdio: 'inherit',
  env: { ...process.env, NO_COLOR: '1' },
});
process.exit(result.status ?? 1);
