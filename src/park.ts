import { misuse } from './lib/misuse.js';

/**
 * What a payment handler returns for a genuine delivery it will not apply:
 * the order is unknown, the amount differs, the payment belongs elsewhere.
 * Such a delivery is acknowledged (so the service stops retrying it), handed
 * to the dead-letter hook with `reason`, and logged; it is never retried.
 * Throwing still means "not now, retry later".
 *
 * @example
 * ```ts
 * import type { Parked } from 'payhook';
 *
 * const parked: Parked = { park: 'unknown order', details: { paymentId: 'ord-1' } };
 * ```
 */
export interface Parked {
  /** Why the delivery is not applied, in a few words: it is logged and handed on. */
  readonly park: string;
  /** Anything that helps whoever reviews parked deliveries later. */
  readonly details?: unknown;
}

/**
 * Parks a delivery: return its result from `onPayment` (or an inbox
 * handler) to acknowledge the delivery without applying it.
 *
 * @param reason - why the delivery is not applied, in a few words
 * @param details - anything that helps whoever reviews it later
 * @throws PayhookError `INVALID_ARGUMENT` for a reason that is not
 *   non-empty text: such a result would read as "applied", and the delivery
 *   would be acknowledged without being handed on for review.
 *
 * @example
 * ```ts
 * import { orderReference, park } from 'payhook';
 * import type { PaymentWebhook } from 'payhook';
 *
 * declare const orders: Map<string, { amountMinor: number }>;
 *
 * function onPayment(webhook: PaymentWebhook) {
 *   const reference = orderReference(webhook);
 *   const order = reference === undefined ? undefined : orders.get(reference);
 *   if (!order) return park('unknown order', { reference, id: webhook.id });
 *   // … apply the payment to the order
 * }
 * ```
 */
export function park(reason: string, details?: unknown): Parked {
  const parked = Object.freeze(details === undefined ? { park: reason } : { park: reason, details });
  if (!isParked(parked)) {
    throw misuse(`park needs a reason, non-empty text (got ${reason === '' ? 'empty text' : typeof reason}).`);
  }
  return parked;
}

/**
 * Whether a handler's result parks the delivery: an object whose `park` is a
 * non-empty string. A result with no `park` (`undefined` included) means
 * "applied"; from `onPayment` or an inbox handler, one whose `park` is there
 * but no reason (`{ park: '' }`), a returned `Error` or an object with
 * `ok: false` (a refused `fetch` Response) fails as if the handler threw.
 *
 * @example
 * ```ts
 * import { isParked, park } from 'payhook';
 *
 * isParked(park('amount differs')); // true
 * isParked(undefined); // false
 * ```
 */
export function isParked(value: unknown): value is Parked {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<Parked>).park === 'string' &&
    (value as Parked).park !== ''
  );
}

/**
 * Internal: a handler's result as it is, but one that cannot mean "applied" is
 * refused `INVALID_ARGUMENT` (so it fails as if the handler threw): an object
 * whose `park` is there and not a reason (`{ park: '' }`), as `park('')` is,
 * and a result that says it failed, a returned `Error` or an object with
 * `ok: false` (a `fetch` Response the other side refused, `{ ok: false }`).
 * Read as "applied", the delivery would be acknowledged without a trace.
 */
export function checkedOutcome<T>(value: T): T {
  if (typeof value === 'object' && value !== null && 'park' in value && !isParked(value)) {
    throw misuse('A parked result needs a reason, non-empty text in `park` (use park(reason)).');
  }
  return notFailed(value, 'The handler', ', or return park(reason)');
}

/**
 * Internal: `value`, unless it says it failed (a returned `Error`, an object with `ok: false` such as a refused
 * `fetch` Response): then `INVALID_ARGUMENT` naming `who`, so it fails as if `who` threw.
 */
export function notFailed<T>(value: T, who: string, or = ''): T {
  if (
    typeof value === 'object' &&
    value !== null &&
    (value instanceof Error || ('ok' in value && value.ok === false))
  ) {
    const what = value instanceof Error ? `an Error (${value.message})` : 'a result with ok: false';
    throw misuse(`${who} resolved ${what}: throw to have the delivery retried${or}`);
  }
  return value;
}

/** Internal: the reason and, when given, the details as JSON (cut at `limit` characters: 200 for a log line). */
export function describeParked(parked: Parked, limit = 200): string {
  if (parked.details === undefined) return parked.park;
  let details: string | undefined;
  try {
    details = JSON.stringify(parked.details);
  } catch {
    // a cycle or a BigInt
  }
  details ??= '(details JSON cannot write)';
  return `${parked.park} ${details.length > limit ? `${details.slice(0, limit)}…` : details}`;
}
