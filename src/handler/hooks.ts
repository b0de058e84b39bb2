/**
 * What a receiving handler hands its hooks (`onPayment`'s context,
 * `onError`, `onDuplicate`, `onInvalidPayload`/`deadLetter`,
 * `onSignatureMismatch`) and its logger.
 *
 * @module
 */
import type { CapturedDelivery } from '../capture.js';
import type { PayhookErrorCode, PayhookIssue } from '../errors.js';
import type { WebhookRequest } from '../verify-webhook.js';
import type { PaymentWebhook } from '../webhook/types.js';

/**
 * The slice of an `AbortSignal` payhook promises. Where your runtime's types
 * declare a global `AbortSignal` (DOM lib, `@types/node`, Deno, Bun,
 * workers-types) {@link PaymentContext.signal} is typed as that, so it can be
 * handed to `fetch` or a database driver as it is.
 *
 * @example
 * ```ts
 * import type { AbortSignalLike } from 'payhook/web';
 *
 * const stopped = (signal: AbortSignalLike): boolean => signal.aborted;
 * ```
 */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * The runtime's own `AbortSignal` type when one is declared (a global, or
 * what the global `fetch` takes, as in `@cloudflare/workers-types`), else
 * {@link AbortSignalLike}.
 *
 * @example
 * ```ts
 * import type { HandlerAbortSignal } from 'payhook/web';
 *
 * declare const signal: HandlerAbortSignal;
 * await fetch('https://erp.example.kg/orders', { method: 'POST', signal });
 * ```
 */
export type HandlerAbortSignal = typeof globalThis extends { AbortSignal: { prototype: infer S } }
  ? S
  : // A class declaration (workers-types' AbortSignal) is not listed by `typeof globalThis`; a function (fetch) is.
    typeof globalThis extends { fetch: (input: never, init?: infer Init) => unknown }
    ? Init extends { signal?: infer S }
      ? Exclude<S, null | undefined>
      : AbortSignalLike
    : AbortSignalLike;

/**
 * What `onPayment` receives beside the webhook.
 *
 * @example
 * ```ts
 * import type { PaymentContext } from 'payhook/web';
 *
 * const onPayment = async (webhook: unknown, context: PaymentContext) => {
 *   console.log(`delivery ${context.key}, signed at ${new Date(context.timestamp).toISOString()}`);
 * };
 * ```
 */
export interface PaymentContext {
  /**
   * The deduplication key of this delivery: by default `` `${webhook.id}:${webhook.status}` ``, except that an
   * `UNKNOWN` status carries its raw spelling, trimmed and upper-cased (`a_DEBIT:UNKNOWN:PAID`).
   */
  readonly key: string;
  /** `x-api-timestamp`: when the service signed this attempt, in ms. */
  readonly timestamp: number;
  /**
   * The registered URL this delivery was signed for (with `webhookUrl`), so
   * that a receiver serving several shops reads the shop from here, never
   * from the request; `undefined` with `allowAnyHost` and no `webhookUrl`.
   */
  readonly webhookUrl: string | undefined;
  /**
   * Aborted when `handlerTimeoutMs` passes: stop, the service was answered
   * 500 and will retry. Pass it to `fetch` or your driver. It is made when
   * first read, so a handler that never reads it costs no signal; read after
   * the deadline, it is already aborted.
   */
  readonly signal: HandlerAbortSignal;
}

/**
 * A refused or failed delivery, as {@link payhook/web!WebhookHandlerBaseOptions.onError | WebhookHandlerOptions.onError}
 * receives it: the stable code, the HTTP status answered, and where known
 * the delivery key and the underlying error.
 *
 * @example
 * ```ts
 * import type { WebhookHandlerError } from 'payhook/web';
 *
 * declare const metrics: { increment(name: string): void };
 * const onError = (error: WebhookHandlerError) => metrics.increment(`webhook.${error.code}`);
 * ```
 */
export interface WebhookHandlerError {
  readonly code: PayhookErrorCode;
  /**
   * What happened. For `SIGNATURE_MISMATCH` it goes on with what the signature was checked against, from your
   * options (`Checked with the service's production key, for https://shop.example.kg/webhooks/payments.`, a
   * query shown as `?…`, a user and password left out), and where to find out why; the answer the sender gets
   * carries neither. The log line says the same.
   */
  readonly message: string;
  /** The HTTP status the service was answered (or 200 for after-answer failures). */
  readonly status: number;
  /** The deduplication key, once the delivery is verified. */
  readonly key?: string;
  /**
   * What failed, when something threw: the error your `onPayment`, `deadLetter`
   * or `dedupKey` threw as is; for a store call, payhook's `STORE_UNAVAILABLE`
   * error, whose own `cause` is the store's.
   */
  readonly cause?: unknown;
}

