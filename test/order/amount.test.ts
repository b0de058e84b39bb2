import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPayhookError } from '../../src/errors.js';
import { amountMatches, toMinorUnits } from '../../src/order/amount.js';
import { parseWebhook } from '../../src/webhook/parse.js';

/** Every amount with up to two decimals up to 10^12, as its exact number of hundredths. */
const MAX_MINOR = 100_000_000_000_000; // 10^12 major units
const minor = fc.integer({ min: -MAX_MINOR, max: MAX_MINOR });
/** Biased towards the ends of the range and the small amounts people pay. */
const anyMinor = fc.oneof(
  minor,
  fc.integer({ min: 0, max: 1_000_000 }),
  fc.integer({ min: MAX_MINOR - 1000, max: MAX_MINOR }),
);

/** Hundredths as decimal text: '1234.05', '-0.07', '12'. */
function asText(hundredths: number, decimals: 0 | 1 | 2): string {
  const sign = hundredths < 0 ? '-' : '';
  const abs = Math.abs(hundredths);
  const whole = Math.floor(abs / 100);
  const cents = String(abs % 100).padStart(2, '0');
  if (decimals === 0) return `${sign}${whole}`;
  return decimals === 1 ? `${sign}${whole}.${cents.slice(0, 1)}` : `${sign}${whole}.${cents}`;
}

function throwsInvalidArgument(run: () => unknown): void {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(isPayhookError(caught, 'INVALID_ARGUMENT'), String(caught)).toBe(true);
}

describe('toMinorUnits', () => {
  it('is exact for every amount with up to two decimals up to 10^12, as a number', () => {
    fc.assert(
      fc.property(anyMinor, (hundredths) => {
        // hundredths / 100 is the double a JSON body or a price column gives for that decimal.
        const expected = hundredths === 0 ? 0 : hundredths;
        expect(Object.is(toMinorUnits(hundredths / 100), expected)).toBe(true);
        expect(toMinorUnits(Number(asText(hundredths, 2)))).toBe(hundredths);
      }),
      { numRuns: 20_000 },
    );
  });

  it('is exact for every amount with up to two decimals up to 10^12, as text', () => {
    fc.assert(
      fc.property(anyMinor, fc.constantFrom(0, 1, 2), fc.nat({ max: 3 }), (hundredths, decimals, zeros) => {
        const rounded =
          decimals === 2
            ? hundredths
            : decimals === 1
              ? hundredths - (hundredths % 10)
              : hundredths - (hundredths % 100);
        const text = asText(rounded, decimals) + (decimals > 0 ? '0'.repeat(zeros) : '');
        expect(toMinorUnits(text)).toBe(rounded === 0 ? 0 : rounded);
      }),
      { numRuns: 20_000 },
    );
  });

  it('agrees with the number and the text of one amount', () => {
    fc.assert(
      fc.property(anyMinor, (hundredths) => {
        expect(toMinorUnits(asText(hundredths, 2))).toBe(toMinorUnits(hundredths / 100));
      }),
      { numRuns: 5_000 },
    );
  });

  it('refuses every amount with a third decimal, as a number or text', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -MAX_MINOR * 10, max: MAX_MINOR * 10 }).filter((thousandths) => thousandths % 10 !== 0),
        (thousandths) => {
          const sign = thousandths < 0 ? '-' : '';
          const abs = Math.abs(thousandths);
          const text = `${sign}${Math.floor(abs / 1000)}.${String(abs % 1000).padStart(3, '0')}`;
          throwsInvalidArgument(() => toMinorUnits(text));
          throwsInvalidArgument(() => toMinorUnits(Number(text)));
        },
      ),
      { numRuns: 5_000 },
    );
  });

  it.each([
    [0.29, 29],
    [0.57, 57],
    [1.1, 110],
    [99.99, 9999],
    [1500.5, 150050],
    [1e2, 10000],
    [-0, 0],
    [-1.5, -150],
    [1e12, 100_000_000_000_000],
    [-1e12, -100_000_000_000_000],
    [999_999_999_999.99, 99_999_999_999_999],
    ['100', 10000],
    ['99.90', 9990],
    ['0.29', 29],
    ['1.500', 150],
    ['0007.5', 750],
    ['-0.00', 0],
    ['1000000000000', 100_000_000_000_000],
    ['1000000000000.00', 100_000_000_000_000],
  ] as Array<[number | string, number]>)('%j → %d', (amount, expected) => {
    expect(Object.is(toMinorUnits(amount), expected)).toBe(true);
  });

  it.each([
    ['three decimals', 1.005],
    ['three decimals as text', '1.005'],
    ['a tiny fraction', 0.001],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['beyond 10^12', 1e12 + 0.01],
    ['far beyond', 1e15],
    ['beyond 10^12 as text', '1000000000000.01'],
    ['a long number as text', '1'.repeat(400)],
    ['exponent text', '1e2'],
    ['surrounding whitespace', ' 100'],
    ['trailing whitespace', '100\n'],
    ['a plus sign', '+5'],
    ['no digits before the point', '.5'],
    ['no digits after the point', '5.'],
    ['a thousands separator', '1,000'],
    ['a decimal comma', '1,5'],
    ['empty text', ''],
    ['hex text', '0x10'],
    ['null', null],
    ['undefined', undefined],
    ['a boolean', true],
    ['a bigint', 10n],
    ['an object', { valueOf: () => 1 }],
  ])('throws INVALID_ARGUMENT for %s', (_name, amount) => {
    throwsInvalidArgument(() => toMinorUnits(amount as number));
  });
});

