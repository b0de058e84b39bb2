/**
 * The payment webhook as payhook hands it to your code (as the service documents it): every field
 * validated, the status normalised, the operation read from the id, the
 * original object kept.
 *
 * @module
 */
import type { PayhookIssue } from '../lib/errors.js';
import type { PaymentStatus } from '../status.js';
import type { WebhookData, WebhookFields, WebhookItem, WebhookService } from './fields.js';

/**
 * The operation the webhook's `id` names by its suffix: `_DEBIT` →
 * `'DEBIT'`, `_CREDIT` → `'CREDIT'`, anything else → `'UNKNOWN'`. The suffix
 * is matched exactly (upper case), as the spec writes it. The service's
 * document does not say which way a credit moves money, so only a `'DEBIT'`
 * pays an order; park the others for review (see docs/orders.md).
 *
 * @example
 * ```ts
 * import type { PaymentOperation } from 'payhook';
 *
 * const paysAnOrder = (operation: PaymentOperation): boolean => operation === 'DEBIT';
 * ```
 */
export type PaymentOperation = 'DEBIT' | 'CREDIT' | 'UNKNOWN';
/**
 * What every payment webhook carries, whatever its status. Use
 * {@link PaymentWebhook}, the union, in your code.
 *
 * @example
 * ```ts
 * import type { PaymentWebhookBase } from 'payhook';
 *
 * const describe = (webhook: PaymentWebhookBase): string => `${webhook.id} ${webhook.rawStatus} ${webhook.amount}`;
 * ```
 */
export interface PaymentWebhookBase {
  /** Operation id; ends with `_DEBIT` for a debit, `_CREDIT` for a credit. */
  readonly id: string;
  /**
   * Payment transaction id, shared by the transaction's `_DEBIT` and
   * `_CREDIT`. Not a deduplication key on its own: a FAILED then SUCCEEDED of
   * one transaction are two updates. The handlers deduplicate on `id` and the
   * normalised status (see the `dedupKey` option).
   */
  readonly transactionId: string;
  /** The status exactly as received (`'success'`, `'Succeeded'`, …). */
  readonly rawStatus: string;
  /** Debit or credit, from the suffix of `id`. */
  readonly operation: PaymentOperation;
  /**
   * The payment amount, a finite number (text here is refused, as the
   * service's conformance vector `signed-amount-string` says). Compare it with an order's amount
   * through `toMinorUnits` / `amountMatches`, never with `===`.
   */
  readonly amount: number;
  /** `amount` exactly as received: a number, as text there is refused (the type admits text, which no parsed webhook holds). */
  readonly rawAmount: number | string;
  /**
   * The payment form's fields and your additional data. An empty object when
   * the body has none (a lenient parse accepts that; see `deviations`).
   */
  readonly fields: WebhookFields;
  /**
   * Transaction processing time, UNIX time in milliseconds. A delivery whose
   * payment is not final yet may come without it; a lenient parse accepts
   * its absence whatever the status, noted in `deviations` (required with
   * `strict: true`).
   */
  readonly transactionDate?: number;
  /**
   * Request creation time, UNIX time in milliseconds. Absent from real
   * deliveries of the signed-body variant; required with `strict: true`.
   */
  readonly requestDate?: number;
  /** Card acceptance service, when card acceptance is enabled. */
  readonly service?: WebhookService;
  /** Extended variant: merchant account id. */
  readonly accountId?: string;
  /** Extended variant: the generated item. */
  readonly item?: WebhookItem;
  /** Extended variant: net amount. */
  readonly net?: number;
  /** Extended variant: receipt number. */
  readonly receiptNumber?: string;
  /** Extended variant: operation type (`DEBIT`). */
  readonly transactionType?: string;
  /** Signed-body variant: client id. */
  readonly clientId?: string;
  /** WEB integrations: the data the merchant passed. */
  readonly data?: WebhookData;
  /**
   * Top-level keys the spec does not list, as received (the service may add
   * some). An object without prototype; empty when there are none.
   */
  readonly extra: Readonly<Record<string, unknown>>;
  /**
   * What a lenient parse accepted that `strict: true` refuses, each with its
   * path: numeric text read as a number, a merchant field that is not text, a
   * missing `fields` or `transactionDate`, an optional group of another shape
   * (left out of its typed place; `raw` keeps it). Empty for a delivery of
   * exactly the spec's shape, and always empty with `strict: true`. Worth a
   * log line; never a reason to refuse a genuine delivery.
   */
  readonly deviations: readonly PayhookIssue[];
  /** The original parsed body, untouched. */
  readonly raw: Readonly<Record<string, unknown>>;
}

/**
 * A webhook whose payment succeeded: fulfil the order.
 *
 * @example
 * ```ts
 * import type { SucceededPaymentWebhook } from 'payhook';
 *
 * const fulfil = (webhook: SucceededPaymentWebhook): string => `paid ${webhook.amount}`;
 * ```
 */
