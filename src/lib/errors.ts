/**
 * Every error payhook throws or reports carries one of these codes. Switch on
 * `code`, never on the message: messages may be reworded, codes are stable.
 *
 * | code | raised when |
 * |---|---|
 * | `MISSING_HOST` | the request has no usable `Host` header (none, one holding `&`, which no host name has, or several naming different hosts), so no canonical string can be built |
 * | `MALFORMED_PATH` | the path holds a `%` escape that `decodeURI` rejects |
 * | `MALFORMED_QUERY` | a query name or value holds a `%` escape that `decodeURI` rejects; or, without `webhookUrl`, the app could read the query otherwise than signed (`??`, an empty name, a name repeated with another value, a name holding `&`, `=` or an escape once decoded) |
 * | `URL_MISMATCH` | the request does not fit the registered `webhookUrl`: its query lacks a registered parameter or gives it another value (with several URLs: none has the request's path and parameters) |
 * | `INVALID_BODY` | the body is not JSON, or is JSON but not an object |
 * | `INVALID_PAYLOAD` | the body is a JSON object but not a webhook of the spec (`error.issues` lists every problem with its path) |
 * | `INVALID_KEY` | a public key cannot be read, or is not an RSA key |
 * | `WEAK_KEY` | an RSA key shorter than 2048 bits, without `allowWeakKeys` |
 * | `MISSING_SIGNATURE` | the `signature` header is absent or empty |
 * | `SIGNATURE_MISMATCH` | no configured key verifies the signature |
 * | `MISSING_TIMESTAMP` | a signed request carries no `x-api-timestamp` |
 * | `MALFORMED_TIMESTAMP` | `x-api-timestamp` is not plain decimal digits |
 * | `TIMESTAMP_OUT_OF_WINDOW` | `x-api-timestamp` is further from now than the tolerance |
 * | `BODY_TOO_LARGE` | the body exceeds the configured maximum size |
 * | `BODY_TIMEOUT` | a handler did not receive the whole body within `bodyTimeoutMs` (answered 408) |
 * | `INVALID_ARGUMENT` | an argument or option given to payhook is of the wrong type or out of range (a misuse, not an outcome) |
 * | `METHOD_NOT_ALLOWED` | a handler received something other than `POST` |
 * | `DELIVERY_IN_PROGRESS` | another worker holds the claim on this delivery |
 * | `STORE_UNAVAILABLE` | the deduplication store could not be reached |
 * | `HANDLER_FAILED` | the merchant's own handler threw or timed out |
 *
 * @example
 * ```ts
 * import type { PayhookErrorCode } from 'payhook';
 *
 * // A failure on your side (your store, your handler) to look into, not a refusal of the request.
 * const onYourSide = (code: PayhookErrorCode): boolean => code === 'STORE_UNAVAILABLE' || code === 'HANDLER_FAILED';
 * ```
 */
export type PayhookErrorCode =
  | 'MISSING_HOST'
  | 'MALFORMED_PATH'
  | 'MALFORMED_QUERY'
  | 'URL_MISMATCH'
  | 'INVALID_BODY'
  | 'INVALID_PAYLOAD'
  | 'INVALID_KEY'
  | 'WEAK_KEY'
  | 'MISSING_SIGNATURE'
  | 'SIGNATURE_MISMATCH'
  | 'MISSING_TIMESTAMP'
  | 'MALFORMED_TIMESTAMP'
  | 'TIMESTAMP_OUT_OF_WINDOW'
  | 'BODY_TOO_LARGE'
  | 'BODY_TIMEOUT'
  | 'INVALID_ARGUMENT'
  | 'METHOD_NOT_ALLOWED'
  | 'DELIVERY_IN_PROGRESS'
  | 'STORE_UNAVAILABLE'
  | 'HANDLER_FAILED';

/**
 * Internal: what a code means to a receiving handler — the HTTP status it
 * answers (500 for a misconfiguration); whether the sender may retry the very
 * same delivery later and have it go through; and, for a 5xx, what the body
 * says in place of the details, which only `exposeErrors` shows.
 */
export type CodeFacts = readonly [status: number, retriable: boolean, wording?: string];

/**
 * Internal: the one table of error codes, a `CodeFacts` row each, one for
 * every code of the union above (its type refuses a missing or extra one).
 * `isPayhookError`, the handlers' statuses and their 5xx wording come from
 * it, so a new code is one name in the union, one line here and one row in
 * the documentation above. The union is written out rather than derived
 * from this table so that the published declarations show its names.
 */
