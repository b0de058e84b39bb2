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
 * const options: OrderReferenceOptions = { fieldIds: ['orderId'] };
 * ```
 */
export interface OrderReferenceOptions {
  /**
   * The `fieldId`s of your own `additionalData` entries that hold the order
   * reference, tried in order after `paymentId`.
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
 * the service puts the data you passed when creating the payment:
 *
 * 1. `fields.paymentId`: the PaymentId you passed to `POST /v1/payment`;
 * 2. `fields[fieldId]` for each of `options.fieldIds`: your own `additionalData` entries;
 * 3. `data.paymentId`, then `data[fieldId]` for each of `options.fieldIds`:
 *    WEB integrations carry the data you passed in `data`.
 *
 * The first that is non-empty text, or a whole number up to
 * `Number.MAX_SAFE_INTEGER` either way (given as its text, `17` → `'17'`),
 * wins. A larger number is skipped: JSON parsing rounded it, so its text
 * could name another order (send such ids as text). `undefined` when none
 * is: park the delivery as an unknown order. `transactionId` is never used: if your orders are keyed on
 * the transaction id you created the payment with, read `webhook.transactionId`.
 *
 * @param webhook - The verified webhook (its `fields` and `data` are read).
 * @param options - `fieldIds`: your own field ids to try after `paymentId`.
 * @returns The order reference as text, or `undefined`.
 * @throws PayhookError `INVALID_ARGUMENT` when there is no webhook (a failed result's `webhook`), or
 *   `fieldIds` is not an array of text.
 *
 * @example
 * ```ts
 * import { orderReference, park, type PaymentWebhook } from 'payhook';
 *
 * declare const orders: Map<string, { amountMinor: number }>;
 *
 * function onPayment(webhook: PaymentWebhook) {
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
  const fieldIds = options?.fieldIds ?? [];
  // A string would be spread into its letters, each looked up as a field id (`'orderId'` → `o`, `r`, …).
  if (!Array.isArray(fieldIds) || !fieldIds.every((fieldId) => typeof fieldId === 'string')) {
    throw misuse("orderReference: fieldIds must be an array of field ids (['orderId'], not 'orderId').");
  }
  const keys = ['paymentId', ...fieldIds];
  for (const group of [webhook.fields, webhook.data]) {
    if (typeof group !== 'object' || group === null) continue;
    for (const key of keys) {
      const reference = asReference(ownValue(group, key));
      if (reference !== undefined) return reference;
    }
  }
  return undefined;
}
