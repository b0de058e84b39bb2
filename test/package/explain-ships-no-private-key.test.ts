// payhook/explain recognises signatures made with the published test key, so
// it needs that key's public half only: no file it loads holds a private key.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

const DIST = join(import.meta.dirname, '../../dist');

/** Every file an entry loads, following its relative imports and requires. */
function loadedFiles(entry: string): string[] {
  const seen = new Set<string>();
  const pending = [join(DIST, entry)];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const [, path] of text.matchAll(/(?:from|require\()\s*['"](\.\/[^'"]+)['"]/g)) {
      pending.push(join(dirname(file), path!));
    }
  }
  return [...seen];
}

describe('the explain entry as built', () => {
  for (const entry of ['explain.js', 'explain.cjs']) {
    it(`${entry} loads no private key`, () => {
      const files = loadedFiles(entry);
      expect(files.length).toBeGreaterThan(1);
      for (const file of files)
        expect([file, readFileSync(file, 'utf8').includes('PRIVATE KEY')]).toEqual([file, false]);
    });
  }

  it('while payhook/testing, which signs, does', () => {
    expect(loadedFiles('testing.js').some((file) => readFileSync(file, 'utf8').includes('PRIVATE KEY'))).toBe(true);
  });
});
