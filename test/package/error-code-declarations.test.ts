// The published declarations show PayhookErrorCode as its union of names,
// which an editor's hover and the reader of a .d.ts see, rather than
// `keyof typeof` an internal table that would then be published too.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const DIST = join(import.meta.dirname, '../../dist');
const declarations = readdirSync(DIST).filter((name) => /\.d\.c?ts$/.test(name));

describe('the declarations as built', () => {
  it('declare PayhookErrorCode as a union of string literals', () => {
    const declared = declarations.flatMap((name) =>
      [...readFileSync(join(DIST, name), 'utf8').matchAll(/^type PayhookErrorCode = (.*);$/gm)].map((m) => m[1]),
    );
    expect(declared.length).toBeGreaterThan(0);
    for (const union of declared) expect(union).toMatch(/^'MISSING_HOST'( \| '[A-Z_]+')+$/);
  });

  it('publish no internal table of codes', () => {
    for (const name of declarations) {
      const text = readFileSync(join(DIST, name), 'utf8');
      expect([name, text.includes('ERROR_CODES'), text.includes('CodeFacts')]).toEqual([name, false, false]);
    }
  });
});
