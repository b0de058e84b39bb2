// Packs the package as `npm publish` would and unpacks the tarball into
// `<dir>/node_modules/payhook`, so a consumer resolves it by name through
// its exports map and sees only the published files.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** @returns {string} the directory the package was unpacked into */
export function installPacked(dir) {
  for (const file of ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts']) {
    if (!existsSync(join(root, 'dist', file))) throw new Error(`dist/${file} is missing: run \`npm run build\` first`);
  }
  const target = join(dir, 'node_modules', 'payhook');
  const packDir = mkdtempSync(join(tmpdir(), 'payhook-pack-'));
  try {
    const pack = spawnSync('npm', ['pack', '--json', '--pack-destination', packDir], { cwd: root, encoding: 'utf8' });
    if (pack.status !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`);
    const [{ filename }] = JSON.parse(pack.stdout);
    rmSync(target, { recursive: true, force: true });
    mkdirSync(target, { recursive: true });
    const untar = spawnSync('tar', ['-xzf', join(packDir, filename), '-C', target, '--strip-components=1'], {
      encoding: 'utf8',
    });
    if (untar.status !== 0) throw new Error(`tar failed:\n${untar.stderr}`);
  } finally {
    rmSync(packDir, { recursive: true, force: true });
  }
  return target;
}
