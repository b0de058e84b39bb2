// The answer the delivery flow returns: a plain, frozen value the adapters
// turn into their platform's response. Internal.
import type { PayhookErrorCode } from '../errors.js';

/** Internal: the JSON body of every answer. */
export interface AnswerBody {
  readonly ok: boolean;
  readonly code?: PayhookErrorCode;
  readonly message?: string;
  readonly duplicate?: boolean;
}

/** Internal: what an adapter sends back, and the bookkeeping to finish after it. */
export interface Answer {
  readonly status: number;
  readonly body: AnswerBody;
  readonly headers: Readonly<Record<string, string>>;
  /** Settles when the post-answer bookkeeping is done (never rejects). */
  readonly after?: Promise<void>;
}

const STATUS: Readonly<Partial<Record<PayhookErrorCode, number>>> = {
  MISSING_SIGNATURE: 401,
  SIGNATURE_MISMATCH: 401,
  MISSING_TIMESTAMP: 401,
  MALFORMED_TIMESTAMP: 401,
  TIMESTAMP_OUT_OF_WINDOW: 401,
  INVALID_BODY: 400,
  INVALID_PAYLOAD: 400,
  MISSING_HOST: 400,
  MALFORMED_PATH: 400,
  MALFORMED_QUERY: 400,
  BODY_TOO_LARGE: 413,
  BODY_TIMEOUT: 408,
  METHOD_NOT_ALLOWED: 405,
  DELIVERY_IN_PROGRESS: 409,
  HANDLER_FAILED: 500,
  STORE_UNAVAILABLE: 503,
};

/** Internal: the HTTP status the handlers answer for a code (500 for configuration errors). */
export function statusForCode(code: PayhookErrorCode): number {
  return STATUS[code] ?? 500;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

/** Internal: an answer, frozen with its parts so nothing changes it once built. */
export function answer(
  status: number,
  body: AnswerBody,
  extra?: Record<string, string>,
  after?: Promise<void>,
): Answer {
  return Object.freeze({
    status,
    body: Object.freeze(body),
    headers: Object.freeze({ ...JSON_HEADERS, ...extra }),
    ...(after === undefined ? {} : { after }),
  });
}

/** Internal: the 200 for a delivery handled now (or before, as a duplicate). */
export function handledAnswer(duplicate: boolean): Answer {
  return answer(200, duplicate ? { ok: true, duplicate: true } : { ok: true });
}
