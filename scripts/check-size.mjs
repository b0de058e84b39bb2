#!/usr/bin/env node
// Size budgets (.size-limit.json), measured by size-limit (minified and
// gzipped, with every dependency bundled): prints each figure against its
// budget and fails over budget. size-limit 14 needs Node ≥ 22 (fs.glob): on
// an older Node this runs it with the pinned Node 22 of test/runtimes.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const major = Number(process.versions.node.split('.')[0]);
let node = process.execPath;
if (major < 22) {
  node = join(root, 'test', 'runtimes', 'node_modules', 'node22', 'bin', 'node');
  if (!existsSync(node)) {
    console.log('FAIL size-limit needs Node ≥ 22 and test/runtimes is not installed (bash scripts/setup-test-env.sh)');
    process.exit(1);
  }
}
const result = spawnSync(node, [join(root, 'node_modules', 'size-limit', 'bin.js'), ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, NO_COLOR: '1' },
});
process.exit(result.status ?? 1);
