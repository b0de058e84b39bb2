// Every export of the delivery flow's public entries carries TSDoc with an
// @example (house style): checked on the sources, export by export.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../../src/', import.meta.url));
const folders = ['testing', 'handler', 'node', 'web', 'redis'];

function exportsWithoutExample(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const missing: string[] = [];
  for (const match of text.matchAll(
    /^export (?:declare )?(?:async )?(?:function|interface|type|const|class) (\w+)/gm,
  )) {
    const before = text.slice(0, match.index).trimEnd();
    const doc = before.endsWith('*/') ? before.slice(before.lastIndexOf('/**')) : '';
    // Helpers marked internal are exported between files, not from an entry.
    if (!doc.includes('@example') && !/^\/\*\*\s*(?:\*\s*)?Internal/.test(doc)) missing.push(match[1] as string);
  }
  return missing;
}

describe('TSDoc @example on every public export', () => {
  for (const folder of folders) {
    const files = readdirSync(join(src, folder)).filter((name) => name.endsWith('.ts'));
    it(`src/${folder}: ${files.join(', ')}`, () => {
      const missing = files.flatMap((name) =>
        exportsWithoutExample(join(src, folder, name)).map((symbol) => `${folder}/${name}: ${symbol}`),
      );
      expect(missing).toEqual([]);
    });
  }
});
