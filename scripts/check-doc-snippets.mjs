// Type-checks every TypeScript/JavaScript block of the docs against the built
// package, as a merchant's project would see it, and runs the complete ones.
//
//   node scripts/check-doc-snippets.mjs [file.md …] [--tsdoc]
//     (default: README.md, docs/**/*.md, examples/README.md and the TSDoc examples; --tsdoc: the TSDoc examples)
//
// Each ```ts / ```tsx / ```js / ```mjs block (and the typescript/javascript
// spellings) becomes a module in a temporary project whose node_modules holds
// `payhook` as a link to this repository, so imports go through the exports
// map to dist/ (run `npm run build` first). The project is checked twice,
// under `strict` with moduleResolution node16 and with bundler.
//
// A block is a complete module unless an HTML comment right above it says:
//   <!-- doc-test: run -->        a complete program: also run it (node; vitest when it imports vitest)
//   <!-- doc-test: fragment       part of a program; the lines up to --> are a hidden preamble
//   declare const options: …      (declare const …, import type …) put before the block
//   -->
//   <!-- doc-test: skip <reason> -->   not checked (the reason is required)
//   <!-- doc-test: run-by <test file> -->   type-checked here, then run as written by the vitest file
//                                      named (a `*.docs.test.ts`, with the servers only it starts:
//                                      PostgreSQL…), which this script runs once after the type check
//
// docs/api/** is left out: typedoc generates it from the TSDoc @example blocks,
// which are checked here at their source instead: every ```ts block of an
// `@example` in src/ that imports the package by name (`from 'payhook…'`: a
// public example; internal ones import relative paths) is a complete module
// too, so a name it uses without importing needs a `declare` line of its own.
// Those that import node:sqlite or bun:sqlite are left out: this project's
// Node 20 types have neither (check:package checks the stores against them).
//
// Exit 0 when every block passes; 1 with `file:line:column` for each problem.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LANGS = { ts: 'ts', typescript: 'ts', tsx: 'tsx', js: 'mjs', javascript: 'mjs', mjs: 'mjs' };
const RUN_TIMEOUT_MS = 60_000;

function markdownFiles() {
  const found = ['README.md', 'examples/README.md'];
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory() && path !== 'docs/api') walk(path);
      else if (entry.isFile() && entry.name.endsWith('.md')) found.push(path);
    }
  };
  if (existsSync(join(root, 'docs'))) walk('docs');
  return found.filter((file) => existsSync(join(root, file)));
}

/** The doc-test marker in the lines just above `fenceIndex`, if any. */
function markerAbove(lines, fenceIndex, file) {
  let end = fenceIndex - 1;
  while (end >= 0 && lines[end].trim() === '') end--;
  if (end < 0 || !lines[end].trimEnd().endsWith('-->')) return { mode: 'module', preamble: '' };
  let start = end;
  while (start >= 0 && !lines[start].includes('<!--')) start--;
  const comment = lines.slice(start, end + 1).join('\n');
  const inner = comment.slice(comment.indexOf('<!--') + 4, comment.lastIndexOf('-->'));
  const [first = '', ...rest] = inner.replace(/^\s*\n/, '').split('\n');
  const match = /^\s*doc-test:\s*([\w-]+)\s*(.*?)\s*(?:-->\s*)?$/.exec(first);
  if (!match) return { mode: 'module', preamble: '' };
  const [, mode, reason] = match;
  const body = rest.join('\n');
  if (!['run', 'fragment', 'skip', 'run-by'].includes(mode)) {
    throw new Error(`${file}:${start + 1}: unknown doc-test marker "${mode}" (run, fragment, skip or run-by)`);
  }
  if (mode === 'skip' && reason.trim() === '') throw new Error(`${file}:${start + 1}: doc-test: skip needs a reason`);
  if (mode === 'run-by') {
    const test = join(root, reason.trim());
    if (!existsSync(test)) {
      throw new Error(
        `${file}:${start + 1}: doc-test: run-by names ${JSON.stringify(reason.trim())}, which is not a file`,
      );
    }
    if (!test.endsWith('.docs.test.ts')) {
      throw new Error(
        `${file}:${start + 1}: doc-test: run-by names ${reason.trim()}, which is not a *.docs.test.ts file`,
      );
    }
    if (!readFileSync(test, 'utf8').includes(file)) {
      throw new Error(`${file}:${start + 1}: doc-test: run-by names ${reason.trim()}, which never reads ${file}`);
    }
  }
  if (mode !== 'fragment' && body.trim() !== '') {
    throw new Error(`${file}:${start + 1}: only a fragment may carry a preamble`);
  }
  return {
    mode,
    preamble: body.replace(/\s+$/, ''),
    markerLine: start + 1,
    ...(mode === 'run-by' ? { runBy: reason.trim() } : {}),
  };
}

