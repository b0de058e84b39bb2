// The handler types both adapters publish (payhook/web and payhook/node),
// named one by one and once: each adapter re-exports this module whole, so a
// type added to hooks.ts or options.ts stays internal until it is listed here.
// Internal.
export type {
  AbortSignalLike,
  DeadLetterDelivery,
  DuplicateDelivery,
  HandlerAbortSignal,
  InvalidPayloadDelivery,
  ParkedDelivery,
  PaymentContext,
  SignatureMismatchDetails,
  WebhookHandlerError,
  WebhookLogEvent,
  WebhookLogRecord,
} from './hooks.js';
export type {
  AnyHost,
  GivenKeys,
  PinnedHost,
  ServiceKeys,
  WebhookHandlerBaseOptions,
  WebhookHandlerOptions,
} from './options.js';
