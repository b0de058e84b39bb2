/**
 * The Standard Schema v1 interface (https://standardschema.dev), declared
 * structurally so payhook depends on no schema library. Any framework that
 * accepts a Standard Schema accepts {@link webhookSchema}.
 *
 * @module
 */
import type { PayhookIssue } from '../lib/errors.js';
import { safeParseWebhook, type WebhookBody } from './parse.js';
import type { ParseWebhookOptions, PaymentWebhook } from './types.js';

/**
 * One segment of a Standard Schema issue path.
 *
 * @example
 * ```ts
 * import type { StandardSchemaPathSegment } from 'payhook';
 *
 * const segment: StandardSchemaPathSegment = { key: 'fields' };
 * ```
 */
export interface StandardSchemaPathSegment {
  /** The key of this segment. */
  readonly key: PropertyKey;
}

/**
 * One problem reported by a Standard Schema validator.
 *
 * @example
 * ```ts
 * import type { StandardSchemaIssue } from 'payhook';
 *
 * const issue: StandardSchemaIssue = { message: 'expected number, got string', path: ['fields', 'amount'] };
 * ```
 */
export interface StandardSchemaIssue {
  /** What is wrong. */
  readonly message: string;
  /** Where, as keys from the root; absent for the value itself. */
  readonly path?: ReadonlyArray<PropertyKey | StandardSchemaPathSegment> | undefined;
}

/**
 * The result of a Standard Schema validation: a value or issues.
 *
 * @example
 * ```ts
 * import type { PaymentWebhook, StandardSchemaResult } from 'payhook';
 *
 * const failed: StandardSchemaResult<PaymentWebhook> = { issues: [{ message: 'expected object' }] };
 * ```
 */
export type StandardSchemaResult<Output> =
  { readonly value: Output; readonly issues?: undefined } | { readonly issues: ReadonlyArray<StandardSchemaIssue> };

/**
 * The Standard Schema v1 interface, structurally.
 *
 * @example
 * ```ts
 * import type { StandardSchemaV1 } from 'payhook';
 *
 * function check<T>(schema: StandardSchemaV1<unknown, T>, value: unknown) {
 *   return schema['~standard'].validate(value);
 * }
 * ```
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  /** The Standard Schema properties. */
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

/**
 * The webhook validator as a Standard Schema: its `validate` is synchronous
 * and never throws.
 *
 * @example
 * ```ts
 * import { webhookSchema, type WebhookSchema } from 'payhook';
 *
 * const schema: WebhookSchema = webhookSchema;
 * ```
 */
export interface WebhookSchema extends StandardSchemaV1<WebhookBody, PaymentWebhook> {
  /** The Standard Schema properties; `validate` returns synchronously. */
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: 'payhook';
    readonly validate: (value: unknown) => StandardSchemaResult<PaymentWebhook>;
    readonly types?: { readonly input: WebhookBody; readonly output: PaymentWebhook } | undefined;
  };
}

/** `fields.amount` → ['fields', 'amount']; `fields["a-b"]` → ['fields', 'a-b']. */
function segments(path: string): PropertyKey[] | undefined {
  if (path === '') return undefined;
  const bracket = path.indexOf('[');
  const dot = path.indexOf('.');
  if (bracket !== -1 && (dot === -1 || bracket < dot)) {
    const key = JSON.parse(path.slice(bracket + 1, -1)) as string;
    return bracket === 0 ? [key] : [path.slice(0, bracket), key];
  }
  return dot === -1 ? [path] : [path.slice(0, dot), path.slice(dot + 1)];
}

function toStandardIssue(issue: PayhookIssue): StandardSchemaIssue {
  const path = segments(issue.path);
  return path === undefined ? { message: issue.message } : { message: issue.message, path };
}

/**
 * Builds a Standard Schema v1 validator for payment webhooks, with the same
 * rules and options as `safeParseWebhook`. It accepts a parsed object (what
 * frameworks hand to a schema) as well as raw JSON text or bytes.
 *
 * It checks the shape only: no signature, no timestamp. Never make it the
 * validator of the route deliveries arrive at (a forged body passes it as a
 * `SUCCEEDED` payment); verify requests with `verifyWebhook` or a handler,
 * and use the schema on payloads already verified (an inbox row, a queue
 * message).
 *
 * @param options - `strict: true` refuses every deviation from the documented shape.
 * @returns A Standard Schema whose output is a {@link PaymentWebhook}.
 *
 * @example
 * ```ts
 * import { createWebhookSchema } from 'payhook';
 *
 * const strictSchema = createWebhookSchema({ strict: true });
 * const result = strictSchema['~standard'].validate({ id: 'x' });
 * if (result.issues) console.log(result.issues.map((issue) => issue.path));
 * ```
 */
export function createWebhookSchema(options?: ParseWebhookOptions): WebhookSchema {
  const strict = options?.strict === true;
  return {
    '~standard': {
      version: 1,
      vendor: 'payhook',
      validate(value: unknown): StandardSchemaResult<PaymentWebhook> {
        const result = safeParseWebhook(value as WebhookBody, { strict });
        if (result.success) return { value: result.webhook };
        return { issues: result.error.issues.map(toStandardIssue) };
      },
    },
  };
}

/**
 * The lenient webhook validator as a Standard Schema v1 object (`~standard`
 * with `validate`), for any validator-aware framework or library: for
 * payloads already verified (a queue message, an inbox row). It checks the
 * shape only, no signature and no timestamp, so it is never the validator of
 * the route deliveries arrive at: verify those with `verifyWebhook` or a
 * handler.
 *
 * @example
 * ```ts
 * import { webhookSchema } from 'payhook';
 *
 * const result = webhookSchema['~standard'].validate({ hello: 'world' });
 * console.log(result.issues?.length); // 4: id, transactionId, status and amount are missing
 * ```
 */
export const webhookSchema: WebhookSchema = /* @__PURE__ */ createWebhookSchema();