/** Every checked block of `file`: its language, code, first code line (1-based) and marker. */
function extractBlocks(file) {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    let close = i + 1;
    while (close < lines.length && !new RegExp(`^\\s*${fence[0]}{${fence.length},}\\s*$`).test(lines[close])) close++;
    const ext = LANGS[lang.toLowerCase()];
    if (ext !== undefined) {
      const code = lines
        .slice(i + 1, close)
        .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
        .join('\n');
      blocks.push({ file, ext, code, line: i + 2, ...markerAbove(lines, i, file) });
    }
    i = close;
  }
  return blocks;
}

/** Every public TSDoc example under src/ (see the header), as blocks of its source file. */
function tsdocBlocks() {
  const blocks = [];
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && path.endsWith('.ts') && !path.endsWith('.d.ts')) blocks.push(...examplesOf(path));
    }
  };
  walk('src');
  return blocks;
}

function examplesOf(file) {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*\*\s*@example\b/.test(lines[i])) continue;
    let open = i + 1;
    while (open < lines.length && !/^\s*\*\s*```/.test(lines[open]) && !/\*\//.test(lines[open])) open++;
    const lang = /^\s*\*\s*```\s*([\w-]*)/.exec(lines[open] ?? '')?.[1] ?? '';
    const ext = LANGS[lang.toLowerCase()];
    if (ext === undefined) continue;
    let close = open + 1;
    while (close < lines.length && !/^\s*\*\s*```\s*$/.test(lines[close])) close++;
    const code = lines
      .slice(open + 1, close)
      .map((line) => line.replace(/^\s*\* ?/, ''))
      .join('\n');
    i = close;
    if (!/from\s+['"]payhook(?:\/[\w-]+)?['"]/.test(code) || /from\s+['"](?:node|bun):sqlite['"]/.test(code)) continue;
    blocks.push({ file, ext, code, line: open + 2, mode: 'module', preamble: '' });
  }
  return blocks;
}

/** A temporary project: package.json (ESM), node_modules with every dev dependency and `payhook` → this repo. */
function makeProject() {
  const dir = mkdtempSync(join(tmpdir(), 'payhook-doc-snippets-'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'doc-snippets', private: true, type: 'module' }));
  const modules = join(dir, 'node_modules');
  mkdirSync(modules);
  for (const name of readdirSync(join(root, 'node_modules'))) {
    if (name.startsWith('.') || name === 'payhook') continue;
    symlinkSync(join(root, 'node_modules', name), join(modules, name));
  }
  symlinkSync(root, join(modules, 'payhook'));
  return dir;
}

function compilerOptions(dir, resolution) {
  const { options, errors } = ts.convertCompilerOptionsFromJson(
    {
      strict: true,
      // The type flags of careful merchants' projects (and of payhook's own): an example must compile there too.
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      target: 'ES2022',
      lib: ['ES2022', 'DOM', 'DOM.Iterable'],
      types: ['node'],
      typeRoots: [join(dir, 'node_modules/@types')],
      module: resolution === 'node16' ? 'Node16' : 'ESNext',
      moduleResolution: resolution === 'node16' ? 'Node16' : 'Bundler',
      moduleDetection: 'force',
      allowJs: true,
      checkJs: true,
      jsx: 'react-jsx',
      skipLibCheck: true,
      noEmit: true,
    },
    dir,
  );
  if (errors.length > 0) throw new Error(ts.flattenDiagnosticMessageText(errors[0].messageText, '\n'));
  return options;
}

/** Where a diagnostic at `fileLine` (0-based) of a snippet file is in its markdown. */
function markdownLine(block, fileLine) {
  const offset = fileLine - block.preambleLines;
  return offset < 0 ? `${block.markerLine} (in the doc-test preamble)` : String(block.line + offset);
}

function typeCheck(dir, blocks) {
  const problems = new Map();
  for (const resolution of ['node16', 'bundler']) {
    const byPath = new Map(blocks.map((block) => [block.path, block]));
    const program = ts.createProgram([...byPath.keys()], compilerOptions(dir, resolution));
    for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
      const block = diagnostic.file ? byPath.get(resolve(diagnostic.file.fileName)) : undefined;
      const message = `TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
      let where = '(project)';
      if (block !== undefined && diagnostic.start !== undefined) {
        const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
        where = `${block.file}:${markdownLine(block, line)}:${character + 1}`;
      } else if (diagnostic.file) {
        where = relative(root, diagnostic.file.fileName);
      }
      const key = `${where} ${message}`;
      const seen = problems.get(key);
      if (seen) seen.modes.push(resolution);
      else problems.set(key, { where, message, modes: [resolution] });
    }
  }
  return [...problems.values()].map(({ where, message, modes }) => `${where}: [${modes.join(', ')}] ${message}`);
}