/**
 * A delivery that was not processed because it is a duplicate.
 *
 * @example
 * ```ts
 * import type { DuplicateDelivery } from 'payhook/web';
 *
 * const onDuplicate = (duplicate: DuplicateDelivery) => console.info('duplicate', duplicate.key, duplicate.state);
 * ```
 */
export interface DuplicateDelivery {
  readonly key: string;
  /** `completed`: handled before (answered 200). `in-progress`: another worker holds it (answered 409). */
  readonly state: 'completed' | 'in-progress';
  readonly webhook: PaymentWebhook;
}

/**
 * What a {@link WebhookLogRecord} says happened. Every event a handler logs
 * is one of these:
 *
 * | event | level | when |
 * |---|---|---|
 * | `handled` | info | `onPayment` handled the delivery (answered 200) |
 * | `duplicate` | info | already handled: answered 200 without calling `onPayment` |
 * | `parked` | warn | `onPayment` returned `park(reason)`: answered 200, recorded as handled, never retried (returned after `handlerTimeoutMs`, or handed to a `deadLetter` that finished after it: logged when it comes, without a status, as the 500 was answered; the retry is a duplicate) |
 * | `in-progress` | info | another worker holds the delivery (409) |
 * | `rejected` | warn | refused before `onPayment`: method, body, signature, timestamp or request errors |
 * | `invalid-payload` | error | signed and fresh but not a webhook payhook understands, without `deadLetter` (400) |
 * | `dead-lettered` | warn | such a delivery, handed to `deadLetter` and answered 200 |
 * | `handler-failed` | error | `onPayment` threw, `deadLetter` threw or missed `handlerTimeoutMs`, or `dedupKey` failed (500; 503 when what `onPayment` threw is a `STORE_UNAVAILABLE` error, such as the PostgreSQL inbox's; without a status for the `deadLetter` of a park that came after its 500) |
 * | `handler-timeout` | error | `onPayment` missed `handlerTimeoutMs` (500; the claim is settled when it finishes) |
 * | `late-handler-settled` | warn | a late `onPayment` or `deadLetter` finished after its 500, and its claim was settled (released, with what it threw in `error`, when it threw); one that finished past `leaseMs` says a retry may have claimed the delivery meanwhile |
 * | `store-unavailable` | error | the store could not claim the delivery (503) |
 * | `late-claim-released` | warn | a claim that landed after its 503 was released for the retry |
 * | `bookkeeping-failed` | error | the store could not record, release or settle a claim, or a claim answered 503 had not landed after one lease or landed as no claim result (the answer stands) |
 * | `misconfigured` | error | an unusable key, clock or request body source, a `now` or `webhookUrl` function that throws, or a store that is not set up, such as a PostgreSQL table never migrated or a Durable Object binding to another class, or whose claim resolves no claim result (500); at warn, once at creation, `publicKeys` holding payhook's published test key, which accepts deliveries anyone signs |
 * | `aborted` | info | the client went away while sending the body: not reported to `onError`; the 400 answered reaches nobody |
 * | `hook-failed` | warn | one of your hooks threw or rejected, or a refused delivery could not be captured (the answer stands) |
 *
 * @example
 * ```ts
 * import type { WebhookLogEvent, WebhookLogRecord } from 'payhook/web';
 *
 * const alerting: readonly WebhookLogEvent[] = ['store-unavailable', 'bookkeeping-failed', 'parked'];
 * const logger = (record: WebhookLogRecord) => {
 *   if (alerting.includes(record.event)) console.error(record.event, record.message);
 * };
 * ```
 */
export type WebhookLogEvent =
  | 'handled'
  | 'duplicate'
  | 'parked'
  | 'in-progress'
  | 'rejected'
  | 'invalid-payload'
  | 'dead-lettered'
  | 'handler-failed'
  | 'handler-timeout'
  | 'late-handler-settled'
  | 'store-unavailable'
  | 'late-claim-released'
  | 'bookkeeping-failed'
  | 'misconfigured'
  | 'aborted'
  | 'hook-failed';

/**
 * One structured log record. Map it to your logger:
 * `logger: (record) => pino[record.level](record, record.message)`.
 *
 * @example
 * ```ts
 * import type { WebhookLogRecord } from 'payhook/web';
 *
 * const logger = (record: WebhookLogRecord) => console[record.level](JSON.stringify(record));
 * ```
 */
