import { inSeconds, resolveClock, SERVICE_WINDOW_MS, type FreshnessOptions } from './lib/clock.js';

export type { FreshnessOptions } from './lib/clock.js';

/**
 * The service's window: a delivery may be at most 5 minutes old, or 5
 * minutes ahead of the receiver's clock.
 *
 * @example
 * ```ts
 * import { DEFAULT_TOLERANCE_MS } from 'payhook';
 *
 * console.log(DEFAULT_TOLERANCE_MS / 60_000); // 5
 * ```
 */
export const DEFAULT_TOLERANCE_MS: number = SERVICE_WINDOW_MS;

/**
 * The outcome of {@link checkTimestamp}: the parsed timestamp and its distance
 * from `now`, or why it is not fresh.
 *
 * @example
 * ```ts
 * import type { TimestampCheck } from 'payhook';
 *
 * function describe(check: TimestampCheck): string {
 *   return check.ok ? `fresh (${check.skewMs} ms)` : check.code;
 * }
 * ```
 */
export type TimestampCheck =
  | { ok: true; timestamp: number; skewMs: number }
  | { ok: false; code: 'MISSING_TIMESTAMP' | 'MALFORMED_TIMESTAMP'; message: string }
  | { ok: false; code: 'TIMESTAMP_OUT_OF_WINDOW'; message: string; timestamp: number; skewMs: number };

const DIGITS = /^[0-9]+$/;

/**
 * Checks `x-api-timestamp` (UNIX time in milliseconds, plain decimal digits)
 * against the window and says why it fails: `MISSING_TIMESTAMP`,
 * `MALFORMED_TIMESTAMP` (signs, spaces, decimals, exponents, anything but
 * digits) or `TIMESTAMP_OUT_OF_WINDOW` (too old or too far ahead; the
 * boundary itself is inside).
 *
 * @throws PayhookError `INVALID_ARGUMENT` for a `now` or `toleranceMs`
 * that is not a usable number.
 *
 * @example
 * ```ts
 * import { checkTimestamp } from 'payhook';
 *
 * const check = checkTimestamp('1763712000000', { now: 1763712100000 });
 * if (check.ok) console.log(`${check.skewMs} ms old`); // 100000 ms old
 * ```
 */
export function checkTimestamp(
  timestamp: string | number | null | undefined,
  options?: FreshnessOptions,
): TimestampCheck {
  const { now, toleranceMs } = resolveClock(options);
  if (timestamp === undefined || timestamp === null || timestamp === '') {
    return { ok: false, code: 'MISSING_TIMESTAMP', message: 'The x-api-timestamp header is missing.' };
  }
  // Digits as text (any length), or a whole, non-negative, safe number.
  const value =
    typeof timestamp === 'string'
      ? DIGITS.test(timestamp)
        ? Number(timestamp)
        : -1
      : Number.isSafeInteger(timestamp) && timestamp >= 0
        ? timestamp
        : -1;
  if (value < 0) {
    return {
      ok: false,
      code: 'MALFORMED_TIMESTAMP',
      message: 'The x-api-timestamp is not UNIX time in milliseconds (decimal digits).',
    };
  }
  const skewMs = now - value;
  if (Math.abs(skewMs) <= toleranceMs) return { ok: true, timestamp: value, skewMs };
  return {
    ok: false,
    code: 'TIMESTAMP_OUT_OF_WINDOW',
    message:
      `The delivery is ${skewMs > 0 ? `${skewMs} ms old` : `${-skewMs} ms in the future`}; the window is ${toleranceMs} ms.` +
      (inSeconds(value, now, toleranceMs)
        ? ' It looks like seconds, not milliseconds.'
        : " If all deliveries are refused so, check this server's clock."),
    timestamp: value,
    skewMs,
  };
}

/**
 * Whether `x-api-timestamp` lies within the window: `|now − timestamp| ≤
 * toleranceMs`, boundary included, in both directions. Anything but plain
 * decimal digits (or a non-negative safe integer) is never fresh. Use
 * {@link checkTimestamp} to learn why a timestamp is not fresh.
 *
 * @example
 * ```ts
 * import { isTimestampFresh } from 'payhook';
 *
 * isTimestampFresh('1763712000000', { now: 1763712300000 }); // true: exactly 5 minutes
 * isTimestampFresh('1763712000000', { now: 1763712300001 }); // false
 * isTimestampFresh('1763712000', { now: 1763712300000 });    // false: seconds, not ms
 * ```
 */
export function isTimestampFresh(timestamp: string | number | null | undefined, options?: FreshnessOptions): boolean {
  return checkTimestamp(timestamp, options).ok;
}