export interface SucceededPaymentWebhook extends PaymentWebhookBase {
  /** The normalised status. */
  readonly status: 'SUCCEEDED';
}

/**
 * A webhook whose payment failed: release the order or ask for another payment.
 *
 * @example
 * ```ts
 * import type { FailedPaymentWebhook } from 'payhook';
 *
 * const note = (webhook: FailedPaymentWebhook): string => `payment ${webhook.id} failed`;
 * ```
 */
export interface FailedPaymentWebhook extends PaymentWebhookBase {
  /** The normalised status. */
  readonly status: 'FAILED';
}

/**
 * A webhook whose payment was cancelled (`CANCELED` or `CANCELLED`): final,
 * and not paid. Release the order as for a failure.
 *
 * @example
 * ```ts
 * import type { CanceledPaymentWebhook } from 'payhook';
 *
 * const note = (webhook: CanceledPaymentWebhook): string => `payment ${webhook.id} cancelled`;
 * ```
 */
export interface CanceledPaymentWebhook extends PaymentWebhookBase {
  /** The normalised status. */
  readonly status: 'CANCELED';
}

/**
 * A webhook whose payment is not final yet.
 *
 * @example
 * ```ts
 * import type { ProcessingPaymentWebhook } from 'payhook';
 *
 * const wait = (webhook: ProcessingPaymentWebhook): string => `still processing ${webhook.id}`;
 * ```
 */
export interface ProcessingPaymentWebhook extends PaymentWebhookBase {
  /** The normalised status. */
  readonly status: 'PROCESSING';
}

/**
 * A webhook whose payment is pending: not final yet, nothing to fulfil.
 *
 * @example
 * ```ts
 * import type { PendingPaymentWebhook } from 'payhook';
 *
 * const wait = (webhook: PendingPaymentWebhook): string => `pending ${webhook.id}`;
 * ```
 */
export interface PendingPaymentWebhook extends PaymentWebhookBase {
  /** The normalised status. */
  readonly status: 'PENDING';
}

/**
 * A webhook whose status payhook does not recognise (see `rawStatus`).
 * (`PAID`, `EXPIRED`, …: no document of the service names them). Never treat
 * it as paid or as final; log it and look the payment up.
 *
 * @example
 * ```ts
 * import type { UnknownStatusPaymentWebhook } from 'payhook';
 *
 * const alert = (webhook: UnknownStatusPaymentWebhook): string => `unexpected status ${webhook.rawStatus}`;
 * ```
 */
export interface UnknownStatusPaymentWebhook extends PaymentWebhookBase {
  /** The normalised status. */
  readonly status: 'UNKNOWN';
}

/**
 * A validated payment webhook: a union discriminated by the normalised
 * `status`, so `switch (webhook.status)` narrows and can be made exhaustive.
 *
 * @example
 * ```ts
 * import type { PaymentWebhook } from 'payhook';
 *
 * function handle(webhook: PaymentWebhook): string {
 *   switch (webhook.status) {
 *     case 'SUCCEEDED':
 *       return `fulfil ${webhook.fields.paymentId}`;
 *     case 'FAILED':
 *     case 'CANCELED':
 *       return `release ${webhook.fields.paymentId}`;
 *     case 'PROCESSING':
 *     case 'PENDING':
 *       return 'wait';
 *     case 'UNKNOWN':
 *       return `investigate ${webhook.rawStatus}`;
 *     default: {
 *       const unreachable: never = webhook;
 *       return unreachable;
 *     }
 *   }
 * }
 * ```
 */
export type PaymentWebhook =
  | SucceededPaymentWebhook
  | FailedPaymentWebhook
  | CanceledPaymentWebhook
  | ProcessingPaymentWebhook
  | PendingPaymentWebhook
  | UnknownStatusPaymentWebhook;

/**
 * The webhook variant with a given status.
 *
 * @example
 * ```ts
 * import type { PaymentWebhookWithStatus } from 'payhook';
 *
 * type Paid = PaymentWebhookWithStatus<'SUCCEEDED'>;
 * ```
 */
export type PaymentWebhookWithStatus<S extends PaymentStatus> = Extract<PaymentWebhook, { readonly status: S }>;

/**
 * Options of `parseWebhook`, `safeParseWebhook` and `createWebhookSchema`.
 *
 * @example
 * ```ts
 * import type { ParseWebhookOptions } from 'payhook';
 *
 * const options: ParseWebhookOptions = { strict: true };
 * ```
 */
export interface ParseWebhookOptions {
  /**
   * Refuse every deviation from the documented shape instead of noting it in
   * `webhook.deviations`: `id` and `transactionId` non-empty, `amount` and
   * `fields.amount` numbers (not numeric text), every other `fields` value
   * text, `fields`, `transactionDate` and `requestDate` present, each optional
   * group of the spec's shape. Off by default: the service's signed word is
   * not refused for its shape (real deliveries of the signed-body variant omit
   * `requestDate`, non-final ones `transactionDate`).
   */
  readonly strict?: boolean;
}
