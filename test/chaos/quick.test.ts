// The short chaos run (CHAOS_QUICK=1) against the built package: every
// scenario of issue 12 on real loopback servers and a real redis-server, held
// to the targets. It needs `dist/` (npm test builds it first).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

interface ChaosRow {
  scenario: string;
  name: string;
  target: string;
  sent: number;
  lost: number;
  duplicated: number;
  falseAccepts: number;
  wrong: number;
  failures: string[];
  metrics: Record<string, number | string>;
}

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'payhook-chaos-'));
const output = join(dir, 'rows.json');
let run: { status: number | null; stdout: string; stderr: string };
let rows: ChaosRow[] = [];

beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'node.js'))) {
    throw new Error('dist/ is missing: run `npm run build` first (npm test does).');
  }
  const result = spawnSync(process.execPath, ['scripts/chaos/run.mjs'], {
    cwd: root,
    env: { ...process.env, CHAOS_QUICK: '1', CHAOS_SECONDS: '60', CHAOS_JSON: output, CHAOS_ONLY: '' },
    encoding: 'utf8',
    timeout: 90_000,
  });
  run = { status: result.status, stdout: result.stdout, stderr: result.stderr };
  if (existsSync(output)) rows = (JSON.parse(readFileSync(output, 'utf8')) as { rows: ChaosRow[] }).rows;
}, 100_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run chaos (quick)', () => {
  it('prints the table and writes a row for every scenario', () => {
    expect(run.stdout).toMatch(/sent\s+handled\s+lost\s+duplicated/);
    const scenarios = new Set(rows.map((row) => row.scenario));
    expect([...scenarios].sort()).toEqual(['1', '2', '3', '4', '5', '6', '7', '8']);
    const receivers = new Set(rows.map((row) => row.target));
    for (const server of ['node', 'web']) {
      for (const store of ['memory', 'ioredis', 'node-redis']) expect(receivers).toContain(`${server}/${store}`);
    }
    for (const row of rows) expect(row.sent).toBeGreaterThan(0);
  });

  it('loses nothing, runs nothing twice and accepts nothing forged, on every store', () => {
    const counted = rows.map(({ scenario, target, lost, duplicated, falseAccepts }) => ({
      scenario,
      target,
      lost,
      duplicated,
      falseAccepts,
    }));
    expect(counted).toEqual(counted.map((row) => ({ ...row, lost: 0, duplicated: 0, falseAccepts: 0 })));
  });

  it('keeps an unsigned maximal body under 20 ms of event loop and valid deliveries under p99 50 ms', () => {
    const flood = rows.filter((row) => row.scenario === '2');
    expect(flood.length).toBeGreaterThan(0);
    for (const row of flood) {
      expect(row.metrics['unsignedMedianMs']).toBeLessThanOrEqual(20);
      expect(row.metrics['validP99Ms']).toBeLessThanOrEqual(50);
    }
  });

  it('misses no target and exits 0', () => {
    const failed = rows
      .filter((row) => row.failures.length > 0)
      .map((row) => `${row.scenario} ${row.name} ${row.target}: ${row.failures.join('; ')}`);
    expect(failed).toEqual([]);
    expect(run.status, run.stderr.slice(-2_000)).toBe(0);
  });
});
