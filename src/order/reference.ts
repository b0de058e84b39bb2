/**
 * Finding the merchant's order a payment webhook belongs to.
 *
 * @module
 */
import { misuse } from '../lib/misuse.js';
import { ownValue } from '../lib/object.js';
import type { PaymentWebhookBase } from '../webhook/types.js';

/**
 * Options of {@link orderReference}.
 *
 * @example
 * ```ts
 * import type { OrderReferenceOptions } from 'payhook';
 *
 * const byOrderId: OrderReferenceOptions = { fieldIds: ['orderId'] }; // paymentId is not read
 * const either: OrderReferenceOptions = { fieldIds: ['orderId', 'paymentId'] };
 * ```
 */
export interface OrderReferenceOptions {
  /**
   * The field ids that hold the order reference, tried in order, each in
   * `fields` then in `data`: your own `additionalData` entries, and
   * `'paymentId'` where you want the PaymentId read too. Only these are
   * tried: `paymentId` is not read unless listed. At least one.
   * @defaultValue `['paymentId']`
   */
  readonly fieldIds?: readonly string[];
}

/**
 * A reference as text: non-empty text as given, a safe integer as its digits; nothing else. A larger number lost
 * digits when the JSON was parsed (`9007199254740993` reads as `9007199254740992`), and a fraction is no order id,
 * so neither is written back as text that could name another order.
 */
function asReference(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  return Number.isSafeInteger(value) ? String(value) : undefined;
}

/**
 * The merchant's reference of the order a webhook pays for, looked up where
 * the service puts the data you passed when creating the payment: for each
 * field id, `fields[id]`, then `data[id]` (WEB integrations carry the data
 * you passed in `data`). The field ids are `options.fieldIds` in their
 * order, or, without them, `paymentId` alone: the PaymentId you passed to
 * `POST /v1/payment`. So with `fieldIds: ['orderId']` a delivery's
 * `paymentId` is never read, and cannot name another of your orders; list
 * it (`['orderId', 'paymentId']`) to fall back on it.
 *
 * The first that is non-empty text, or a whole number up to
 * `Number.MAX_SAFE_INTEGER` either way (given as its text, `17` → `'17'`),
 * wins. A larger number is skipped: JSON parsing rounded it, so its text
 * could name another order (send such ids as text). `undefined` when none
 * is: park the delivery as an unknown order. `transactionId` is never used: if your orders are keyed on
 * the transaction id you created the payment with, read `webhook.transactionId`.
 *
 * @param webhook - The verified webhook (its `fields` and `data` are read).
 * @param options - `fieldIds`: the field ids to try, in order (default `['paymentId']`).
 * @returns The order reference as text, or `undefined`.
 * @throws PayhookError `INVALID_ARGUMENT` when there is no webhook (a failed result's `webhook`), or
 *   `fieldIds` is not a non-empty array of text.
 *
 * @example
 * ```ts
 * import { orderReference, park, type PaymentWebhook } from 'payhook';
 *
 * declare const orders: Map<string, { amountMinor: number }>;
 *
 * function onPayment(webhook: PaymentWebhook) {
 *   // Your orders keyed on your own orderId field: only it is read (add 'paymentId' to fall back on the PaymentId).
 *   const reference = orderReference(webhook, { fieldIds: ['orderId'] });
 *   const order = reference === undefined ? undefined : orders.get(reference);
 *   if (order === undefined) return park('unknown order', { reference });
 *   // … apply the status to the order
 * }
 * ```
 */
export function orderReference(
  webhook: Pick<PaymentWebhookBase, 'fields' | 'data'>,
  options?: OrderReferenceOptions,
): string | undefined {
  if (typeof webhook !== 'object' || webhook === null) {
    throw misuse('orderReference needs the webhook (result.webhook is there only when result.ok).');
  }
  const fieldIds = options?.fieldIds ?? ['paymentId'];
  // A string would be read as its letters, each looked up as a field id (`'orderId'` → `o`, `r`, …); an empty list
  // would find no order, ever.
  if (!Array.isArray(fieldIds) || fieldIds.length === 0 || !fieldIds.every((fieldId) => typeof fieldId === 'string')) {
    throw misuse("orderReference: fieldIds must be a non-empty array of field ids (['orderId'], not 'orderId').");
  }
  for (const key of fieldIds) {
    for (const group of [webhook.fields, webhook.data]) {
      if (typeof group !== 'object' || group === null) continue;
      const reference = asReference(ownValue(group, key));
      if (reference !== undefined) return reference;
    }
  }
  return undefined;
}
