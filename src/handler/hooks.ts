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
 * The runtime's own `AbortSignal` type when one is declared, else
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
  /** The deduplication key of this delivery (by default `` `${webhook.id}:${webhook.status}` ``). */
  readonly key: string;
  /** `x-api-timestamp`: when the service signed this attempt, in ms. */
  readonly timestamp: number;
  /**
   * Aborted when `handlerTimeoutMs` passes: stop, the service was answered
   * 500 and will retry. Pass it to `fetch` or your driver.
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
 * const onError = (error: WebhookHandlerError) => metrics.increment(`webhook.${error.code}`);
 * ```
 */
export interface WebhookHandlerError {
  readonly code: PayhookErrorCode;
  readonly message: string;
  /** The HTTP status the service was answered (or 200 for after-answer failures). */
  readonly status: number;
  /** The deduplication key, once the delivery is verified. */
  readonly key?: string;
  /** The error thrown by your handler or the store, when there is one. */
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
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  /** What happened, stable: `handled`, `duplicate`, `in-progress`, `rejected`, `handler-failed`, `handler-timeout`, `store-unavailable`, `bookkeeping-failed`, `late-handler-settled`, `late-claim-released`, `invalid-payload`, `dead-lettered`, `misconfigured`, `aborted` (the client went away while sending the body: `info`, not reported to `onError`; the 400 answered reaches nobody). */
  readonly event: string;
  readonly message: string;
  readonly status?: number;
  readonly code?: PayhookErrorCode;
  readonly key?: string;
  readonly transactionId?: string;
  readonly durationMs?: number;
  readonly error?: unknown;
}

/**
 * An authentic delivery (signature and timestamp verified) whose payload is
 * not a webhook payhook understands (`INVALID_PAYLOAD`), as
 * {@link payhook/web!WebhookHandlerBaseOptions.onInvalidPayload | WebhookHandlerOptions.onInvalidPayload} and
 * {@link payhook/web!WebhookHandlerBaseOptions.deadLetter | WebhookHandlerOptions.deadLetter} receive it: the reasons, and the
 * request as received so it can be stored and replayed once understood.
 *
 * @example
 * ```ts
 * import type { InvalidPayloadDelivery } from 'payhook/web';
 *
 * const onInvalidPayload = (delivery: InvalidPayloadDelivery) =>
 *   console.error('signed but not understood', delivery.message, delivery.issues ?? []);
 * ```
 */
export interface InvalidPayloadDelivery {
  readonly code: 'INVALID_PAYLOAD';
  readonly message: string;
  readonly issues?: readonly PayhookIssue[];
  /** The request as the handler received it: method, URL, headers and the raw (or parser-given) body. */
  readonly request: WebhookRequest;
  /** `x-api-timestamp`, when it could be read. */
  readonly timestamp?: number;
}

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
