#!/usr/bin/env node
// Type-checks the emitted declarations of every entry from a consumer project
// (test/package), as users compile against them: the packed package unpacked
// into test/package/node_modules/payhook, `skipLibCheck: false`, strict
// flags, under each module resolution users pick.
//
// Entry groups and the ambient types each gets:
//   core   payhook, payhook/node, payhook/redis, payhook/postgres, payhook/sqlite, payhook/explain: lib ES2022
//          only, no DOM, no @types/node — their public types must be structural.
//   dom    payhook/web, payhook/cloudflare, payhook/testing with lib DOM: they name the global
//          Request/Response (as every runtime they serve has them), so a
//          consumer needs either the DOM lib ...
//   node   ... or @types/node (Node's global fetch types), without DOM.
//   workers ... or @cloudflare/workers-types, whose AbortSignal is a class.
// Each file has an ESM (.mts) and a CJS (.cts) consumer, so both the
// `import` and the `require` declarations (.d.ts and .d.cts) are checked.
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { installPacked, root } from './lib/pack.mjs';

const consumer = join(root, 'test', 'package');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

const groups = {
  core: {
    lib: ['ES2022'],
    types: [],
    files: [
      'core.mts',
      'core-require.cts',
      'node.mts',
      'node-require.cts',
      'redis.mts',
      'redis-require.cts',
      'postgres.mts',
      'postgres-require.cts',
      'sqlite.mts',
      'sqlite-require.cts',
      'explain.mts',
      'explain-require.cts',
    ],
  },
  dom: {
    lib: ['ES2022', 'DOM'],
    types: [],
    files: [
      'web.mts',
      'web-require.cts',
      'cloudflare.mts',
      'cloudflare-require.cts',
      'testing.mts',
      'testing-require.cts',
    ],
  },
  node: {
    lib: ['ES2022'],
    types: ['node'],
    files: [
      'web.mts',
      'web-require.cts',
      'cloudflare.mts',
      'cloudflare-require.cts',
      'testing.mts',
      'testing-require.cts',
    ],
  },
  workers: {
    lib: ['ES2022'],
    types: ['@cloudflare/workers-types'],
    files: ['web.mts', 'web-require.cts', 'cloudflare.mts', 'cloudflare-require.cts'],
  },
};
// The TypeScript examples a user copies (Next.js route, Cloudflare Worker)
// must compile too. The Deno and Bun ones need those runtimes' own types.
const examples = [
  '../../examples/nextjs/app/webhooks/payments/route.ts',
  '../../examples/cloudflare-worker/src/index.ts',
];

const resolutions = {
  bundler: { module: 'ESNext', moduleResolution: 'Bundler' },
  node16: { module: 'Node16', moduleResolution: 'Node16' },
  nodenext: { module: 'NodeNext', moduleResolution: 'NodeNext' },
  // Legacy `moduleResolution: node`, still common: subpaths reach their
  // types through package.json `typesVersions`.
  node10: { module: 'CommonJS', moduleResolution: 'Node10' },
};

// Nearly all of each compile is checking the ambient libraries (lib.dom.d.ts,
// @types/node) under `skipLibCheck: false`, the same every run. tsc's
// incremental record keeps each file's diagnostics by content, so a rerun
// checks again only what changed (dist/ after a build) and whatever depends on
// it; every file is still part of every check. The records live in .tmp/.
const buildInfoDir = join(root, '.tmp', 'check-types');

function run(config, name) {
  return new Promise((resolvePromise) => {
    const buildInfo = join(buildInfoDir, `${name}.tsbuildinfo`);
    const args = [tsc, '-p', config, '--pretty', 'false', '--incremental', '--tsBuildInfoFile', buildInfo];
    const child = spawn(process.execPath, args, { cwd: consumer });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => resolvePromise({ code, output }));
  });
}

installPacked(consumer);
const configDir = join(consumer, '.tmp');
rmSync(configDir, { recursive: true, force: true });
mkdirSync(configDir, { recursive: true });
mkdirSync(buildInfoDir, { recursive: true });

const jobs = [];
for (const [group, { lib, types, files }] of Object.entries(groups)) {
  for (const [resolution, options] of Object.entries(resolutions)) {
    const config = join(configDir, `tsconfig.${group}.${resolution}.json`);
    writeFileSync(
      config,
      JSON.stringify(
        {
          extends: '../tsconfig.json',
          compilerOptions: {
            ...options,
            lib,
            types,
            ...(resolution === 'node10' ? { ignoreDeprecations: '5.0' } : {}),
          },
          files: files.map((file) => `../src/${file}`),
        },
        null,
        2,
      ),
    );
    jobs.push({ name: `${group} × ${resolution}`, file: `${group}.${resolution}`, config });
  }
}

{
  const config = join(configDir, 'tsconfig.examples.bundler.json');
  writeFileSync(
    config,
    JSON.stringify(
      {
        extends: '../tsconfig.json',
        compilerOptions: { ...resolutions.bundler, lib: ['ES2022', 'DOM'], types: ['node'] },
        files: examples.map((file) => `../${file}`),
      },
      null,
      2,
    ),
  );
  jobs.push({ name: 'examples × bundler', file: 'examples.bundler', config });
}

// Two compilers at a time: the machine has two cores.
let failed = 0;
const queue = [...jobs];
async function worker() {
  for (let job = queue.shift(); job; job = queue.shift()) {
    const { code, output } = await run(job.config, job.file);
    const ok = code === 0;
    if (!ok) failed++;
    console.log(`${ok ? 'ok  ' : 'FAIL'} types ${job.name}`);
    if (!ok)
      console.log(
        output
          .trim()
          .split('\n')
          .slice(0, 30)
          .map((line) => `       ${line}`)
          .join('\n'),
      );
  }
}
await Promise.all([worker(), worker()]);
console.log(`check-types: ${jobs.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
