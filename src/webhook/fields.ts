/**
 * What a payment webhook carries besides its top-level payment facts: the
 * merchant's form fields and the service, item and data groups, as the
 * service documents them.
 *
 * @module
 */

/**
 * A value of the `fields` object other than `amount`: the service's documentation says
 * text, but a merchant's `additionalData` value can come back as any JSON
 * scalar (a number, a boolean, `null`), and a lenient parse keeps it as given.
 * With `strict: true` every such value is a `string`.
 *
 * @example
 * ```ts
 * import type { WebhookFieldValue } from 'payhook';
 *
 * const asText = (value: WebhookFieldValue | undefined): string | undefined =>
 *   typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
 * ```
 */
export type WebhookFieldValue = string | number | boolean | null;

/**
 * The known keys of the `fields` object, as the service documents them. Each is optional: the
 * spec does not promise any of them. `amount` is always a number (numeric
 * text is read as its number); the others hold what was sent, as
 * {@link WebhookFieldValue}.
 *
 * @example
 * ```ts
 * import type { KnownWebhookFields } from 'payhook';
 *
 * const fields: KnownWebhookFields = { amount: 100, paymentId: 'order-17' };
 * ```
 */
export interface KnownWebhookFields {
  /**
   * Amount captured on the payment form, as a number. Numeric text (`"100"`)
   * is read as its number; `webhook.raw.fields.amount` keeps the text. Left
   * out when it is neither.
   */
  readonly amount?: number;
  /** The PaymentId you passed to `POST /v1/payment`: usually your order id (see `orderReference`). */
  readonly paymentId?: WebhookFieldValue;
  /** Seen in the signed-body variant: the callback URL the payment was created with. */
  readonly webhook_url?: WebhookFieldValue;
  /** Seen in the signed-body variant: where the payer was sent after paying. */
  readonly success_redirect_url?: WebhookFieldValue;
  /** Seen in the signed-body variant: the merchant's name. */
  readonly name?: WebhookFieldValue;
  /** Seen in the signed-body variant: the QR transaction's id. */
  readonly qrTransactionId?: WebhookFieldValue;
}

/**
 * The `fields` object of a webhook, as the service documents it: the known keys with their
 * types, and one value per `additionalData` entry you passed when creating
 * the payment, under that entry's `fieldId`, as sent (text in the spec; any
 * JSON scalar is kept). Read a field of your own as `webhook.fields.orderId`
 * (typed `WebhookFieldValue | undefined`). An object or array value is left
 * out (`webhook.raw.fields` keeps it, `webhook.deviations` says so).
 *
 * The object has no prototype, so a field id such as `constructor` is plain
 * data: test a key with `Object.hasOwn(fields, 'orderId')`, not
 * `fields.hasOwnProperty(…)`, and log it with `JSON.stringify`, since
 * `String(fields)` and a template literal throw a `TypeError`.
 *
 * @example
 * ```ts
 * import type { WebhookFields } from 'payhook';
 *
 * function orderOf(fields: WebhookFields): string | undefined {
 *   const value = fields.paymentId ?? fields['orderId'];
 *   return typeof value === 'string' ? value : undefined;
 * }
 * ```
 */
export type WebhookFields = KnownWebhookFields & { readonly [fieldId: string]: WebhookFieldValue | undefined };

/**
 * The `service` group: present when card acceptance is enabled for the
 * merchant. `id` is `VISA` for the card network, or a generic service id.
 *
 * @example
 * ```ts
 * import type { WebhookService } from 'payhook';
 *
 * const isCard = (service: WebhookService): boolean => service.id === 'VISA';
 * ```
 */
export interface WebhookService {
  /** The service identifier (`VISA` for card acceptance). */
  readonly id: string;
}

/**
 * The `item` group of the extended variant: the generated item's id.
 *
 * @example
 * ```ts
 * import type { WebhookItem } from 'payhook';
 *
 * const item: WebhookItem = { id: '8487187e-d42c-45d7-8753-639d6a78d2b3' };
 * ```
 */
export interface WebhookItem {
  /** The generated item id. */
  readonly id: string;
}

/**
 * The `data` group, sent only for WEB integrations: the data the merchant
 * passed. The keys the spec lists are typed (and checked when present); any
 * other key (your field ids) is kept as received. Like `fields`, an object
 * without a prototype: `Object.hasOwn` and `JSON.stringify`, not
 * `hasOwnProperty` or `String()`.
 *
 * @example
 * ```ts
 * import type { WebhookData } from 'payhook';
 *
 * const describe = (data: WebhookData): string => data.description ?? '(no description)';
 * ```
 */
export interface WebhookData {
  /** The amount the merchant passed. */
  readonly amount?: number;
  /** The merchant account id. */
  readonly accountId?: string;
  /** The payment description. */
  readonly description?: string;
  /** The callback URL the merchant passed. */
  readonly webhookUrl?: string;
  /** The merchant's name in English. */
  readonly name_en?: string;
  /** The merchant's own field ids, as received. */
  readonly [key: string]: unknown;
}
