/**
 * Amounts as exact integers of minor units (hundredths), so that an order's
 * amount and a webhook's compare without floating-point error.
 *
 * @module
 */
import { misuse } from '../lib/misuse.js';
import type { PaymentWebhookBase } from '../webhook/types.js';

/** The largest amount, in major units, that {@link toMinorUnits} accepts (either sign). */
const MAX_AMOUNT = 1e12;
/** Decimal text: sign, integer digits, fraction digits. */
const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * Converts an amount with up to two decimals into an exact integer of
 * hundredths (`99.9` → `9990`, `'100'` → `10000`), for any amount from
 * −10^12 to 10^12.
 *
 * - A number counts by its value: `0.29` → `29` (although `0.29 * 100` is
 *   `28.999999999999996` in floating point), `1e2` → `10000`, `-0` → `0`.
 *   `1.005` has three decimals and throws.
 * - Text must be plain decimal notation: digits, an optional leading `-`, an
 *   optional `.` and fraction (`'100'`, `'99.90'`, `'0007.5'`). Zeros after
 *   the second decimal do not count (`'1.500'` → `150`); any other third
 *   decimal throws. No exponent (`'1e2'`), `+`, spaces or separators.
 * - A negative amount keeps its sign (`-1.5` → `-150`). The service refuses
 *   amounts that are not above 0, so a negative one is worth a look.
 *
 * @param amount - A number or numeric text, in major units (`webhook.amount`, an order's price).
 * @returns The amount in hundredths: a safe integer, never `-0`.
 * @throws PayhookError `INVALID_ARGUMENT` for anything else: more than two
 *   decimals, beyond 10^12, `NaN`, infinities, other text, other types.
 *
 * @example
 * ```ts
 * import { toMinorUnits } from 'payhook';
 *
 * toMinorUnits(0.29);     // 29
 * toMinorUnits('99.90');  // 9990
 * toMinorUnits(1500.5);   // 150050
 * // toMinorUnits(1.005) throws PayhookError INVALID_ARGUMENT: three decimals
 * ```
 */
export function toMinorUnits(amount: number | string): number {
  if (typeof amount === 'number') {
    if (!Number.isFinite(amount) || Math.abs(amount) > MAX_AMOUNT) {
      throw misuse(`toMinorUnits: the amount ${amount} is not a finite number between -10^12 and 10^12.`);
    }
    // The nearest integer of hundredths; it is the amount only if dividing it
    // back gives the same double (1.005 * 100 rounds to 100, and 1 !== 1.005).
    const minor = Math.round(amount * 100);
    if (minor / 100 !== amount) throw misuse(`toMinorUnits: the amount ${amount} has more than two decimals.`);
    return minor === 0 ? 0 : minor;
  }
  if (typeof amount === 'string') {
    const match = DECIMAL.exec(amount);
    if (match === null) {
      throw misuse('toMinorUnits: the amount text is not plain decimal notation (digits, optional - and fraction).');
    }
    const [, sign, whole = '', fraction = ''] = match;
    const cents = fraction.replace(/0+$/, '');
    if (cents.length > 2) throw misuse(`toMinorUnits: the amount ${amount} has more than two decimals.`);
    const units = Number(whole);
    // Number() of up to 13 digits is exact; longer text is out of range anyway.
    if (units > MAX_AMOUNT || (units === MAX_AMOUNT && cents !== '')) {
      throw misuse(`toMinorUnits: the amount ${amount} is beyond 10^12.`);
    }
    const minor = units * 100 + Number(cents.padEnd(2, '0'));
    return sign === '-' && minor !== 0 ? -minor : minor;
  }
  throw misuse(`toMinorUnits needs a number or numeric text, got ${amount === null ? 'null' : typeof amount}.`);
}

/**
 * Whether a webhook's amount is exactly the amount an order expects, in
 * hundredths. The webhook's amount is read in decimal, without
 * floating-point arithmetic; one with more than two decimals, or beyond 10^12, matches
 * nothing. It never throws for what a delivery carries, so it is safe in
 * `onPayment` (where a throw means "retry"): on a mismatch, park the delivery.
 *
 * @param webhook - The verified webhook (its `amount` and `rawAmount` are read).
 * @param expectedMinor - What the order expects, in hundredths (see {@link toMinorUnits}).
 * @returns `true` when the two are equal.
 * @throws PayhookError `INVALID_ARGUMENT` when `expectedMinor` is not a safe integer, or there is no webhook (a mistake in your code).
 *
 * @example
 * ```ts
 * import { amountMatches, park, toMinorUnits, type PaymentWebhook } from 'payhook';
 *
 * declare const order: { price: string };
 * declare const webhook: PaymentWebhook;
 *
 * if (!amountMatches(webhook, toMinorUnits(order.price))) {
 *   park('amount differs', { expected: order.price, received: webhook.rawAmount });
 * }
 * ```
 */
export function amountMatches(
  webhook: Pick<PaymentWebhookBase, 'amount'> & { readonly rawAmount?: number | string },
  expectedMinor: number,
): boolean {
  if (typeof webhook !== 'object' || webhook === null) {
    throw misuse('amountMatches needs the webhook (result.webhook is there only when result.ok).');
  }
  if (!Number.isSafeInteger(expectedMinor)) {
    throw misuse('amountMatches needs the expected amount in hundredths, as a safe integer (see toMinorUnits).');
  }
  const received = typeof webhook.rawAmount === 'string' ? webhook.rawAmount : webhook.amount;
  try {
    return toMinorUnits(received) === expectedMinor;
  } catch {
    return false;
  }
}
