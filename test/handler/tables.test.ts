// One table per concept: the error-code table in src/lib/errors.ts is the
// truth for every status a handler answers, and the documentation's tables
// (README, TSDoc) are held to it here; the log events a handler emits are
// the WebhookLogEvent union, which its TSDoc table lists.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { codeFacts, ERROR_CODES, statusForCode, type PayhookErrorCode } from '../../src/lib/errors.js';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const CODES = Object.keys(ERROR_CODES) as PayhookErrorCode[];

/** The rows of the first Markdown table after `heading` in `text` (TSDoc ` * ` prefixes removed). */
function tableAfter(text: string, heading: string): string[][] {
  const lines = text
    .slice(text.indexOf(heading))
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, '').trim());
  const start = lines.findIndex((line) => line.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith('|')) break;
    if (/^\|[\s|:-]+\|$/.test(line)) continue;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
  }
  return rows.slice(1);
}

/** The codes a cell names: backticked words, a `*` matching any run of letters and underscores. */
function codesIn(cell: string): PayhookErrorCode[] {
  const named = [...cell.matchAll(/`([A-Z_*]+)`/g)].map((match) => match[1] ?? '');
  return named.flatMap((name) => {
    const pattern = new RegExp(`^${name.replaceAll('*', '[A-Z_]*')}$`);
    const found = CODES.filter((code) => pattern.test(code));
    expect(found, `${name} names no error code`).not.toEqual([]);
    return found;
  });
}

/** Every code a table names, with the status of its row. */
function statusesIn(rows: string[][], codeColumn: number): Map<PayhookErrorCode, number> {
  const statuses = new Map<PayhookErrorCode, number>();
  for (const row of rows) {
    for (const code of codesIn(row[codeColumn] ?? '')) statuses.set(code, Number(row[0]));
  }
  return statuses;
}

describe('the error-code table', () => {
  it('gives every code a status, and a 5xx body wording to each code answered with a 5xx', () => {
    for (const code of CODES) {
      const [status, , wording] = codeFacts(code);
      expect(statusForCode(code)).toBe(status);
      expect(status >= 500 ? typeof wording : 'none', code).toBe(status >= 500 ? 'string' : 'none');
    }
  });

  it("holds the recipes guide's answers table to it, every code listed (a misconfiguration's 500s too)", () => {
    const statuses = statusesIn(tableAfter(read('docs/recipes.md'), '### Answers'), 1);
    for (const [code, status] of statuses) expect([code, status]).toEqual([code, statusForCode(code)]);
    expect(
      CODES.filter((code) => !statuses.has(code)),
      'codes missing from docs/recipes.md',
    ).toEqual([]);
  });

  it("holds createWebhookHandler's TSDoc answers table to it, every code listed", () => {
    const statuses = statusesIn(tableAfter(read('src/web/index.ts'), 'answers:'), 1);
    for (const [code, status] of statuses) expect([code, status]).toEqual([code, statusForCode(code)]);
    expect(CODES.filter((code) => !statuses.has(code))).toEqual([]);
  });

  it('is the list PayhookErrorCode documents, one row per code', () => {
    const rows = tableAfter(read('src/lib/errors.ts'), '| code | raised when |');
    expect(rows.flatMap((row) => codesIn(row[0] ?? '')).sort()).toEqual([...CODES].sort());
  });
});

describe('the log events', () => {
  const hooks = read('src/handler/hooks.ts');
  const union = [...(/export type WebhookLogEvent =([^;]+);/.exec(hooks)?.[1] ?? '').matchAll(/'([a-z-]+)'/g)].map(
    (match) => match[1],
  );

  it('are documented one row each in the WebhookLogEvent table', () => {
    expect(union.length).toBeGreaterThan(10);
    const documented = tableAfter(hooks, '| event | level | when |').map((row) => row[0]?.replaceAll('`', ''));
    expect(documented).toEqual(union);
  });

  it('are each emitted by the handler (the type refuses any other)', () => {
    const source = readdirSync(new URL('../../src/handler/', import.meta.url))
      .filter((name) => name !== 'hooks.ts')
      .map((name) => read(`src/handler/${name}`))
      .join('\n');
    for (const event of union) expect(source, event).toContain(`'${event}'`);
  });
});
