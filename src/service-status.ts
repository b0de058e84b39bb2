/**
 * The payment service's status codes, as the service documents them: what each means, whether a
 * call that got it is worth repeating, and what to do about it; plus a parser
 * for the service's error bodies.
 *
 * @module
 */
import { parseJsonBody } from './lib/json-body.js';
import { ownValue } from './lib/object.js';

/**
 * The status codes the service documents.
 *
 * @example
 * ```ts
 * import type { ServiceStatusCode } from 'payhook';
 *
 * const duplicate: ServiceStatusCode = 409;
 * ```
 */
export type ServiceStatusCode = 200 | 201 | 400 | 401 | 402 | 403 | 404 | 409 | 500 | 502 | 503;

/**
 * One row of the service's status-code table.
 *
 * @example
 * ```ts
 * import { serviceStatus, type ServiceStatusInfo } from 'payhook';
 *
 * const info: ServiceStatusInfo | undefined = serviceStatus(402);
 * info?.retriable;  // false
 * info?.condition;  // 'after topping up the account'
 * ```
 */
export interface ServiceStatusInfo {
  /** The status code. */
  readonly statusCode: number;
  /** What it means, as the table says. */
  readonly meaning: string;
  /**
   * The table's "Yes": repeating the same call may succeed as is. `false` for
   * every "No", and for 402, which only succeeds once `condition` is met.
   */
  readonly retriable: boolean;
  /** What to do: the table's guidance, as an instruction. */
  readonly advice: string;
  /**
   * When a retry makes sense despite `retriable`, or how long to wait: 402
   * `'after topping up the account'`, 502 and 503 `'later'`.
   */
  readonly condition?: string;
  /** The example `errorMessage` values (or shapes) the table gives; empty when it says "none". */
  readonly exampleMessages: readonly string[];
}

/**
 * Spec §7, one row per code: code, meaning, retriable (the table's "Yes"),
 * advice, condition (or ''), example messages joined by `|`.
 */
const TABLE: ReadonlyArray<
  readonly [code: number, meaning: string, retriable: boolean, advice: string, condition: string, examples: string]
> = [
  [
    200,
    'Success',
    true,
    'Nothing to fix: read the payment status (SUCCEEDED, FAILED or PROCESSING) from the answer.',
    '',
    'Payment status SUCCEEDED, FAILED or PROCESSING',
  ],
  [
    201,
    'Accepted for asynchronous processing',
    false,
    'Do not repeat the call: it was accepted, and the outcome arrives later (by webhook).',
    '',
    '',
  ],
  [
    400,
    'Bad request',
    false,
    'Fix the request before sending it again.',
    '',
    'Transaction ID is required|a valid service is required|fields must be an object including all required fields|invalid amount (amount must be greater than 0)|user is disabled|source and destination accounts must be different',
  ],
  [
    401,
    'Authorization error',
    false,
    'Check the signature, the key and the timestamp of the request.',
    '',
    'Invalid or missing Authorization header|invalid client ID',
  ],
  [
    402,
    'Insufficient funds',
    false,
    'Top up the account first, then retry.',
    'after topping up the account',
    'Insufficient funds',
  ],
  [
    403,
    'No permission',
    false,
    'Check that the client may access this account or payment; do not retry as is.',
    '',
    'User has no permission to access this account|client has no permission to access this payment',
  ],
  [
    404,
    'Resource not found',
    false,
    'Check the identifiers in the request; do not retry as is.',
    '',
    'User does not exist',
  ],
  [
    409,
    'Duplicate transaction',
    false,
    'Use a new transactionId, or request the status of the existing payment.',
    '',
    'Transaction with the same ID already exists',
  ],
  [500, 'Internal server error', true, 'Retry, with a backoff.', '', 'An unexpected error has occurred'],
  [
    502,
    'Service provider unavailable',
    true,
    'Retry later.',
    'later',
    'Service "<service_name>" is temporarily unavailable',
  ],
  [503, 'Server overloaded or under maintenance', true, 'Retry later.', 'later', ''],
];

/**
 * Every status code the service documents, in the table's order.
 *
 * @example
 * ```ts
 * import { SERVICE_STATUS_CODES, serviceStatus } from 'payhook';
 *
 * // The table marks 200 "retriable" too: keep the errors.
 * const retryOn = SERVICE_STATUS_CODES.filter((code) => code >= 400 && serviceStatus(code).retriable); // [500, 502, 503]
 * ```
 */
export const SERVICE_STATUS_CODES: readonly ServiceStatusCode[] = /* @__PURE__ */ Object.freeze([
  200, 201, 400, 401, 402, 403, 404, 409, 500, 502, 503,
] as const);

/**
 * Looks a status code of the payment service up in the service's table:
 * meaning, whether it is `retriable` (the table's "Yes"; 402 is `false`, with
 * `condition: 'after topping up the account'`), the advice, and the example
 * messages. `undefined` for a code the table does not list. Each call returns
 * a fresh object.
 *
 * @param statusCode - The code the service answered with.
 * @returns The table's row, or `undefined`.
 *
 * @example
 * ```ts
 * import { serviceStatus } from 'payhook';
 *
 * serviceStatus(409)?.advice;     // 'Use a new transactionId, or request the status of the existing payment.'
 * serviceStatus(503)?.retriable;  // true
 * serviceStatus(418);             // undefined
 * ```
 */
