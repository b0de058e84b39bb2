#!/usr/bin/env node
// jsr.json publishes the TypeScript sources to JSR, where Deno imports them
// with no build step. Checks that it offers the same entries as package.json's
// exports map, then runs `deno publish --dry-run` (the pinned Deno of
// test/runtimes): every entry type-checks, has no slow types, and every
// relative `.js` import resolves to its `.ts` file. The version is the one in
// package.json, as the release workflow publishes it.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runtimeBinary } from './lib/runtime-binaries.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const read = (file) => JSON.parse(readFileSync(join(root, file), 'utf8'));
const manifest = read('package.json');
const jsr = read('jsr.json');
const problems = [];

const npmEntries = Object.keys(manifest.exports).filter((subpath) => subpath !== './package.json');
const jsrEntries = Object.keys(jsr.exports);
for (const subpath of npmEntries)
  if (!jsrEntries.includes(subpath)) problems.push(`jsr.json lacks the entry ${subpath} that package.json exports`);
for (const subpath of jsrEntries)
  if (!npmEntries.includes(subpath)) problems.push(`jsr.json exports ${subpath}, which package.json does not`);

const deno = runtimeBinary('deno');
const publish = spawnSync(deno.path, ['publish', '--dry-run', '--allow-dirty', '--set-version', manifest.version], {
  cwd: root,
  encoding: 'utf8',
  env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' },
});
if (publish.status !== 0) {
  problems.push(`deno publish --dry-run exited ${publish.status}:\n${publish.stdout}${publish.stderr}`);
}
const files = (publish.stdout + publish.stderr).split('\n').filter((line) => line.trim().startsWith('file://'));

for (const problem of problems) console.log(`FAIL ${problem}`);
console.log(
  `check-jsr: deno ${deno.version}, ${jsr.name}@${manifest.version}, ${jsrEntries.length} entries, ${files.length} files; ${problems.length === 0 ? 'publishable' : `${problems.length} problem(s)`}`,
);
process.exit(problems.length === 0 ? 0 : 1);
