// Internal helpers of the deduplication stores. Not re-exported.
import { PayhookError } from '../errors.js';
import { checkDuration } from '../lib/duration.js';

/**
 * A fresh, unguessable claim token: a random UUID (122 random bits), or 128
 * random bits in hex where `crypto.randomUUID` is missing (a browser page
 * outside a secure context). One is made per claimed delivery, and
 * `randomUUID` is the cheaper call: Node serves it from a buffer of random
 * bytes, about 0.2 µs against 3 µs for `getRandomValues`.
 *
 * @example
 * ```ts
 * import { newClaimToken } from './token.js';
 *
 * const token = newClaimToken(); // e.g. '1b4e28ba-2fa1-41d2-883f-0016d3cca427'
 * ```
 */
export function newClaimToken(): string {
  const { crypto } = globalThis;
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  let token = '';
  for (const byte of bytes) token += (byte < 16 ? '0' : '') + byte.toString(16);
  return token;
}

/**
 * A store's `now` option as the store reads it: a clock that answers
 * anything but finite milliseconds (`NaN`, a `Date`) is misuse, refused at
 * each call, never read as a time at which every record has expired (which
 * would let each redelivery through).
 */
export function storeClock(now: unknown): () => number {
  // Read at each call, not `Date.now` itself: a test's fake timers installed after the store was made still count.
  if (now === undefined || now === null) return () => Date.now();
  if (typeof now !== 'function') {
    throw new PayhookError('INVALID_ARGUMENT', 'now must be a function returning milliseconds.');
  }
  const read = now as () => unknown;
  return () => {
    const time = read();
    if (typeof time === 'number' && Number.isFinite(time)) return time;
    const got = time instanceof Date ? 'a Date' : typeof time === 'number' ? String(time) : `a ${typeof time}`;
    throw new PayhookError('INVALID_ARGUMENT', `now must return finite milliseconds (a number), not ${got}.`);
  };
}

/** Checks a store call's arguments; misuse is an `INVALID_ARGUMENT`. */
export function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key === '') {
    throw new PayhookError('INVALID_ARGUMENT', 'A deduplication key must be a non-empty string.');
  }
}

/** The handlers' default `leaseMs`; also how long a store that does not know a claim's lease acts for it. Internal. */
export const DEFAULT_LEASE_MS = 60_000;

/** A lease: a positive number of milliseconds (the store keeps it as a time, not a timer). */
export function checkLease(ms: unknown): asserts ms is number {
  checkDuration('leaseMs', ms, 'time');
}

/** A retention: a positive number of milliseconds; `Infinity` means "no expiry". */
export function checkRetention(ms: unknown): asserts ms is number {
  checkDuration('retentionMs', ms, 'retention');
}

/** Checks a claim token. */
export function checkToken(token: unknown): asserts token is string {
  if (typeof token !== 'string' || token === '') {
    throw new PayhookError('INVALID_ARGUMENT', 'A claim token must be the non-empty string that claim() returned.');
  }
}
