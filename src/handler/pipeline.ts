// The runtime-neutral receiving pipeline behind payhook/web and payhook/node:
// verify → claim → onPayment → complete → answer. Internal: the adapters
// expose it, the main entry does not.
import { createMemoryStore } from '../dedup/memory.js';
import type { ClaimResult, DedupStore } from '../dedup/store.js';
import { isPayhookError, PayhookError, type PayhookErrorCode } from '../errors.js';
import { MAX_TIMER_MS, resolveClock } from '../lib/clock.js';
import {
  prepareVerifier,
  type VerifyWebhookOptions,
  type VerifyWebhookResult,
  type WebhookRequest,
} from '../verify-webhook.js';
import type { PaymentWebhook } from '../webhook/types.js';
import type { PaymentContext, WebhookHandlerOptions, WebhookLogRecord } from './options.js';

/** The JSON body of every answer. */
export interface AnswerBody {
  ok: boolean;
  code?: PayhookErrorCode;
  message?: string;
  duplicate?: boolean;
}

/** What an adapter sends back, and the bookkeeping to finish after it. */
export interface Answer {
  status: number;
  body: AnswerBody;
  headers: Record<string, string>;
  /** Settles when the post-answer bookkeeping is done (never rejects). */
  after?: Promise<void>;
}

