#!/usr/bin/env node
// The API reference in docs/api/ is generated from the TSDoc (typedoc.json):
// regenerate it into a scratch directory and fail on any difference, so it
// cannot drift from the code. `npm run docs` rewrites docs/api/.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const committed = join(root, 'docs', 'api');
const fresh = join(root, '.tmp', 'docs-api-check');

rmSync(fresh, { recursive: true, force: true });
const typedoc = spawnSync(
  process.execPath,
  [
    join(root, 'node_modules', 'typedoc', 'bin', 'typedoc'),
    '--out',
    fresh,
    '--logLevel',
    'Warn',
    '--treatWarningsAsErrors',
  ],
  { cwd: root, encoding: 'utf8' },
);
if (typedoc.status !== 0) {
  console.log(`FAIL typedoc exited ${typedoc.status}\n${typedoc.stdout}${typedoc.stderr}`);
  process.exit(1);
}

function files(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath ?? entry.path, entry.name)))
    .sort();
}

const want = files(fresh);
const have = files(committed);
const problems = [];
for (const file of want) {
  if (!have.includes(file)) problems.push(`docs/api/${file} is missing`);
  else if (readFileSync(join(fresh, file), 'utf8') !== readFileSync(join(committed, file), 'utf8'))
    problems.push(`docs/api/${file} differs from the TSDoc`);
}
for (const file of have) if (!want.includes(file)) problems.push(`docs/api/${file} documents nothing any more`);
rmSync(fresh, { recursive: true, force: true });

for (const problem of problems) console.log(`FAIL ${problem}`);
console.log(
  `check-docs: ${want.length} pages; ${problems.length === 0 ? 'docs/api matches the TSDoc' : `${problems.length} out of date: run \`npm run docs\` and commit docs/api`}`,
);
process.exit(problems.length === 0 ? 0 : 1);
