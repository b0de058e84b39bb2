import { misuse } from './misuse.js';

/**
 * Options for the timestamp window.
 *
 * @example
 * ```ts
 * import type { FreshnessOptions } from 'payhook';
 *
 * const options: FreshnessOptions = { now: Date.now(), toleranceMs: 5 * 60_000 };
 * ```
 */
export interface FreshnessOptions {
  /**
   * The receiver's current time, in milliseconds or as a `Date`. Inject it in
   * tests, or from a trusted clock.
   * @defaultValue `Date.now()` at the time of the call
   */
  now?: number | Date;
  /**
   * How far `x-api-timestamp` may lie from `now`, in either direction,
   * boundary included.
   * @defaultValue 300 000 (5 minutes, the service's window)
   */
  toleranceMs?: number;
}

/**
 * The service's window, 5 minutes; public as `DEFAULT_TOLERANCE_MS` (freshness.ts).
 *
 * @example
 * ```ts
 * import { SERVICE_WINDOW_MS } from './clock.js';
 *
 * SERVICE_WINDOW_MS / 60_000; // 5
 * ```
 */
export const SERVICE_WINDOW_MS = 300_000;

/**
 * The longest delay one `setTimeout` keeps (2³¹ − 1 ms, about 24.8 days): a
 * longer one fires after 1 ms in every runtime.
 *
 * @example
 * ```ts
 * import { MAX_TIMER_MS } from './clock.js';
 *
 * setTimeout(() => {}, Math.min(86_400_000 * 30, MAX_TIMER_MS));
 * ```
 */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * {@link FreshnessOptions} as the internals take them: `now` may also be a
 * clock function, read at each resolution (a verifier prepared once).
 */
export interface ClockOptions {
  readonly now?: number | Date | (() => number | Date) | undefined;
  readonly toleranceMs?: number | undefined;
}

/**
 * A `Date`'s milliseconds, a `Date` from another realm (an iframe's, a vm
 * context's: it fails `instanceof Date`) included; any other value as given,
 * for the caller to check.
 */
export function dateToMillis(value: unknown): unknown {
  return Object.prototype.toString.call(value) === '[object Date]' ? Date.prototype.getTime.call(value) : value;
}

/**
 * `now` (read now when it is a function) and `toleranceMs` resolved and validated: `now` defaults to
 * `Date.now()` at the time of the call, the tolerance to the service's window.
 * Throws `INVALID_ARGUMENT` for anything that is not a usable number.
 *
 * @example
 * ```ts
 * import { resolveClock } from './clock.js';
 *
 * resolveClock({ now: new Date(1763712000000) }); // { now: 1763712000000, toleranceMs: 300000 }
 * ```
 */
export function resolveClock(options: ClockOptions | undefined): { now: number; toleranceMs: number } {
  const rawNow: unknown = typeof options?.now === 'function' ? options.now() : options?.now;
  const now = rawNow === undefined ? Date.now() : dateToMillis(rawNow);
  const toleranceMs: unknown = options?.toleranceMs ?? SERVICE_WINDOW_MS;
  if (!Number.isFinite(now) || !Number.isFinite(toleranceMs) || (toleranceMs as number) < 0) {
    throw misuse(
      'The "now" option must be milliseconds or a valid Date, and "toleranceMs" finite milliseconds, 0 or more.',
    );
  }
  return { now: now as number, toleranceMs: toleranceMs as number };
}

/**
 * Whether a timestamp outside the window would be inside it read as seconds: a sender's common mistake (the service
 * sends milliseconds), named as such rather than as a delivery 55 years old or a clock to fix.
 */
export function inSeconds(timestamp: number, now: number, toleranceMs: number): boolean {
  return Math.abs(now - timestamp * 1000) <= toleranceMs;
}