export interface Pipeline {
  /** The checks that need no body: the method and a declared length. */
  precheck(method: string | undefined, contentLength: string | null | undefined): Answer | undefined;
  /** The answer for a body that grew past the limit while being read. */
  tooLarge(): Answer;
  /** The answer when the adapter could not read the body at all. */
  unreadable(message: string, cause: unknown): Answer;
  /**
   * The client went away while the body was read: logged (event `aborted`,
   * level `info`), not an error. The answer is for adapters that must return
   * one; nobody is there to receive it.
   */
  aborted(cause: unknown): Answer;
  /** The answer when the body did not arrive within `bodyTimeoutMs` (408; the adapter stops reading). */
  bodyTimeout(): Answer;
  readonly bodyTimeoutMs: number;
  handle(request: WebhookRequest): Promise<Answer>;
  readonly maxBodyBytes: number;
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

/** The HTTP status the handlers answer for a code (500 for configuration errors). */
export function statusForCode(code: PayhookErrorCode): number {
  return STATUS[code] ?? 500;
}

const DAY_MS = 86_400_000;
const DEFAULTS = {
  leaseMs: 60_000,
  retentionMs: 7 * DAY_MS,
  handlerTimeoutMs: 10_000,
  storeTimeoutMs: 5_000,
  bodyTimeoutMs: 10_000,
};
const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

function misuse(message: string): PayhookError {
  return new PayhookError('INVALID_ARGUMENT', message);
}

/** A positive number of milliseconds up to `max`, or `fallback` when absent. */
function duration(name: string, value: unknown, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  const ms = value ?? fallback;
  if (typeof ms !== 'number' || !(ms > 0) || !(ms <= max)) {
    throw misuse(
      `${name} must be a number of milliseconds greater than 0 and at most ${max === MAX_TIMER_MS ? `${MAX_TIMER_MS} (about 24.8 days, the longest timer JavaScript keeps)` : 'Number.MAX_SAFE_INTEGER'}.`,
    );
  }
  return ms;
}

function fail(code: PayhookErrorCode, message: string, extraHeaders?: Record<string, string>): Answer {
  return {
    status: statusForCode(code),
    body: { ok: false, code, message },
    headers: { ...JSON_HEADERS, ...extraHeaders },
  };
}

const TIMED_OUT = Symbol('timed out');

/** Races `promise` against a deadline; the timer is cleared either way. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(resolve, ms, TIMED_OUT);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/**
 * One key per delivery *and state*: a PROCESSING then SUCCEEDED (or FAILED
 * then SUCCEEDED) delivery of one transaction are two updates, and the second
 * must reach onPayment. `status` is the normalised one, so a redelivery whose
 * raw status differs only in letter case is still a duplicate; the `_DEBIT` /
 * `_CREDIT` suffix of `id` keeps a refund apart from its payment.
 */
function defaultDedupKey(webhook: PaymentWebhook): string {
  return `${webhook.id}:${webhook.status}`;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Builds the pipeline; throws `INVALID_ARGUMENT` for misuse, at creation. */
export function createPipeline(options: WebhookHandlerOptions): Pipeline {
  if (typeof options !== 'object' || options === null) {
    throw misuse('The webhook handler needs options: { environment or publicKeys, onPayment }.');
  }
  if (typeof options.onPayment !== 'function') {
    throw misuse(
      'The webhook handler needs onPayment(webhook): your fast, durable hand-off (outbox row, queue message).',
    );
  }
  if (options.webhookUrl === undefined && options.allowAnyHost !== true) {
    throw misuse(
      'The webhook handler needs webhookUrl (the URL you registered with the service, e.g. webhookUrl: "https://shop.example.kg/webhooks/payments"): ' +
        "the service signs for every merchant with one key, so without it a delivery signed for another merchant's endpoint, replayed with that Host, would verify here. " +
        'Only if your infrastructure already guarantees the Host (a proxy that routes only your domain to this app), set allowAnyHost: true instead.',
    );
  }
  // `now` may be a clock read per delivery; the verifier takes a fixed value,
  // so with a function each delivery gets a verifier prepared for its moment
  // (keys come from the process-wide cache, imported once).
  const { now: nowOption, ...fixedOptions } = options;
  const clock = typeof nowOption === 'function' ? nowOption : undefined;
  const verifyOptions: VerifyWebhookOptions = clock === undefined ? (options as VerifyWebhookOptions) : fixedOptions;
  const verifier = prepareVerifier(verifyOptions);
  const leaseMs = duration('leaseMs', options.leaseMs, DEFAULTS.leaseMs);
  // The deadlines are timers; the lease is a time the store keeps.
  const handlerTimeoutMs = duration(
    'handlerTimeoutMs',
    options.handlerTimeoutMs,
    DEFAULTS.handlerTimeoutMs,
    MAX_TIMER_MS,
  );
  const storeTimeoutMs = duration('storeTimeoutMs', options.storeTimeoutMs, DEFAULTS.storeTimeoutMs, MAX_TIMER_MS);
  const bodyTimeoutMs = duration('bodyTimeoutMs', options.bodyTimeoutMs, DEFAULTS.bodyTimeoutMs, MAX_TIMER_MS);
  const retentionMs = options.retentionMs ?? DEFAULTS.retentionMs;
  if (
    typeof retentionMs !== 'number' ||
    !(retentionMs > 0) ||
    (retentionMs > Number.MAX_SAFE_INTEGER && retentionMs !== Infinity)
  ) {
    throw misuse(
      'retentionMs must be a number of milliseconds greater than 0 and at most Number.MAX_SAFE_INTEGER (Infinity to keep forever).',
    );
  }
  // A claim is taken, then onPayment runs, then complete is sent: the lease
  // must outlive the handler and both store calls around it, or a retry could
  // claim the delivery again while the first run is still being recorded.
  if (!(leaseMs > handlerTimeoutMs + 2 * storeTimeoutMs)) {
    throw misuse(
      `leaseMs (${leaseMs}) must be longer than handlerTimeoutMs + 2 × storeTimeoutMs (${handlerTimeoutMs} + 2 × ${storeTimeoutMs}): a claim must outlive its handler and the store calls around it.`,
    );
  }
  const { toleranceMs } = resolveClock(verifyOptions);
  if (retentionMs < 2 * toleranceMs) {
    throw misuse(
      `retentionMs (${retentionMs}) must be at least twice toleranceMs (${toleranceMs}), so a replayed delivery is either remembered or stale.`,
    );
  }
  const store: DedupStore = options.store ?? createMemoryStore();
  for (const method of ['claim', 'complete', 'release'] as const) {
    if (typeof store?.[method] !== 'function')
      throw misuse(`store must be a DedupStore (claim, complete, release); ${method} is missing.`);
  }
  const dedupKey = options.dedupKey ?? defaultDedupKey;
  const { onPayment, onError, onDuplicate, onSignatureMismatch, logger } = options;
  // Start importing the keys now, so the first delivery does not wait and a
  // bad key is logged at start-up; deliveries still see the error.
  verifier.ready().catch((error: unknown) => {
    log({
      level: 'error',
      event: 'misconfigured',
      message: `The public key cannot be used: ${describeError(error)}`,
      error,
    });
  });

  function log(record: WebhookLogRecord): void {
    if (logger === undefined) return;
    try {
      logger(record);
    } catch {
      // A broken logger must not change the answer.
    }
  }

  function hook<A>(fn: ((arg: A) => void | Promise<void>) | undefined, arg: A): void {
    if (fn === undefined) return;
    try {
      const result = fn(arg);
      if (result !== undefined && typeof (result).then === 'function') {
        (result).then(undefined, (error: unknown) => {
          log({
            level: 'warn',
            event: 'hook-failed',
            message: `A payhook hook rejected: ${describeError(error)}`,
            error,
          });
        });
      }
    } catch (error) {
      log({ level: 'warn', event: 'hook-failed', message: `A payhook hook threw: ${describeError(error)}`, error });
    }
  }

  function failure(
    code: PayhookErrorCode,
    message: string,
    details: {
      key?: string;
      cause?: unknown;
      event: string;
      level: WebhookLogRecord['level'];
      transactionId?: string;
      started?: number;
    },
  ): Answer {
    const answer = fail(code, message);
    const { key, cause, transactionId, started } = details;
    hook(onError, {
      code,
      message,
      status: answer.status,
      ...(key === undefined ? {} : { key }),
      ...(cause === undefined ? {} : { cause }),
    });
    log({
      level: details.level,
      event: details.event,
      message,
      status: answer.status,
      code,
      ...(key === undefined ? {} : { key }),
      ...(transactionId === undefined ? {} : { transactionId }),
      ...(started === undefined ? {} : { durationMs: Date.now() - started }),
      ...(cause === undefined ? {} : { error: cause }),
    });
    return answer;
  }

  /** A store call with the deadline; rejects with STORE_UNAVAILABLE. */
  async function storeCall<T>(what: string, call: () => Promise<T>): Promise<T> {
    let result: T | typeof TIMED_OUT;
    try {
      result = await within(Promise.resolve().then(call), storeTimeoutMs);
    } catch (cause) {
      throw new PayhookError(
        'STORE_UNAVAILABLE',
        `The deduplication store failed to ${what}: ${describeError(cause)}`,
        { cause },
      );
    }
    if (result === TIMED_OUT) {
      throw new PayhookError(
        'STORE_UNAVAILABLE',
        `The deduplication store did not ${what} within ${storeTimeoutMs} ms.`,
      );
    }
    return result;
  }

  /** After the answer: settle a claim whose handler missed its deadline. */
  function settleLate(
    handler: Promise<void>,
    key: string,
    token: string,
    transactionId: string,
    started: number,
  ): Promise<void> {
    return handler
      .then(
        () =>
          storeCall('complete', () => store.complete(key, token, { retentionMs })).then(() => {
            log({
              level: 'warn',
              event: 'late-handler-settled',
              message: 'onPayment finished after its deadline; the delivery is now recorded as handled.',
              key,
              transactionId,
              durationMs: Date.now() - started,
            });
          }),
        () =>
          storeCall('release', () => store.release(key, token)).then(() => {
            log({
              level: 'warn',
              event: 'late-handler-settled',
              message: 'onPayment failed after its deadline; the claim was released for the retry.',
              key,
              transactionId,
              durationMs: Date.now() - started,
            });
          }),
      )
      .catch((error: unknown) => {
        log({
          level: 'error',
          event: 'bookkeeping-failed',
          message: `Could not settle the claim after a late handler: ${describeError(error)} (the lease will expire).`,
          key,
          transactionId,
          error,
        });
      });
  }

  async function handle(request: WebhookRequest): Promise<Answer> {
    const started = Date.now();
    const early = precheck(request.method, undefined);
    if (early !== undefined) return early;

    let result: VerifyWebhookResult;
    try {
      result = await (clock === undefined ? verifier : prepareVerifier({ ...fixedOptions, now: clock() })).verify(
        request,
      );
    } catch (error) {
      // Only misconfiguration gets here (a bad key, a request of the wrong shape).
      const code = isPayhookError(error) ? error.code : 'INVALID_ARGUMENT';
      return failure(code, `The webhook handler is misconfigured: ${describeError(error)}`, {
        cause: error,
        event: 'misconfigured',
        level: 'error',
      });
    }
    if (!result.ok) {
      if (result.error.code === 'SIGNATURE_MISMATCH') hook(onSignatureMismatch, request);
      return failure(result.error.code, result.error.message, { event: 'rejected', level: 'warn', started });
    }
    const { webhook, timestamp } = result;
    const transactionId = webhook.transactionId;

    let key: string;
    try {
      key = dedupKey(webhook);
      if (typeof key !== 'string' || key === '') throw misuse('dedupKey must return a non-empty string.');
    } catch (error) {
      return failure('HANDLER_FAILED', `dedupKey failed: ${describeError(error)}`, {
        cause: error,
        event: 'handler-failed',
        level: 'error',
        transactionId,
      });
    }

    let claim: ClaimResult;
    try {
      claim = await storeCall('claim', () => store.claim(key, { leaseMs }));
    } catch (error) {
      return failure('STORE_UNAVAILABLE', describeError(error), {
        key,
        cause: error,
        event: 'store-unavailable',
        level: 'error',
        transactionId,
        started,
      });
    }
    if (claim.status === 'completed') {
      hook(onDuplicate, { key, state: 'completed', webhook });
      log({
        level: 'info',
        event: 'duplicate',
        message: 'Already handled; answered 200 without calling onPayment.',
        status: 200,
        key,
        transactionId,
      });
      return { status: 200, body: { ok: true, duplicate: true }, headers: { ...JSON_HEADERS } };
    }
    if (claim.status !== 'claimed') {
      hook(onDuplicate, { key, state: 'in-progress', webhook });
      const message = 'Another worker is handling this delivery; retry later.';
      // Not answered 200, so onError hears of it too (a claim that stays
      // in progress across retries is worth an alert).
      hook(onError, { code: 'DELIVERY_IN_PROGRESS', message, status: 409, key });
      log({
        level: 'info',
        event: 'in-progress',
        message,
        status: 409,
        code: 'DELIVERY_IN_PROGRESS',
        key,
        transactionId,
      });
      return fail('DELIVERY_IN_PROGRESS', message);
    }
    const { token } = claim;

    const controller = new AbortController();
    const context: PaymentContext = { key, timestamp, signal: controller.signal };
    const handler = Promise.resolve().then(() => onPayment(webhook, context));
    let outcome: void | typeof TIMED_OUT;
    try {
      outcome = await within(handler, handlerTimeoutMs);
    } catch (error) {
      let released = true;
      try {
        await storeCall('release', () => store.release(key, token));
      } catch (releaseError) {
        released = false;
        log({
          level: 'error',
          event: 'bookkeeping-failed',
          message: `Could not release the claim: ${describeError(releaseError)} (the lease will expire).`,
          key,
          transactionId,
          error: releaseError,
        });
      }
      return failure(
        'HANDLER_FAILED',
        `onPayment threw: ${describeError(error)}${released ? '' : ' (the claim stays until its lease expires)'}`,
        { key, cause: error, event: 'handler-failed', level: 'error', transactionId, started },
      );
    }
    if (outcome === TIMED_OUT) {
      controller.abort(new PayhookError('HANDLER_FAILED', `onPayment did not finish within ${handlerTimeoutMs} ms.`));
      const answer = failure(
        'HANDLER_FAILED',
        `onPayment did not finish within ${handlerTimeoutMs} ms; the service will retry.`,
        { key, event: 'handler-timeout', level: 'error', transactionId, started },
      );
      answer.after = settleLate(handler, key, token, transactionId, started);
      return answer;
    }

    try {
      await storeCall('complete', () => store.complete(key, token, { retentionMs }));
    } catch (error) {
      // onPayment succeeded: the hand-off is recorded on the merchant's side,
      // so the answer is 200. A non-200 would only make the service redeliver
      // a payment already handed off. The claim expires with its lease.
      const message = `Handled, but the store could not record it: ${describeError(error)}`;
      hook(onError, { code: 'STORE_UNAVAILABLE', message, status: 200, key, cause: error });
      log({
        level: 'error',
        event: 'bookkeeping-failed',
        message,
        status: 200,
        code: 'STORE_UNAVAILABLE',
        key,
        transactionId,
        error,
      });
    }
    log({
      level: 'info',
      event: 'handled',
      message: 'Delivery handled.',
      status: 200,
      key,
      transactionId,
      durationMs: Date.now() - started,
    });
    return { status: 200, body: { ok: true }, headers: { ...JSON_HEADERS } };
  }

  function precheck(method: string | undefined, contentLength: string | null | undefined): Answer | undefined {
    if (typeof method !== 'string' || method.toUpperCase() !== 'POST') {
      const answer = failure('METHOD_NOT_ALLOWED', `Webhooks arrive as POST, not ${String(method)}.`, {
        event: 'rejected',
        level: 'warn',
      });
      answer.headers['allow'] = 'POST';
      return answer;
    }
    if (
      contentLength !== undefined &&
      contentLength !== null &&
      /^\d+$/.test(contentLength) &&
      Number(contentLength) > verifier.maxBodyBytes
    ) {
      return tooLarge();
    }
    return undefined;
  }

  function tooLarge(): Answer {
    const answer = failure('BODY_TOO_LARGE', `The body exceeds ${verifier.maxBodyBytes} bytes.`, {
      event: 'rejected',
      level: 'warn',
    });
    answer.headers['connection'] = 'close';
    return answer;
  }

  function unreadable(message: string, cause: unknown): Answer {
    return failure('INVALID_ARGUMENT', message, { cause, event: 'misconfigured', level: 'error' });
  }

  function bodyTimeout(): Answer {
    const answer = failure('BODY_TIMEOUT', `The body did not arrive within ${bodyTimeoutMs} ms.`, {
      event: 'rejected',
      level: 'warn',
    });
    answer.headers['connection'] = 'close';
    return answer;
  }

  function aborted(cause: unknown): Answer {
    const message = 'The client went away while sending the body; nothing was processed (the service retries).';
    log({ level: 'info', event: 'aborted', message, ...(cause === undefined ? {} : { error: cause }) });
    return { status: 400, body: { ok: false, message }, headers: { ...JSON_HEADERS, connection: 'close' } };
  }

  return {
    precheck,
    tooLarge,
    unreadable,
    aborted,
    bodyTimeout,
    handle,
    maxBodyBytes: verifier.maxBodyBytes,
    bodyTimeoutMs,
  };
}
