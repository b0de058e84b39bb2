/**
 * The service's retry schedule (docs/CONTRACT.md §5 says how it is read), as pure
 * functions: how long before each retry, when each retry comes relative to
 * the first failed delivery, and at what absolute times.
 *
 * **The reading.** The spec says "first 5 attempts, each 30 seconds apart",
 * then "delay doubles each attempt, starting at 60 seconds, capped at 24
 * hours", then "one attempt per day", without saying whether the first
 * delivery counts among the five. payhook reads it as: the first delivery is
 * not a retry; retries 1 to 5 each come 30 s after the failed attempt before
 * them; retry 6 comes 60 s after retry 5, and from there the delay doubles
 * (retry 7: 120 s, …, retry 16: 61 440 s, the spec's step 10); from retry 17
 * on, the 122 880 s the doubling would give is capped to 86 400 s (24 h), one
 * retry a day without end (the spec names no maximum number of attempts).
 *
 * **What the offsets mean.** A delay runs from the moment the previous attempt
 * failed (an error answer, or the service giving up waiting). The offsets
 * below add up delays only, so they are the *earliest* a retry can arrive
 * after the first failure; each attempt's own duration comes on top.
 *
 * | retry | delay | offset from the first failure |
 * |---|---|---|
 * | 1 … 5 | 30 s | 30 s … 2 min 30 s |
 * | 6 | 60 s | 3 min 30 s |
 * | 7 | 120 s | 5 min 30 s |
 * | 16 | 61 440 s (17 h 4 min) | 122 970 s (≈ 34 h 10 min) |
 * | 17 and later | 86 400 s (24 h) | 122 970 s + 24 h per retry after the 16th |
 *
 * @module
 */
import { dateToMillis } from './lib/clock.js';

/** Delay of each of the first 5 retries, in milliseconds. */
const FIRST_PHASE_DELAY_MS = 30_000;
/** How many retries the first phase holds. */
const FIRST_PHASE_RETRIES = 5;
/** Delay of the first retry of the doubling phase (retry 6). */
const DOUBLING_START_MS = 60_000;
/** The cap on a delay: 24 hours. */
const DELAY_CAP_MS = 86_400_000;
/** The last retry whose delay is below the cap (60 s × 2¹⁰ = 61 440 s). */
const LAST_DOUBLED_RETRY = 16;
/** Offset of retry 16 from the first failure: 5 × 30 s + 60 s × (2¹¹ − 1). */
const LAST_DOUBLED_OFFSET_MS =
  FIRST_PHASE_RETRIES * FIRST_PHASE_DELAY_MS +
  DOUBLING_START_MS * (2 ** (LAST_DOUBLED_RETRY - FIRST_PHASE_RETRIES) - 1);
/** The most retries {@link retrySchedule} lists in one call (over 27 years of daily retries). */
const MAX_SCHEDULE_LENGTH = 10_000;
// Past it, a daily retry's offset is no longer an exact integer of milliseconds (about 285,000 years of retries):
// LAST_DOUBLED_RETRY + ⌊(Number.MAX_SAFE_INTEGER − LAST_DOUBLED_OFFSET_MS) / DELAY_CAP_MS⌋, written out so that a
// bundler can drop this module's constants from a merchant's bundle that does not use it (tests pin both ends).
const MAX_RETRY = 104_250_005;
// The range of a Date: a schedule's times stay valid dates.
const MAX_TIME_MS = 8.64e15;

function checkRetry(retry: number, name: string, max = Number.MAX_SAFE_INTEGER): void {
  if (typeof retry !== 'number' || !Number.isInteger(retry) || retry < 1 || retry > max) {
    // Anything but a number by its type: a string '1' printed as 1 would look valid.
    const got = typeof retry === 'number' ? retry : typeof retry;
    throw new RangeError(`${name} must be an integer from 1 to ${max} (retries count from 1), got ${got}.`);
  }
}

/**
 * Milliseconds the service waits, after the attempt before it failed (the
 * first delivery for retry 1, retry `retry − 1` after that), before retry
 * number `retry` (1-based: retry 1 follows the failed first delivery).
 * `retryDelay(1..5)` = 30 000; `retryDelay(6)` = 60 000, doubling up to
 * `retryDelay(16)` = 61 440 000; `retryDelay(n ≥ 17)` = 86 400 000. The
 * spec does not say whether the first delivery counts among its first five
 * attempts; payhook reads it as not a retry (docs/CONTRACT.md §5).
 *
 * The longest delay, 24 hours, is the most that can pass between a delivery
 * your receiver handled (its 200 lost on the way) and the copy that follows
 * it, beside the service's wait for an answer: keep deduplication records longer than that (`retentionMs`, 7 days by
 * default).
 *
 * @param retry - The retry number, an integer ≥ 1.
 * @returns The delay in milliseconds.
 * @throws RangeError for 0, negatives, non-integers, `NaN`, infinities,
 * numbers past `Number.MAX_SAFE_INTEGER` and anything but a number.
 *
 * @example
 * ```ts
 * import { retryDelay } from 'payhook';
 *
 * retryDelay(1);   // 30_000
 * retryDelay(6);   // 60_000
 * retryDelay(16);  // 61_440_000
 * retryDelay(40);  // 86_400_000 (one retry a day)
 * ```
 */
