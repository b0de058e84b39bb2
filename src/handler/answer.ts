// The answer the delivery flow returns: a frozen value the adapters turn
// into their platform's response. Internal.
import type { PayhookErrorCode } from '../lib/errors.js';

/** Internal: the JSON body of every answer. */
export interface AnswerBody {
  readonly ok: boolean;
  readonly code?: PayhookErrorCode;
  readonly message?: string;
  readonly duplicate?: boolean;
  /** Acknowledged without being applied: `onPayment` parked it. */
  readonly parked?: boolean;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

/** Internal: what an adapter sends back, and the bookkeeping to finish after it. */
export class Answer {
  readonly status: number;
  readonly body: AnswerBody;
  readonly headers: Readonly<Record<string, string>>;
  /** Settles when the post-answer bookkeeping is done (never rejects). */
  readonly after: Promise<void> | undefined;

  constructor(status: number, body: AnswerBody, headers: Readonly<Record<string, string>>, after?: Promise<void>) {
    this.status = status;
    this.body = Object.freeze(body);
    this.headers = Object.freeze(headers);
    this.after = after;
    Object.freeze(this);
  }
}

/** Internal: an answer with the JSON headers (and `extra`), frozen with its parts. */
export function answer(
  status: number,
  body: AnswerBody,
  extra?: Record<string, string>,
  after?: Promise<void>,
): Answer {
  return new Answer(status, body, extra === undefined ? JSON_HEADERS : { ...JSON_HEADERS, ...extra }, after);
}

/** Internal: `answer` with `after` too (both awaited, when it has its own). */
export function withAfter(answer: Answer, after: Promise<void> | undefined): Answer {
  if (after === undefined) return answer;
  const both = answer.after === undefined ? after : Promise.all([answer.after, after]).then(() => undefined);
  return new Answer(answer.status, answer.body, answer.headers, both);
}

/** Internal: the 200 for a delivery handled now. */
export const HANDLED: Answer = answer(200, { ok: true });
/** Internal: the 200 for a delivery handled before. */
export const DUPLICATE: Answer = answer(200, { ok: true, duplicate: true });
/** Internal: the 200 for a delivery `onPayment` parked. */
export const PARKED: Answer = answer(200, { ok: true, parked: true });
