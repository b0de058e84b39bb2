import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The checker behind `npm run test:docs`, run as CI runs it, on fixture
// markdown: it must pass good blocks and name file:line for a broken one.
const root = fileURLToPath(new URL('../../', import.meta.url));

function check(fixture: string) {
  const result = spawnSync(process.execPath, ['scripts/check-doc-snippets.mjs', `test/docs/fixtures/${fixture}`], {
    cwd: root,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('scripts/check-doc-snippets.mjs', { timeout: 180_000 }, () => {
  it('passes modules, fragments with a preamble and programs that run; skips what is marked; exit 0', () => {
    const result = check('passes.md');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    // Three checked blocks (the skipped one and the sh block are not), one of them run.
    expect(result.stdout).toContain('3 block(s) type-check (strict; node16 and bundler), 1 ran');
  });

  it('fails on a broken block and names file:line:column, in both resolutions', () => {
    const result = check('broken.md');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/test\/docs\/fixtures\/broken\.md:16:12: \[node16, bundler\] TS2345: /);
    // A fragment's lines are counted from the block, not from its hidden preamble.
    expect(result.stderr).toMatch(
      /test\/docs\/fixtures\/broken\.md:26:17: \[node16, bundler\] TS2304: Cannot find name 'b'/,
    );
    expect(result.stderr).toContain('2 problem(s)');
  });

  it('fails on a block marked run that throws, naming file:line', () => {
    const result = check('fails-at-run.md');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('test/docs/fixtures/fails-at-run.md:6: the block did not run (exit 1)');
    expect(result.stderr).toContain('the documented figure is wrong');
  });

  it('fails when a block is marked run-by a test file that does not exist, naming file:line', () => {
    const result = check('run-by-missing.md');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'test/docs/fixtures/run-by-missing.md:3: doc-test: run-by names "test/docs/fixtures/no-such.test.ts", which is not a file',
    );
  });
});
