/**
 * parseWebhook and safeParseWebhook: from a body (text, bytes or an already
 * parsed object) to a typed {@link PaymentWebhook}.
 *
 * @module
 */
import { isPayhookError, PayhookError } from '../lib/errors.js';
import { parseJsonBody } from '../lib/json-body.js';
import type { ParseWebhookOptions, PaymentWebhook } from './types.js';
import { validateWebhookObject, type WebhookParseError } from './validate.js';

// verifyWebhook validates the object it already parsed, through this name.
export { validateWebhookObject } from './validate.js';
export type { WebhookParseError, WebhookValidation } from './validate.js';

/**
 * A webhook body as `parseWebhook` accepts it: the raw JSON text or bytes, or
 * the object a body parser already produced.
 *
 * @example
 * ```ts
 * import type { WebhookBody } from 'payhook';
 *
 * const body: WebhookBody = '{"id":"t_DEBIT"}';
 * ```
 */
export type WebhookBody = string | Uint8Array | ArrayBuffer | object;

/**
 * The result of {@link safeParseWebhook}: the webhook, or the error that
 * `parseWebhook` would have thrown.
 *
 * @example
 * ```ts
 * import { safeParseWebhook, type SafeParseWebhookResult } from 'payhook';
 *
 * const result: SafeParseWebhookResult = safeParseWebhook('{}');
 * if (!result.success) console.log(result.error.issues.map((issue) => issue.path));
 * ```
 */
export type SafeParseWebhookResult =
  | { readonly success: true; readonly webhook: PaymentWebhook }
  | { readonly success: false; readonly error: WebhookParseError };

function bodyError(message: string, cause: unknown): WebhookParseError {
  return new PayhookError('INVALID_BODY', message, {
    cause,
    issues: [{ path: '', message }],
  }) as WebhookParseError;
}

/**
 * Parses and validates a webhook body without throwing. Same rules as
 * {@link parseWebhook}; on failure, `error.code` is `INVALID_BODY` (not JSON,
 * not UTF-8, empty, not an object, nested more than 64 levels deep, or more
 * than 1,000 top-level members or 4,096 characters of top-level names) or
 * `INVALID_PAYLOAD` (an object, but not
 * a webhook of the spec), and `error.issues` lists every problem with its path.
 * It never throws, whatever it is given.
 *
 * @param body - Raw JSON text, UTF-8 bytes, or an already parsed object.
 * @param options - `strict: true` refuses every deviation from the documented shape.
 * @returns `{ success: true, webhook }` or `{ success: false, error }`.
 *
 * @example
 * ```ts
 * import { safeParseWebhook } from 'payhook';
 *
 * const result = safeParseWebhook('{"id":"t1_DEBIT","transactionId":"t1","status":"success","amount":"ten"}');
 * if (!result.success) {
 *   console.log(result.error.code);    // 'INVALID_PAYLOAD'
 *   console.log(result.error.issues);  // [{ path: 'amount', message: 'expected number, got string' }]
 * }
 * ```
 */
export function safeParseWebhook(body: WebhookBody, options?: ParseWebhookOptions): SafeParseWebhookResult {
  let value: Record<string, unknown> | null;
  try {
    value = parseJsonBody(body);
  } catch (error) {
    const message = isPayhookError(error) ? error.message : 'The body cannot be read.';
    return { success: false, error: bodyError(message, error) };
  }
  if (value === null) return { success: false, error: bodyError('The body is empty.', undefined) };
  try {
    return validateWebhookObject(value, options);
  } catch (cause) {
    // Only a caller-built object can get here (a throwing getter or proxy).
    const message = 'The body object cannot be read.';
    const error = new PayhookError('INVALID_PAYLOAD', message, {
      cause,
      issues: [{ path: '', message }],
    }) as WebhookParseError;
    return { success: false, error };
  }
}

/**
 * Parses and validates a webhook body (as the service documents it) into a {@link PaymentWebhook}:
 * a union on the normalised `status`, with `rawStatus`, the `operation` read
 * from the id's `_DEBIT` / `_CREDIT` suffix, typed `fields`, each optional
 * group typed when present, unknown top-level keys in `extra`, and the
 * original object in `raw`.
 *
 * Lenient by default: the service's signed word is not refused for its
 * shape. Only these refuse a body: it is not an object, or past the bounds
 * every body is held to (nested more than 64 levels deep, more than 1,000
 * top-level members or 4,096 characters of top-level names); `id`,
 * `transactionId` or `status` is missing or not a string; `amount` is missing
 * or not a number (text there is refused, as the service's conformance vector
 * `signed-amount-string` says); `fields`
 * is present but not an object. Everything else is accepted and each
 * departure from the documented shape noted in `webhook.deviations`: numeric
 * text in `fields.amount` is read as its number (`raw` keeps the text), a merchant field of any
 * JSON scalar is kept as given, `transactionDate` may be absent (a
 * delivery whose payment is not final may come without it), a missing `fields` reads as
 * `{}`, and a value of another shape than the spec's is left out of its typed
 * place (`raw` keeps it). Unknown top-level keys go to `extra`.
 *
 * `strict: true` refuses every such deviation: `id` and `transactionId`
 * non-empty, `amount` and `fields.amount` numbers, every other `fields`
 * value text, `fields`, `transactionDate` and `requestDate` present, each
 * optional group of the spec's shape. Only this checks the payload: it does
 * not verify a signature — use `verifyWebhook` for bodies from the network.
 *
 * @param body - Raw JSON text, UTF-8 bytes, or an already parsed object.
 * @param options - `strict: true` refuses every deviation from the documented shape.
 * @returns The typed webhook.
 * @throws PayhookError `INVALID_BODY` (not JSON, not an object, past the
 *   bounds on depth and top-level members) or
 *   `INVALID_PAYLOAD` (every problem in the message and in `error.issues`).
 *
 * @example
 * ```ts
 * import { parseWebhook } from 'payhook';
 *
 * const webhook = parseWebhook('{"id":"t1_DEBIT","transactionId":"t1","status":"success","amount":100,"fields":{"paymentId":"order-17"},"transactionDate":1763712345000}');
 * webhook.status;            // 'SUCCEEDED'
 * webhook.rawStatus;         // 'success'
 * webhook.operation;         // 'DEBIT'
 * webhook.fields.paymentId;  // 'order-17'
 *
 * const pending = parseWebhook({ id: 't2_DEBIT', transactionId: 't2', status: 'PENDING', amount: 100, fields: { amount: '100' } });
 * pending.fields.amount;     // 100
 * pending.deviations;        // fields.amount (numeric text), transactionDate (absent)
 * ```
 */
export function parseWebhook(body: WebhookBody, options?: ParseWebhookOptions): PaymentWebhook {
  const result = safeParseWebhook(body, options);
  if (!result.success) throw result.error;
  return result.webhook;
}
