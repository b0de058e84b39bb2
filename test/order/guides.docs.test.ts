// The order code of the guides (README.md's and docs/recipes.md's `onPayment`, docs/orders.md's `applyPayment`: the
// blocks marked `doc-test: run-by` this file), run as written against an order table whose empty columns are `null`,
// as SQL drivers return them, and one whose are `undefined`.
//
// Each block is transpiled as it stands, with two additions: its declared `orders` (and `deadLetters`) bound to the
// table here, and its handler function exported. The blocks import payhook by name: needs `dist/` (npm run build).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { PaymentStatus, PaymentWebhook } from '../../src/index.js';
import { parseWebhook } from '../../src/webhook/parse.js';
import { createTestWebhook } from '../../src/testing/index.js';

const root = new URL('../../', import.meta.url);
const scratch = new URL('.tmp/', root);
const MARKER = /<!-- doc-test: run-by test\/order\/guides\.docs\.test\.ts -->\n\n```ts\n([\s\S]*?)```/g;

function block(file: string): string {
  const blocks = [...readFileSync(new URL(file, root), 'utf8').matchAll(MARKER)].map((match) => match[1]!);
  if (blocks.length !== 1)
    throw new Error(`expected one block of ${file} marked run-by this test, found ${blocks.length}`);
  return blocks[0]!;
}

interface Row {
  id: string;
  amountMinor: number;
  paymentStatus?: PaymentStatus | null | undefined;
  paidBy?: string | null | undefined;
}

/** The guides' `orders`: rows as a SQL driver returns them (or with absent columns), updated only if still `from`. */
function table(empty: null | undefined) {
  const rows = new Map<string, Row>();
  return {
    rows,
    add(id: string): void {
      rows.set(
        id,
        empty === null ? { id, amountMinor: 10_000, paymentStatus: null, paidBy: null } : { id, amountMinor: 10_000 },
      );
    },
    find: (reference: string) => Promise.resolve(rows.has(reference) ? { ...rows.get(reference)! } : undefined),
    setStatus(id: string, from: PaymentStatus | null | undefined, to: PaymentStatus, paidBy?: string) {
      const row = rows.get(id);
      // WHERE payment_status IS NOT DISTINCT FROM $from
      if (row === undefined || (row.paymentStatus ?? null) !== (from ?? null)) return Promise.resolve(false);
      row.paymentStatus = to;
      row.paidBy = paidBy ?? empty;
      return Promise.resolve(true);
    },
  };
}
type Table = ReturnType<typeof table>;
type Apply = (webhook: PaymentWebhook) => unknown;

let loaded = 0;
/** Runs the block of `file` as a module whose `orders` is `orders`; its handler function. */
async function load(file: string, name: string, orders: unknown): Promise<Apply> {
  const code = `const { orders } = globalThis.payhookGuide;\n${block(file)}\nexport { ${name} as guideHandler };\n`;
  const { outputText } = ts.transpileModule(code, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  const path = fileURLToPath(new URL(`guide-${process.pid}-${loaded++}.mjs`, scratch));
  writeFileSync(path, outputText);
  (globalThis as { payhookGuide?: unknown }).payhookGuide = { orders };
  const module = (await import(pathToFileURL(path).href)) as { guideHandler: Apply };
  return module.guideHandler;
}

/** A delivery of `order` (named in paymentId and orderId: docs/orders.md keys its orders on orderId). */
function delivery(order: string, transactionId: string, status: string): PaymentWebhook {
  return parseWebhook(
    createTestWebhook({
      transactionId,
      id: `${transactionId}_DEBIT`,
      status,
      amount: 100,
      fields: { paymentId: order, orderId: order },
    }),
  );
}

/** What applying `webhook` came to: the parked reason, or 'applied'. */
async function outcome(apply: Apply, webhook: PaymentWebhook): Promise<string> {
  const result = await apply(webhook);
  return typeof result === 'object' && result !== null && 'park' in result ? String(result.park) : 'applied';
}

beforeAll(() => {
  mkdirSync(scratch, { recursive: true });
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** The guides' handlers, each over a table of its own; docs/orders.md's keeps its orders in a Map. */
const GUIDES = [
  { file: 'README.md', name: 'onPayment' },
  { file: 'docs/recipes.md', name: 'onPayment' },
  { file: 'docs/orders.md', name: 'applyPayment' },
] as const;

describe.each(GUIDES)('the order code of $file', ({ file, name }) => {
  describe.each([
    ['null', null],
    ['undefined', undefined],
  ] as const)('with empty columns %s', (_, empty) => {
    let orders: Table;
    let apply: Apply;
    beforeAll(async () => {
      orders = table(empty);
      apply = await load(file, name, file === 'docs/orders.md' ? orders.rows : orders);
    });

    it('marks an unpaid order paid by its first SUCCEEDED, once, and parks another payment as paid twice', async () => {
      vi.spyOn(console, 'info').mockImplementation(() => {});
      orders.add('o1');
      expect(await outcome(apply, delivery('o1', 't1', 'SUCCEEDED'))).toBe('applied');
      expect(orders.rows.get('o1')).toMatchObject({ paymentStatus: 'SUCCEEDED', paidBy: 't1' });
      expect(await outcome(apply, delivery('o1', 't1', 'SUCCEEDED'))).toBe('applied');
      expect(await outcome(apply, delivery('o1', 't2', 'SUCCEEDED'))).toBe('paid twice');
      expect(orders.rows.get('o1')).toMatchObject({ paymentStatus: 'SUCCEEDED', paidBy: 't1' });
    });

    it('parks a FAILED of the paying transaction after its SUCCEEDED, the order left paid', async () => {
      orders.add('o3');
      expect(await outcome(apply, delivery('o3', 't3', 'SUCCEEDED'))).toBe('applied');
      expect(await outcome(apply, delivery('o3', 't3', 'FAILED'))).toBe('FAILED after SUCCEEDED');
      expect(orders.rows.get('o3')).toMatchObject({ paymentStatus: 'SUCCEEDED', paidBy: 't3' });
      // Another transaction's FAILED is an earlier try of the payer's: nothing to review.
      expect(await outcome(apply, delivery('o3', 't3x', 'FAILED'))).toBe('applied');
    });

    it('lets a second transaction pay an order whose first one FAILED', async () => {
      vi.spyOn(console, 'info').mockImplementation(() => {});
      orders.add('o2');
      expect(await outcome(apply, delivery('o2', 't2a', 'FAILED'))).toBe('applied');
      expect(orders.rows.get('o2')?.paymentStatus).toBe('FAILED');
      expect(await outcome(apply, delivery('o2', 't2b', 'SUCCEEDED'))).toBe('applied');
      expect(orders.rows.get('o2')).toMatchObject({ paymentStatus: 'SUCCEEDED', paidBy: 't2b' });
    });
  });
});
