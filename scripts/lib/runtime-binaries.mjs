// Where the pinned runtimes of package-lock.json live once installed: each
// is the linux-x64 binary package itself (not the `deno`/`bun` wrappers,
// whose postinstall only copies that binary and whose optional dependencies
// for other platforms keep `npm ci` from accepting the lock).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The runtimes are installed by test/runtimes/package.json, beside the tests that run them.
export const modulesDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'runtimes', 'node_modules');

const CANDIDATES = {
  node22: ['node22/bin/node'],
  node24: ['node24/bin/node'],
  deno: ['@deno/linux-x64-glibc/deno'],
  bun: ['@oven/bun-linux-x64/bin/bun'],
};

const found = new Map();

/**
 * The first candidate binary that exists and answers `--version`; throws
 * (naming what it tried) when none does.
 * @param {'node22' | 'node24' | 'deno' | 'bun'} name
 * @returns {{ path: string, version: string }}
 */
export function runtimeBinary(name) {
  const cached = found.get(name);
  if (cached) return cached;
  const tried = [];
  for (const candidate of CANDIDATES[name]) {
    const path = join(modulesDir, candidate);
    if (!existsSync(path)) {
      tried.push(`${candidate} (absent)`);
      continue;
    }
    const probe = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 30_000 });
    if (probe.status === 0) {
      const version = probe.stdout
        .trim()
        .split('\n')[0]
        .replace(/^deno (\S+).*/, '$1')
        .replace(/^v/, '');
      const result = { path, version };
      found.set(name, result);
      return result;
    }
    tried.push(
      `${candidate} (exit ${probe.status}: ${(probe.stderr || probe.error?.message || '').trim().slice(0, 200)})`,
    );
  }
  throw new Error(
    `no working ${name} in test/runtimes/node_modules (run bash scripts/setup-test-env.sh); tried ${tried.join(', ')}`,
  );
}