export const ERROR_CODES: { readonly [Code in PayhookErrorCode]: CodeFacts } = {
  MISSING_HOST: [400, false],
  MALFORMED_PATH: [400, false],
  MALFORMED_QUERY: [400, false],
  URL_MISMATCH: [401, false],
  INVALID_BODY: [400, false],
  INVALID_PAYLOAD: [400, false],
  INVALID_KEY: [500, true, 'The webhook handler is misconfigured'],
  WEAK_KEY: [500, true, 'The webhook handler is misconfigured'],
  MISSING_SIGNATURE: [401, false],
  SIGNATURE_MISMATCH: [401, false],
  MISSING_TIMESTAMP: [401, false],
  MALFORMED_TIMESTAMP: [401, false],
  TIMESTAMP_OUT_OF_WINDOW: [401, false],
  BODY_TOO_LARGE: [413, false],
  BODY_TIMEOUT: [408, true],
  INVALID_ARGUMENT: [500, true, 'The webhook handler is misconfigured'],
  METHOD_NOT_ALLOWED: [405, false],
  DELIVERY_IN_PROGRESS: [409, true],
  STORE_UNAVAILABLE: [503, true, 'The deduplication store is unavailable'],
  HANDLER_FAILED: [500, true, 'The webhook handler failed'],
};

/** Internal: what the table says of `code` (its return type checks every row's shape). */
export function codeFacts(code: PayhookErrorCode): CodeFacts {
  return ERROR_CODES[code];
}

/** Internal: the HTTP status a receiving handler answers with `code`. */
export function statusForCode(code: PayhookErrorCode): number {
  return ERROR_CODES[code][0];
}

/**
 * One problem found in a body that is not a webhook of the spec: where it is
 * (`path`, such as `fields.amount`, empty for the body itself) and what is
 * wrong (`message`, such as `expected number, got string`).
 *
 * @example
 * ```ts
 * import type { PayhookIssue } from 'payhook';
 *
 * const issue: PayhookIssue = { path: 'fields.amount', message: 'expected number, got string' };
 * ```
 */
export interface PayhookIssue {
  /** Dotted path of the offending value (`fields.amount`, `service.id`); `''` for the body itself. */
  readonly path: string;
  /** What is wrong there. */
  readonly message: string;
}

/**
 * Options accepted by {@link PayhookError}'s constructor.
 *
 * @example
 * ```ts
 * import { PayhookError, type PayhookErrorOptions } from 'payhook';
 *
 * const options: PayhookErrorOptions = { cause: new Error('connection refused') };
 * throw new PayhookError('STORE_UNAVAILABLE', 'The dedup store is down.', options);
 * ```
 */
export interface PayhookErrorOptions {
  /** The underlying error, kept for debugging (`error.cause`). */
  cause?: unknown;
  /** Every problem found, for errors about a body's content (`INVALID_PAYLOAD`). */
  issues?: readonly PayhookIssue[];
}

/**
 * The one error class payhook throws. Its `code` is stable and documented on
 * {@link PayhookErrorCode}; `cause` keeps the underlying error when there is one.
 *
 * Prefer {@link isPayhookError} over `instanceof`: two copies of the package
 * (an ESM and a CJS one, or two realms) each have their own class.
 *
 * @example
 * ```ts
 * import { buildCanonicalString, isPayhookError } from 'payhook';
 *
 * try {
 *   buildCanonicalString({ method: 'POST', path: '/hook', headers: {}, body: '{}' });
 * } catch (error) {
 *   if (isPayhookError(error) && error.code === 'MISSING_HOST') {
 *     console.log('the proxy dropped the Host header');
 *   }
 * }
 * ```
 */
export class PayhookError extends Error {
  /** The stable, machine-readable code of this error. */
  readonly code: PayhookErrorCode;
  override readonly name = 'PayhookError' as const;
  /**
   * Every problem found, each with its path, when the error is about a body's
   * content (`INVALID_PAYLOAD`, and `INVALID_BODY` from `parseWebhook`).
   */
  readonly issues?: readonly PayhookIssue[];

  constructor(code: PayhookErrorCode, message: string, options?: PayhookErrorOptions) {
    // Error sets `cause` only when the options have one (ES2022).
    super(message, options);
    this.code = code;
    if (options?.issues !== undefined) this.issues = options.issues;
  }
}

/**
 * Whether `value` is a payhook error, optionally with one of the given codes.
 * It looks at `name` and `code`, so it also recognises errors thrown by
 * another copy of payhook (dual ESM/CJS installs, iframes, workers).
 *
 * @example
 * ```ts
 * import { isPayhookError, verifySignature } from 'payhook';
 *
 * try {
 *   await verifySignature('post\n/\nhost:x\n', 'c2ln', '-----BEGIN PUBLIC KEY-----');
 * } catch (error) {
 *   if (isPayhookError(error, 'INVALID_KEY', 'WEAK_KEY')) console.error(error.code);
 * }
 * ```
 */
export function isPayhookError<C extends PayhookErrorCode>(
  value: unknown,
  ...codes: C[]
): value is PayhookError & { code: C } {
  if (typeof value !== 'object' || value === null) return false;
  const { name, code } = value as { name?: unknown; code?: unknown };
  if (name !== 'PayhookError' || typeof code !== 'string' || !Object.hasOwn(ERROR_CODES, code)) return false;
  return codes.length === 0 || (codes as string[]).includes(code);
}