export function retryDelay(retry: number): number {
  checkRetry(retry, 'retry');
  if (retry <= FIRST_PHASE_RETRIES) return FIRST_PHASE_DELAY_MS;
  if (retry > LAST_DOUBLED_RETRY) return DELAY_CAP_MS;
  return DOUBLING_START_MS * 2 ** (retry - FIRST_PHASE_RETRIES - 1);
}

/**
 * Milliseconds from the first failed delivery to retry number `retry`: the
 * sum of the delays of retries 1 to `retry`. This is the earliest that retry
 * can arrive (each attempt's own duration adds to it). Use it to tell how
 * late a redelivery is, or when a failing endpoint's deliveries reach the
 * daily phase (`retryOffset(16)`, 122 970 000 ms, about 34 hours). To size a
 * deduplication record's lifetime, see {@link retryDelay}.
 *
 * @param retry - The retry number, an integer ≥ 1.
 * @returns Milliseconds after the first failure.
 * @throws RangeError for 0, negatives, non-integers, `NaN`, infinities and
 * numbers past 104 250 005 (where offsets stop being exact).
 *
 * @example
 * ```ts
 * import { retryOffset } from 'payhook';
 *
 * retryOffset(5);   // 150_000 (2 min 30 s)
 * retryOffset(16);  // 122_970_000 (≈ 34 h): one retry a day from then on
 * ```
 */
export function retryOffset(retry: number): number {
  checkRetry(retry, 'retry', MAX_RETRY);
  if (retry <= FIRST_PHASE_RETRIES) return retry * FIRST_PHASE_DELAY_MS;
  if (retry <= LAST_DOUBLED_RETRY) {
    return FIRST_PHASE_RETRIES * FIRST_PHASE_DELAY_MS + DOUBLING_START_MS * (2 ** (retry - FIRST_PHASE_RETRIES) - 1);
  }
  return LAST_DOUBLED_OFFSET_MS + (retry - LAST_DOUBLED_RETRY) * DELAY_CAP_MS;
}

/**
 * One retry of a {@link retrySchedule}.
 *
 * @example
 * ```ts
 * import type { ScheduledRetry } from 'payhook';
 *
 * const first: ScheduledRetry = { retry: 1, delayMs: 30_000, offsetMs: 30_000, at: 1_763_712_030_000 };
 * ```
 */
export interface ScheduledRetry {
  /** The retry number, from 1. */
  readonly retry: number;
  /** Milliseconds after the attempt before it ({@link retryDelay}). */
  readonly delayMs: number;
  /** Milliseconds after the first failure ({@link retryOffset}). */
  readonly offsetMs: number;
  /** The earliest absolute time, UNIX milliseconds: first failure + `offsetMs`. */
  readonly at: number;
}

/**
 * The first `count` retries that follow a delivery that failed at
 * `firstFailureAt`, each with its delay, its offset and its earliest absolute
 * time. Times are lower bounds: each attempt's own duration adds to them.
 *
 * @param firstFailureAt - When the first delivery failed: UNIX milliseconds or a `Date`.
 * @param count - How many retries to list: an integer from 0 to 10 000.
 * @returns The retries in order.
 * @throws RangeError for an invalid time (`NaN`, an invalid `Date`, one so
 * far from 1970 that the schedule's times would not be dates) or count.
 *
 * @example
 * ```ts
 * import { retrySchedule } from 'payhook';
 *
 * for (const { retry, at } of retrySchedule(new Date('2025-11-21T08:00:00Z'), 7)) {
 *   console.log(retry, new Date(at).toISOString());
 * }
 * // 1 2025-11-21T08:00:30.000Z … 6 2025-11-21T08:03:30.000Z, 7 2025-11-21T08:05:30.000Z
 * ```
 */
export function retrySchedule(firstFailureAt: number | Date, count: number): ScheduledRetry[] {
  const start = dateToMillis(firstFailureAt);
  if (typeof start !== 'number' || !(Math.abs(start) <= MAX_TIME_MS)) {
    throw new RangeError(`firstFailureAt must be UNIX milliseconds or a valid Date, got ${String(firstFailureAt)}.`);
  }
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 0 || count > MAX_SCHEDULE_LENGTH) {
    throw new RangeError(`count must be an integer from 0 to ${MAX_SCHEDULE_LENGTH}, got ${String(count)}.`);
  }
  if (count > 0 && start + retryOffset(count) > MAX_TIME_MS) {
    throw new RangeError(`The schedule from ${String(firstFailureAt)} runs past the last valid Date.`);
  }
  const schedule: ScheduledRetry[] = [];
  let offsetMs = 0;
  for (let retry = 1; retry <= count; retry++) {
    const delayMs = retryDelay(retry);
    offsetMs += delayMs;
    schedule.push({ retry, delayMs, offsetMs, at: start + offsetMs });
  }
  return schedule;
}