export function serviceStatus(statusCode: ServiceStatusCode): ServiceStatusInfo;
export function serviceStatus(statusCode: number): ServiceStatusInfo | undefined;
export function serviceStatus(statusCode: number): ServiceStatusInfo | undefined {
  const row = TABLE.find((entry) => entry[0] === statusCode);
  if (row === undefined) return undefined;
  const [, meaning, retriable, advice, condition, examples] = row;
  const exampleMessages = examples === '' ? [] : examples.split('|');
  return condition === ''
    ? { statusCode, meaning, retriable, advice, exampleMessages }
    : { statusCode, meaning, retriable, advice, condition, exampleMessages };
}

/**
 * An error body of the payment service, read by {@link parseServiceError}.
 * Branch on `statusCode` (or on `known` first, to narrow it to the codes of
 * the service's table and get their `status`).
 *
 * @example
 * ```ts
 * import type { ServiceError } from 'payhook';
 *
 * function shouldRetry(error: ServiceError): boolean {
 *   return error.retriable;
 * }
 * ```
 */
export type ServiceError = KnownServiceError | UnknownServiceError;

/**
 * A service error whose code the service documents.
 *
 * @example
 * ```ts
 * import type { KnownServiceError } from 'payhook';
 *
 * const advise = (error: KnownServiceError): string => error.status.advice;
 * ```
 */
export interface KnownServiceError {
  /** The code is in the service's table. */
  readonly known: true;
  /** The status code: one of the table's error codes (a success code is not an error). */
  readonly statusCode: Exclude<ServiceStatusCode, 200 | 201>;
  /** The `errorMessage` (or `ErrorMessage`) as sent; `''` when there is none. */
  readonly message: string;
  /** The table's `retriable`. */
  readonly retriable: boolean;
  /** The table's row for this code. */
  readonly status: ServiceStatusInfo;
}

/**
 * A service error whose code the service does not document.
 *
 * @example
 * ```ts
 * import type { UnknownServiceError } from 'payhook';
 *
 * const describe = (error: UnknownServiceError): string => `HTTP-like code ${error.statusCode}`;
 * ```
 */
export interface UnknownServiceError {
  /** The code is not in the service's table. */
  readonly known: false;
  /** The status code as sent. */
  readonly statusCode: number;
  /** The `errorMessage` (or `ErrorMessage`) as sent; `''` when there is none. */
  readonly message: string;
  /**
   * Not in the table, so payhook follows HTTP's convention: `true` for 429
   * and for 500–599 (a passing outage), `false` otherwise.
   */
  readonly retriable: boolean;
  /** No row: `undefined`. */
  readonly status?: undefined;
}

/** Plain decimal digits, at most 3 of them (status codes are 3-digit). */
const CODE_TEXT = /^\d{1,3}$/;

function readCode(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 && value <= 999 ? value : undefined;
  if (typeof value === 'string' && CODE_TEXT.test(value)) return Number(value);
  return undefined;
}

/**
 * Reads an error body of the payment service: `{ statusCode, errorMessage }`,
 * or the capitalised `{ StatusCode, ErrorMessage }` some responses carry
 * (a readable lower-case field wins when both are present). Takes the raw
 * text or bytes, or an already parsed object. The code may be a number or one
 * to three digits in a string (`"007"` reads as 7).
 *
 * It never throws: anything that is not such a body (not JSON, not an
 * object, no readable status code) gives `undefined`, so check for it first.
 * A success code (200 with the payment's status, 201 accepted, any other
 * 2xx) is not an error and gives `undefined` too, so `retriable` always
 * means "this call failed, and repeating it may succeed".
 *
 * @param body - The response body: JSON text, UTF-8 bytes, or a parsed value.
 * @returns The typed error, or `undefined` when the body is not one.
 *
 * @example
 * ```ts
 * import { parseServiceError } from 'payhook';
 *
 * const error = parseServiceError('{"StatusCode":409,"ErrorMessage":"Transaction with the same ID already exists"}');
 * if (error === undefined) {
 *   // not an error body of the service
 * } else if (error.statusCode === 409) {
 *   // query the existing payment instead of creating it again
 * } else if (error.retriable) {
 *   // schedule a retry
 * }
 * ```
 */
export function parseServiceError(body: unknown): ServiceError | undefined {
  let record: Record<string, unknown> | null;
  try {
    record = parseJsonBody(body as string | object);
  } catch {
    return undefined;
  }
  if (record === null) return undefined;
  let statusCode: number | undefined;
  let rawMessage: unknown;
  try {
    statusCode = readCode(ownValue(record, 'statusCode')) ?? readCode(ownValue(record, 'StatusCode'));
    const lower = ownValue(record, 'errorMessage');
    rawMessage = typeof lower === 'string' ? lower : ownValue(record, 'ErrorMessage');
  } catch {
    return undefined; // a caller-built object with throwing getters
  }
  // A success (200 with the payment's status, 201 accepted) is an answer, not an error: the table's "Yes" for 200
  // must not read as "try again", which a caller branching on `retriable` would do.
  if (statusCode === undefined || (statusCode >= 200 && statusCode <= 299)) return undefined;
  const message = typeof rawMessage === 'string' ? rawMessage : '';
  const status = serviceStatus(statusCode);
  if (status !== undefined) {
    return {
      known: true,
      statusCode: statusCode as KnownServiceError['statusCode'],
      message,
      retriable: status.retriable,
      status,
    };
  }
  const retriable = statusCode === 429 || (statusCode >= 500 && statusCode <= 599);
  return { known: false, statusCode, message, retriable };
}
