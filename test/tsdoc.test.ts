// House style: every name an entry exports carries TSDoc with an @example.
// Checked on the sources, following each entry's re-exports to the
// declaration, so a new export without an example fails here.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../src/', import.meta.url));
const entries = [
  'index.ts',
  'web/index.ts',
  'node/index.ts',
  'redis/index.ts',
  'postgres/index.ts',
  'cloudflare/index.ts',
  'sqlite/index.ts',
  'testing/index.ts',
  'explain/index.ts',
];

function read(file: string): string {
  return readFileSync(file, 'utf8');
}

function sourceOf(file: string, specifier: string): string {
  return resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
}

/** Every name `file` exports through `export { … } from '…'`, with the file it comes from. */
function reExports(file: string): Array<{ name: string; from: string }> {
  const found: Array<{ name: string; from: string }> = [];
  for (const match of read(file).matchAll(/^export (?:type )?\{([^}]*)\} from '([^']+)';/gm)) {
    for (const part of (match[1] as string).split(',')) {
      const name = part
        .replace(/^\s*type\s+/, '')
        .split(/\s+as\s+/)
        .pop()
        ?.trim();
      if (name) found.push({ name, from: sourceOf(file, match[2] as string) });
    }
  }
  return found;
}

/** The TSDoc right before `name`'s declaration, following re-exports; undefined when not found. */
function docOf(file: string, name: string, depth = 0): string | undefined {
  const text = read(file);
  const declaration = new RegExp(
    `^export (?:declare )?(?:async )?(?:function|interface|type|const|class) ${name}\\b`,
    'm',
  ).exec(text);
  if (declaration) {
    const before = text.slice(0, declaration.index).trimEnd();
    return before.endsWith('*/') ? before.slice(before.lastIndexOf('/**')) : '';
  }
  if (depth > 4) return undefined;
  const next = reExports(file).find((entry) => entry.name === name);
  return next ? docOf(next.from, name, depth + 1) : undefined;
}

describe('TSDoc with an @example on every export of every entry', () => {
  for (const entry of entries) {
    it(`payhook${entry === 'index.ts' ? '' : '/' + entry.replace('/index.ts', '')}`, () => {
      const file = resolve(src, entry);
      const names = [
        ...reExports(file).map(({ name }) => name),
        ...[...read(file).matchAll(/^export (?:async )?(?:function|interface|type|const|class) (\w+)/gm)].map(
          (m) => m[1] as string,
        ),
      ];
      expect(names.length).toBeGreaterThan(0);
      const missing = names.filter((name) => !(docOf(file, name) ?? '').includes('@example'));
      expect(missing).toEqual([]);
    });
  }
});