export interface WebhookLogRecord {
  /** `info` for handled deliveries, duplicates and aborts; `warn` and `error` for what needs a look (`debug`: none yet). */
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  /** What happened: one of the stable {@link WebhookLogEvent}s. */
  readonly event: WebhookLogEvent;
  /** For people: what happened and, where there is one, the fix. */
  readonly message: string;
  /** The HTTP status answered, when the record is about the answer. */
  readonly status?: number;
  /** The error code, for a refusal or a failure. */
  readonly code?: PayhookErrorCode;
  /** The delivery's deduplication key, once it is verified (the key `deadLetter` and `onError` get too). */
  readonly key?: string;
  /**
   * The verified delivery's `transactionId`; for a payload not understood (`invalid-payload`, `dead-lettered`), the
   * one its body names, when that is text.
   */
  readonly transactionId?: string;
  /** Milliseconds since the request reached the handler. */
  readonly durationMs?: number;
  /** The thrown error behind a failure, as thrown (a driver's error, your exception). */
  readonly error?: unknown;
}

/**
 * An authentic delivery (signature and timestamp verified) whose payload is
 * not a webhook payhook understands (`INVALID_PAYLOAD`), as
 * {@link payhook/web!WebhookHandlerBaseOptions.onInvalidPayload | WebhookHandlerOptions.onInvalidPayload} and
 * {@link payhook/web!WebhookHandlerBaseOptions.deadLetter | WebhookHandlerOptions.deadLetter} receive it: the reasons, the
 * signed timestamp, and the request as received so it can be stored and replayed once understood.
 *
 * @example
 * ```ts
 * import type { InvalidPayloadDelivery } from 'payhook/web';
 *
 * const onInvalidPayload = (delivery: InvalidPayloadDelivery) =>
 *   console.error('signed but not understood', delivery.message, delivery.issues);
 * ```
 */
export interface InvalidPayloadDelivery {
  readonly code: 'INVALID_PAYLOAD';
  readonly message: string;
  /** Every problem found in the payload, each with its path (`''` for the body itself). */
  readonly issues: readonly PayhookIssue[];
  /** The request as the handler received it: method, URL, headers and the raw (or parser-given) body. */
  readonly request: WebhookRequest;
  /** `x-api-timestamp`: when the service signed this attempt, in ms (verified fresh). */
  readonly timestamp: number;
}

/**
 * A genuine delivery that `onPayment` parked by returning `park(reason)`, as
 * {@link payhook/web!WebhookHandlerBaseOptions.deadLetter | WebhookHandlerOptions.deadLetter}
 * receives it: answered 200 and recorded as handled, so the service never
 * retries it; keep it to review by hand.
 *
 * @example
 * ```ts
 * import type { ParkedDelivery } from 'payhook/web';
 *
 * const review = (delivery: ParkedDelivery) =>
 *   console.warn(`parked ${delivery.webhook.id}: ${delivery.reason}`, delivery.details);
 * ```
 */
export interface ParkedDelivery {
  readonly code: 'PARKED';
  /** The reason given to `park`; also in `message`, so one dead-letter table holds both kinds. */
  readonly reason: string;
  readonly message: string;
  /** The details given to `park`, if any. */
  readonly details?: unknown;
  readonly webhook: PaymentWebhook;
  /** The deduplication key the delivery is recorded under. */
  readonly key: string;
  /** The request as the handler received it. */
  readonly request: WebhookRequest;
  /** `x-api-timestamp`: when the service signed this attempt, in ms. */
  readonly timestamp: number;
}

/**
 * What {@link payhook/web!WebhookHandlerBaseOptions.deadLetter | WebhookHandlerOptions.deadLetter}
 * receives: a signed payload payhook does not understand, or a delivery
 * `onPayment` parked. Switch on `code`.
 *
 * @example
 * ```ts
 * import { captureDelivery } from 'payhook';
 * import type { DeadLetterDelivery } from 'payhook/web';
 *
 * const row = async (delivery: DeadLetterDelivery) => ({
 *   kind: delivery.code,
 *   reason: delivery.message,
 *   key: delivery.code === 'PARKED' ? delivery.key : null,
 *   // Every header and the body as text: the request's own Headers and bytes do not survive JSON.
 *   capture: await captureDelivery(delivery.request),
 * });
 * ```
 */
export type DeadLetterDelivery = InvalidPayloadDelivery | ParkedDelivery;

/**
 * What {@link payhook/web!WebhookHandlerBaseOptions.onSignatureMismatch | WebhookHandlerOptions.onSignatureMismatch} receives beside the
 * request: the delivery captured losslessly, in the JSON form
 * `payhook verify --request` reads.
 *
 * @example
 * ```ts
 * import { writeFile } from 'node:fs/promises';
 * import type { SignatureMismatchDetails } from 'payhook/node';
 *
 * const save = ({ capture }: SignatureMismatchDetails) => writeFile('failed.json', JSON.stringify(capture, null, 2));
 * ```
 */
export interface SignatureMismatchDetails {
  /** The refused delivery, as `captureDelivery` returns it. */
  readonly capture: CapturedDelivery;
}
