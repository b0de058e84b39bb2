/**
 * Moving an order's payment state only forward, whatever order the
 * deliveries of one payment arrive in.
 *
 * @module
 */
import { misuse } from '../lib/misuse.js';
import type { PaymentStatus } from '../status.js';

/**
 * Each status's rank: an order takes a status only above the one it has.
 * UNKNOWN ranks nowhere (it is never applied).
 */
const RANK: ReadonlyMap<PaymentStatus, number> = /* @__PURE__ */ new Map<PaymentStatus, number>([
  ['PENDING', 0],
  ['PROCESSING', 1],
  ['FAILED', 2],
  ['CANCELED', 3],
  ['SUCCEEDED', 4],
]);

const STATUSES = "'SUCCEEDED', 'FAILED', 'CANCELED', 'PROCESSING', 'PENDING' or 'UNKNOWN'";

/**
 * Whether an order whose last applied status is `current` takes the status
 * of a new delivery. True exactly when `incoming` is not `UNKNOWN` and ranks
 * above `current` in PENDING < PROCESSING < FAILED < CANCELED < SUCCEEDED;
 * `undefined` or `null` (no status applied yet) and `UNKNOWN` rank below all.
 *
 * So `SUCCEEDED` is never left, a late `PROCESSING` never undoes a final
 * status, `FAILED` then `SUCCEEDED` ends paid (the payer tried again: this
 * function sees statuses only, so a `SUCCEEDED` of the very transaction that
 * `FAILED` ends paid too; keep the transaction ids to tell, as docs/orders.md
 * describes), and
 * folding any sequence of one payment's deliveries — any order, any
 * duplicates — ends in the same state: the highest-ranked status among them.
 * Store the status you applied next to the order and pass it as `current`.
 *
 * A `_CREDIT` delivery (`webhook.operation === 'CREDIT'`) is an operation of
 * its own (the service's document does not say what it moves): never let it
 * move the order's payment state, which follows the `_DEBIT`.
 *
 * @param current - The status last applied to the order (`webhook.status` of then), or `undefined` when none.
 * @param incoming - The new delivery's `webhook.status`.
 * @returns `true` when the order should move to `incoming`.
 * @throws PayhookError `INVALID_ARGUMENT` when either is not a {@link PaymentStatus}
 *   (your own order states, `'paid'`, belong elsewhere).
 *
 * @example
 * ```ts
 * import { shouldApplyStatus } from 'payhook';
 *
 * shouldApplyStatus(undefined, 'PROCESSING');  // true
 * shouldApplyStatus('FAILED', 'SUCCEEDED');     // true: another try paid
 * shouldApplyStatus('SUCCEEDED', 'PROCESSING'); // false: a late delivery
 * shouldApplyStatus('PENDING', 'UNKNOWN');      // false: never applied
 * ```
 */
export function shouldApplyStatus(current: PaymentStatus | undefined | null, incoming: PaymentStatus): boolean {
  const from = current === undefined || current === null || current === 'UNKNOWN' ? -1 : RANK.get(current);
  const to = incoming === 'UNKNOWN' ? -1 : RANK.get(incoming);
  if (from === undefined) throw misuse(`shouldApplyStatus: current must be ${STATUSES}, or undefined.`);
  if (to === undefined) throw misuse(`shouldApplyStatus: incoming must be ${STATUSES}.`);
  return to > from;
}
