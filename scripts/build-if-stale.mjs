#!/usr/bin/env node
// Builds dist/ only when it is missing or older than what it is built from
// (src/**, tsup.config.ts, package.json, tsconfig.json), and keeps the build's
// own output to itself unless it fails. `npm run build` always rebuilds.
//
//   node scripts/build-if-stale.mjs            one line (stderr) when it builds, nothing when dist/ is fresh
//   node scripts/build-if-stale.mjs --verbose  also says when it skips, and how long the build took
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const verbose = process.argv.includes('--verbose');
const INPUTS = ['src', 'tsup.config.ts', 'package.json', 'tsconfig.json'];
// One output of each kind the build makes: ESM, CJS, both declaration flavours, the CLI.
const OUTPUTS = ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts', 'cli.js'];

/** Every file and directory under `path` with its mtime; a directory's mtime moves when an entry is added or removed. */
function entries(path) {
  const found = [{ path, mtime: statSync(path).mtimeMs }];
  if (statSync(path).isDirectory()) {
    for (const entry of readdirSync(path, { withFileTypes: true })) found.push(...entries(join(path, entry.name)));
  }
  return found;
}

function staleReason() {
  const dist = join(root, 'dist');
  const missing = OUTPUTS.find((file) => !existsSync(join(dist, file)));
  if (missing) return `dist/${missing} is missing`;
  const oldestOutput = Math.min(
    ...readdirSync(dist)
      .map((file) => statSync(join(dist, file)))
      .filter((stat) => stat.isFile())
      .map((stat) => stat.mtimeMs),
  );
  const newer = INPUTS.filter((input) => existsSync(join(root, input)))
    .flatMap((input) => entries(join(root, input)))
    .find((entry) => entry.mtime > oldestOutput);
  return newer ? `${relative(root, newer.path)} changed since the last build` : undefined;
}

const reason = staleReason();
if (!reason) {
  if (verbose) console.log('build: dist/ is newer than its sources, not rebuilt');
  process.exit(0);
}
const started = Date.now();
(verbose ? console.log : console.error)(`build: ${reason}; building dist/`);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const build = spawnSync(npm, ['run', '--silent', 'build'], { cwd: root, encoding: 'utf8' });
if (build.status !== 0) {
  process.stdout.write(build.stdout);
  process.stderr.write(build.stderr);
  console.error(`build: npm run build failed (exit ${build.status})`);
  process.exit(1);
}
if (verbose) console.log(`build: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
