// The default deduplication key of a delivery. Internal: the delivery
// flow and the inbox use it, merchants pass their own `dedupKey`.
import type { PaymentWebhook } from '../webhook/types.js';

/**
 * The state part of a delivery's key: the normalised status, except for
 * `UNKNOWN`, which carries the raw status (trimmed and upper-cased, so that
 * letter case alone makes no new update). Two unknown statuses of one payment (`PAID`,
 * then `EXPIRED`) are two updates and must both reach the merchant; a
 * redelivery of either is still a duplicate. A known status keeps its
 * normalised name, so the keys stores already hold still match.
 *
 * @example
 * ```ts
 * import { deliveryState } from './key.js';
 * import { parseWebhook } from '../webhook/parse.js';
 *
 * deliveryState(parseWebhook({ id: 'a_DEBIT', transactionId: 'a', status: 'paid', amount: 1 })); // 'UNKNOWN:PAID'
 * ```
 */
export function deliveryState(webhook: Pick<PaymentWebhook, 'status' | 'rawStatus'>): string {
  return webhook.status === 'UNKNOWN' ? `UNKNOWN:${webhook.rawStatus.trim().toUpperCase()}` : webhook.status;
}

/**
 * One key per delivery *and state*: a PROCESSING then SUCCEEDED (or FAILED
 * then SUCCEEDED) delivery of one transaction are two updates, and the second
 * must reach onPayment. The `_DEBIT` / `_CREDIT` suffix of `id` keeps the
 * two operations of one transaction apart; {@link deliveryState} keeps two unknown
 * statuses apart.
 *
 * @example
 * ```ts
 * import { defaultDedupKey } from './key.js';
 * import { parseWebhook } from '../webhook/parse.js';
 *
 * defaultDedupKey(parseWebhook({ id: 'a_DEBIT', transactionId: 'a', status: 'success', amount: 1 })); // 'a_DEBIT:SUCCEEDED'
 * ```
 */
export function defaultDedupKey(webhook: Pick<PaymentWebhook, 'id' | 'status' | 'rawStatus'>): string {
  return `${webhook.id}:${deliveryState(webhook)}`;
}