describe('amountMatches', () => {
  const webhook = (amount: unknown) =>
    parseWebhook({ id: 'a_DEBIT', transactionId: 'a', status: 'SUCCEEDED', amount, fields: {} });

  it('compares in hundredths, without floating-point error', () => {
    expect(amountMatches(webhook(0.29), 29)).toBe(true);
    expect(amountMatches(webhook(0.3), 30)).toBe(true);
    expect(amountMatches(webhook(99.99), 9999)).toBe(true);
    expect(amountMatches(webhook(99.99), 9998)).toBe(false);
    expect(amountMatches(webhook(100), 100)).toBe(false);
  });

  it('reads numeric text exactly ("100" as a copy of the service documentation sends it)', () => {
    const text = (rawAmount: string) => ({ amount: Number(rawAmount), rawAmount });
    expect(amountMatches(text('100'), 10000)).toBe(true);
    expect(amountMatches(text('99.90'), 9990)).toBe(true);
    // Number('100.0000000000000001') is 100, but the text says more than two decimals.
    expect(amountMatches(text('100.0000000000000001'), 10000)).toBe(false);
  });

  it('matches nothing, and never throws, for an amount the delivery carries with a third decimal or out of range', () => {
    expect(amountMatches(webhook(1.005), 100)).toBe(false);
    expect(amountMatches(webhook(1.005), 101)).toBe(false);
    expect(amountMatches(webhook(1e15), 2 ** 52)).toBe(false);
  });

  it('agrees with toMinorUnits over every amount with up to two decimals', () => {
    fc.assert(
      fc.property(anyMinor, fc.integer({ min: -2, max: 2 }), (hundredths, offset) => {
        expect(amountMatches({ amount: hundredths / 100 }, hundredths + offset)).toBe(offset === 0);
      }),
      { numRuns: 5_000 },
    );
  });

  it.each([1.5, Number.NaN, '100', 2 ** 53, null])('throws INVALID_ARGUMENT for the expected amount %j', (expected) => {
    throwsInvalidArgument(() => amountMatches(webhook(1), expected as number));
  });

  it.each([undefined, null])('throws INVALID_ARGUMENT for no webhook (%j: a failed result has none)', (none) => {
    throwsInvalidArgument(() => amountMatches(none as never, 100));
  });
});
