// Refusing a delivery: one place that reports a non-200 answer to onError
// and the logger with its full message, and decides what the sender may
// read. Internal.
import type { PayhookErrorCode } from '../errors.js';
import { answer, statusForCode, type Answer } from './answer.js';
import type { WebhookLogRecord } from './hooks.js';
import type { WebhookHandlerOptions } from './options.js';
import type { Reporter } from './report.js';

/** What a 5xx body says when the merchant did not opt in to error texts. */
const GENERIC: Readonly<Partial<Record<PayhookErrorCode, string>>> = {
  HANDLER_FAILED: 'The webhook handler failed; the delivery was not processed. Retry later.',
  STORE_UNAVAILABLE: 'The deduplication store is unavailable; the delivery was not processed. Retry later.',
};
const MISCONFIGURED = 'The webhook handler is misconfigured; the delivery was not processed. Retry later.';

/** Internal: what is reported with a refusal, and what the answer carries beside its body. */
export interface Refusal {
  readonly event: string;
  readonly level: WebhookLogRecord['level'];
  readonly key?: string;
  readonly cause?: unknown;
  readonly transactionId?: string;
  readonly started?: number;
  readonly headers?: Record<string, string>;
  readonly after?: Promise<void>;
}

/** Internal: builds a refusal's answer and reports it. */
export type Refuse = (code: PayhookErrorCode, message: string, details: Refusal) => Answer;

/** Internal: the refusal of one handler: reported to `onError` and `reporter`, 5xx texts hidden unless exposed. */
export function createRefuse(
  onError: WebhookHandlerOptions['onError'],
  reporter: Reporter,
  exposeErrors: boolean,
): Refuse {
  const { log, hook } = reporter;
  return (code, message, details) => {
    const status = statusForCode(code);
    const { key, cause, transactionId, started } = details;
    hook(onError, {
      code,
      message,
      status,
      ...(key === undefined ? {} : { key }),
      ...(cause === undefined ? {} : { cause }),
    });
    log({
      level: details.level,
      event: details.event,
      message,
      status,
      code,
      ...(key === undefined ? {} : { key }),
      ...(transactionId === undefined ? {} : { transactionId }),
      ...(started === undefined ? {} : { durationMs: Date.now() - started }),
      ...(cause === undefined ? {} : { error: cause }),
    });
    const shown = status < 500 || exposeErrors ? message : (GENERIC[code] ?? MISCONFIGURED);
    return answer(status, { ok: false, code, message: shown }, details.headers, details.after);
  };
}
