#!/usr/bin/env node
// What `npm publish` would upload: only what users need (package.json, the
// README, licence and changelog, and the built JavaScript and declarations in
// dist/), and every file that package.json points at (exports, main, module,
// types, typesVersions, bin) is among them.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ALLOWED = [
  /^package\.json$/,
  /^README\.md$/,
  /^LICEN[CS]E(\.md|\.txt)?$/,
  /^CHANGELOG\.md$/,
  /^dist\/[\w.-]+\.(js|cjs|d\.ts|d\.cts)$/,
];

const pack = spawnSync('npm', ['pack', '--dry-run', '--json'], { cwd: root, encoding: 'utf8' });
if (pack.status !== 0) {
  console.log(`FAIL npm pack --dry-run:\n${pack.stderr}`);
  process.exit(1);
}
const [{ files, size, unpackedSize }] = JSON.parse(pack.stdout);
const paths = new Set(files.map((file) => file.path));
const problems = [];

for (const path of paths) {
  if (!ALLOWED.some((pattern) => pattern.test(path)))
    problems.push(`${path} would be published but users do not need it`);
}

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const referenced = new Set();
const collect = (value) => {
  if (typeof value === 'string') referenced.add(value);
  else if (Array.isArray(value)) value.forEach(collect);
  else if (value && typeof value === 'object') Object.values(value).forEach(collect);
};
collect(manifest.exports);
collect([manifest.main, manifest.module, manifest.types, manifest.typings].filter(Boolean));
collect(typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {}));
collect(manifest.typesVersions);
for (const target of referenced) {
  const path = posix.normalize(target).replace(/^\.\//, '');
  if (path.includes('*')) continue;
  if (!paths.has(path)) problems.push(`package.json points at ${target}, which the package does not contain`);
}
if (manifest.dependencies && Object.keys(manifest.dependencies).length > 0) {
  problems.push(`runtime dependencies must stay empty, found ${Object.keys(manifest.dependencies).join(', ')}`);
}

for (const problem of problems) console.log(`FAIL ${problem}`);
console.log(
  `check-pack: ${paths.size} files, ${(size / 1024).toFixed(1)} KB packed, ${(unpackedSize / 1024).toFixed(1)} KB unpacked; ${problems.length === 0 ? 'only what users need' : `${problems.length} problem(s)`}`,
);
process.exit(problems.length === 0 ? 0 : 1);