function runBlock(dir, block) {
  const withVitest = /from\s+['"]vitest['"]/.test(block.source);
  let script = block.path;
  if (block.ext !== 'mjs' || withVitest) {
    const { outputText } = ts.transpileModule(block.source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, jsx: ts.JsxEmit.ReactJSX },
      fileName: block.path,
    });
    // vitest collects *.test.* files only.
    script = block.path.replace(/\.(tsx?|mjs)$/, withVitest ? '.test.mjs' : '.run.mjs');
    writeFileSync(script, outputText);
  }
  const args = withVitest
    ? [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--root', dir, '--dir', dir, relative(dir, script)]
    : [script];
  const result = spawnSync(process.execPath, args, { cwd: dir, encoding: 'utf8', timeout: RUN_TIMEOUT_MS });
  if (result.status === 0) return undefined;
  const why = result.error ? result.error.message : `exit ${result.status ?? result.signal}`;
  const output = `${result.stdout}${result.stderr}`.trim().split('\n').slice(-15).join('\n    ');
  return `${block.file}:${block.line}: the block did not run (${why})\n    ${output}`;
}

/** Runs the vitest file that runs `blocks` (all marked run-by it) as written; a problem per block when it fails. */
function runByTest(test, blocks) {
  const args = [join(root, 'node_modules/vitest/vitest.mjs'), 'run', test];
  const env = { ...process.env, PAYHOOK_DOC_TESTS: '1', NO_COLOR: '1', FORCE_COLOR: '0' };
  const result = spawnSync(process.execPath, args, { cwd: root, env, encoding: 'utf8', timeout: 10 * RUN_TIMEOUT_MS });
  if (result.status === 0) return [];
  const why = result.error ? result.error.message : `exit ${result.status ?? result.signal}`;
  const output = `${result.stdout}${result.stderr}`.trim().split('\n').slice(-25).join('\n    ');
  return blocks.map((block, index) => {
    const failure = `${block.file}:${block.line}: ${test}, which runs this block, failed (${why})`;
    return index === blocks.length - 1 ? `${failure}\n    ${output}` : failure;
  });
}

export function checkDocSnippets(files, { tsdoc = false } = {}) {
  if (!existsSync(join(root, 'dist/index.js'))) throw new Error('dist/ is missing: run "npm run build" first.');
  const blocks = [...files.flatMap(extractBlocks), ...(tsdoc ? tsdocBlocks() : [])].filter(
    (block) => block.mode !== 'skip',
  );
  const dir = makeProject();
  try {
    blocks.forEach((block, index) => {
      // Deno names npm packages npm:payhook/web; a Node project names them payhook/web.
      const code = block.code.replace(/(['"])npm:/g, '$1');
      block.preambleLines = block.preamble === '' ? 0 : block.preamble.split('\n').length;
      block.source = block.preamble === '' ? code : `${block.preamble}\n${code}`;
      block.path = join(dir, `snippet-${String(index).padStart(3, '0')}.${block.ext}`);
      writeFileSync(block.path, `${block.source}\n`);
    });
    const problems = typeCheck(dir, blocks);
    const runnable = blocks.filter((block) => block.mode === 'run');
    const runBy = blocks.filter((block) => block.mode === 'run-by');
    if (problems.length === 0) {
      for (const block of runnable) {
        const failure = runBlock(dir, block);
        if (failure !== undefined) problems.push(failure);
      }
      for (const test of new Set(runBy.map((block) => block.runBy))) {
        problems.push(
          ...runByTest(
            test,
            runBy.filter((block) => block.runBy === test),
          ),
        );
      }
    }
    const ran = runnable.length + runBy.length;
    return { blocks: blocks.length, ran: problems.length === 0 ? ran : 0, problems };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  // With no arguments: every page, and the TSDoc examples.
  const tsdoc = args.length === 0 || args.includes('--tsdoc');
  const named = args.filter((arg) => arg !== '--tsdoc');
  const files =
    named.length > 0 ? named.map((file) => relative(root, resolve(file))) : args.length > 0 ? [] : markdownFiles();
  const where = [...files, ...(tsdoc ? ['the TSDoc examples of src/'] : [])].join(', ');
  try {
    const { blocks, ran, problems } = checkDocSnippets(files, { tsdoc });
    if (problems.length > 0) {
      console.error(problems.join('\n'));
      console.error(`\n${problems.length} problem(s) in the code blocks of ${where}`);
      process.exitCode = 1;
    } else {
      console.log(`doc snippets: ${blocks} block(s) type-check (strict; node16 and bundler), ${ran} ran, in ${where}`);
    }
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  }
}
