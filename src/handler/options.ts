/**
 * The options every receiving handler takes (`payhook/web`, `payhook/node`);
 * what it hands its hooks is in `hooks.ts`.
 *
 * @module
 */
import type { DedupStore } from '../dedup/store.js';
import type { KeyInput } from '../keys.js';
import type { ServiceEnvironment } from '../service-keys.js';
import type { VerifyWebhookOptions, WebhookRequest, WebhookUrlOption } from '../verify-webhook.js';
import type { PaymentWebhook } from '../webhook/types.js';
import type {
  DeadLetterDelivery,
  DuplicateDelivery,
  InvalidPayloadDelivery,
  PaymentContext,
  SignatureMismatchDetails,
  WebhookHandlerError,
  WebhookLogRecord,
} from './hooks.js';

/**
 * The options every receiving handler takes besides its keys and its host
 * policy (see {@link WebhookHandlerOptions}): everything
 * {@link VerifyWebhookOptions} takes (with `now` also accepting a clock
 * function), plus the merchant's `onPayment` and the deduplication settings.
 *
 * The delivery flow: non-POST → 405; too large → 413; body not
 * received within `bodyTimeoutMs` → 408; verify
 * (401 signature/timestamp, 400 not a webhook); claim in the `store` (503
 * when unreachable; 200 when already handled; 409 while another worker holds
 * it); `onPayment` within `handlerTimeoutMs` (500 and the claim released when
 * it throws; 500 when it is late, the claim settled when it finishes);
 * complete; 200 (also when only the completion fails: `onPayment` has
 * already handed the payment off; `{ ok: true, parked: true }` when it
 * returned `park(reason)`). 5xx bodies carry the code and a generic
 * message unless `exposeErrors` is set.
 *
 * @example
 * ```ts
 * import type { WebhookHandlerBaseOptions } from 'payhook/web';
 *
 * declare const db: { outbox: { insert(row: object): Promise<void> } };
 * const shared: WebhookHandlerBaseOptions = {
 *   onPayment: async (webhook) => { await db.outbox.insert({ id: webhook.id, body: webhook.raw }); },
 *   handlerTimeoutMs: 5_000,
 * };
 * ```
 */
export interface WebhookHandlerBaseOptions extends Omit<
  VerifyWebhookOptions,
  'now' | 'publicKeys' | 'environment' | 'webhookUrl'
> {
  /**
   * The clock deliveries are checked against: a function is called once per
   * delivery (`() => Date.now()`, a test's fake clock). A fixed number or
   * `Date` is for tests only: it stays the same for the handler's whole
   * life, so a long-running handler given `now: Date.now()` would refuse
   * every delivery five minutes after it was created. The default store
   * (when you pass no `store`) keeps this clock too, so a test that moves it
   * past `leaseMs` or `retentionMs` sees a claim lapse or a delivery
   * forgotten; a store you pass keeps its own (`createMemoryStore({ now })`).
   * @defaultValue the current time, at each delivery
   */
  now?: number | Date | (() => number | Date);
  /**
   * Your hand-off, called once per delivery that verified and was claimed.
   * Make it fast and durable — insert an outbox row, publish a queue message
   * — and do the heavy work (emails, fulfilment, ERP calls) after, from that
   * row or message: the service expects its 200 at once. When it
   * resolves, the delivery is recorded and answered 200; when it throws or
   * misses `handlerTimeoutMs`, the service is answered 500 and retries.
   * Keep it idempotent on `webhook.id` and `webhook.status` anyway (see
   * "Deduplication and retries" in docs/stores.md).
   *
   * A genuine delivery you will not apply — an unknown order, an amount that
   * differs — is no reason to throw (the service would retry it for days):
   * return `park(reason, details?)` from `payhook`. The delivery is answered
   * 200 (`{ ok: true, parked: true }`), recorded as handled (a redelivery is
   * a duplicate), logged with its reason (event `parked`) and handed to
   * `deadLetter`, if you gave one, to review later. A park returned after
   * `handlerTimeoutMs` is logged and handed on the same way once it comes;
   * the delivery was answered 500 by then, and the retry gets 200 as a
   * duplicate.
   *
   * Any other result, or none, means applied, so a hand-off may return what
   * its call resolves with (`(webhook) => queue.publish(webhook.raw)`). An
   * object with `park` but no reason (`{ park: '' }`), a returned `Error` and
   * an object with `ok: false` (a `fetch` Response your ERP refused) fail as
   * if the function threw: the delivery is answered 500 and retried.
   *
   * It is given every delivery, whatever its status: a function that takes
   * only some (`(webhook: SucceededPaymentWebhook) => …`) does not compile.
   */
  // A property, not a method: TypeScript checks a method's parameters both ways, which let such a function through.
  onPayment: (webhook: PaymentWebhook, context: PaymentContext) => unknown;
  /**
   * Where claims and completed deliveries are recorded.
   * @defaultValue `createMemoryStore()` — one process only; use
   * `createRedisStore` from `payhook/redis` with several.
   */
  store?: DedupStore;
  /**
   * The deduplication key of a delivery: deliveries with the same key run
   * `onPayment` once.
   *
   * The default keys each delivery by id *and* normalised status, so a
   * status change — PROCESSING then SUCCEEDED, FAILED then SUCCEEDED — is a
   * new delivery that reaches `onPayment`, while a redelivery of the same
   * state (whatever the letter case of its raw status) is a duplicate. The
   * `_DEBIT` / `_CREDIT` suffix of `id` keeps the two operations of one
   * transaction apart, and an `UNKNOWN` status carries its raw spelling
   * (trimmed, upper-cased: `a_DEBIT:UNKNOWN:PAID`, then `a_DEBIT:UNKNOWN:EXPIRED`),
   * so two unrecognised statuses are two updates. A key without the status (such as `webhook.id` alone) would
   * answer a later state 200 as a duplicate and lose it. With the default, a
   * delivery whose `id` is empty is refused `INVALID_PAYLOAD` (handed to
   * `deadLetter` when it is set): its key could not tell it from another
   * payment's, so answering it as a duplicate could drop a payment.
   * @defaultValue `` `${webhook.id}:${webhook.status}` `` (`UNKNOWN:<raw status>` for an `UNKNOWN` one)
   */
  dedupKey?: (webhook: PaymentWebhook) => string;
  /**
   * How long a claim holds when its worker dies. Redeliveries meanwhile get
   * 409; the first one after it is processed. Must exceed
   * `handlerTimeoutMs + 2 * storeTimeoutMs` (the handler and the claim and
   * complete calls around it), and with `deadLetter` set
   * `2 * handlerTimeoutMs + 2 * storeTimeoutMs` (a parked delivery runs
   * `onPayment`, then `deadLetter`, before it is completed).
   * @defaultValue 60 000 (the service retries every 30 s at first)
   */
  leaseMs?: number;
  /**
   * How long a handled delivery is remembered (answered 200 without calling
   * `onPayment`). At least twice `toleranceMs`, so a captured delivery can
   * never be replayed: within the window it is remembered, after it it is
   * stale. Keep it above 24 hours, the longest gap between two attempts of
   * the service (`retryDelay`): a copy of a delivery whose 200 was lost
   * arriving after the retention runs `onPayment` again. `Infinity` keeps
   * every handled delivery for ever (a store of your own must then keep
   * `Infinity` as such: see `CompleteOptions`).
   * @defaultValue 604 800 000 (7 days)
   */
  retentionMs?: number;
  /**
   * The deadline for `onPayment`. When it passes, the service is answered
   * 500, `context.signal` is aborted, and the claim is settled when the late
   * handler does (completed if it resolves, released if it throws, or left
   * to its lease). Until then a retry is answered 409; once `leaseMs` has
   * passed, a retry is processed even if the late handler is still running,
   * so stop when `context.signal` aborts. At most 2 147 483 647 (about
   * 24.8 days, the longest timer JavaScript keeps).
   * @defaultValue 10 000
   */
  handlerTimeoutMs?: number;
  /**
   * The deadline for each store call; a slower store counts as unreachable
   * (503). A claim that still lands after it, within one `leaseMs`, is
   * released with its own token as soon as it does, whatever the store, so
   * the service's retry is processed rather than answered 409 for a whole
   * lease (one landing later holds the delivery for its lease). At most
   * 2 147 483 647, as for `handlerTimeoutMs`.
   * @defaultValue 5 000
   */
  storeTimeoutMs?: number;
  /**
   * The deadline for receiving the whole body, from when the handler starts
   * reading it. A client that sends part of a body and stalls (slow-loris)
   * would otherwise hold a connection and up to `maxBodyBytes` of memory;
   * when it passes, the handler answers 408 `BODY_TIMEOUT` and stops reading
   * (cancels the stream; the Node handler closes the connection). Not used
   * when a body parser already read the body. At most 2 147 483 647, as for
   * `handlerTimeoutMs`.
   * @defaultValue 10 000
   */
  bodyTimeoutMs?: number;
  /**
   * Called for every delivery not answered 200 (409 `DELIVERY_IN_PROGRESS`
   * included, which also reaches `onDuplicate`), and for store failures
   * after the answer: a completion after a 200, or the claim of an
   * `onPayment` that missed `handlerTimeoutMs` (or of a `deadLetter` that
   * finished late) not settled after its 500
   * (retries then get 409 until the lease expires). Not for a client that went away while
   * sending the body: that is normal traffic, logged as event `aborted` only.
   * (Over HTTP/2 a client that ends its stream and then resets it has, as far
   * as the server can tell, sent its whole body: a cut-off one is judged as
   * sent, usually `INVALID_BODY`.)
   */
  onError?: (error: WebhookHandlerError) => unknown;
  /** Called for every duplicate (already handled, or in progress elsewhere). */
  onDuplicate?: (duplicate: DuplicateDelivery) => unknown;
  /**
   * Called on `SIGNATURE_MISMATCH` (after the 401 is answered) with the
   * request as received and `{ capture }`: the same delivery as
   * `payhook verify --request` reads it, ready for `JSON.stringify`. Use it to
   * save one failing delivery, or pass `explainSignatureMismatch(options)`
   * from `payhook/explain` to log why. Anyone can send a bad signature, and
   * it is called for each: keep what it writes bounded (one file,
   * overwritten; a sample).
   */
  onSignatureMismatch?: (request: WebhookRequest, details: SignatureMismatchDetails) => unknown;
  /**
   * Called for every authentic delivery (signature and timestamp verified)
   * whose payload is not a webhook payhook understands, e.g. a field whose
   * type the service changed. A report only: the answer stays 400, so the
   * service keeps the delivery and retries it (nothing is lost) — until you
   * upgrade payhook or set {@link WebhookHandlerBaseOptions.deadLetter | deadLetter}.
   */
  onInvalidPayload?: (delivery: InvalidPayloadDelivery) => unknown;
  /**
   * Opt-in durable hand-off for authentic deliveries that will not be
   * applied: a payload that is not understood (`code: 'INVALID_PAYLOAD'`),
   * or a delivery `onPayment` parked (`code: 'PARKED'`). Store the raw
   * request (a table, a queue) to handle it later, through `captureDelivery`
   * (its body is bytes, and on the Web its headers a `Headers` object: as
   * JSON they would be a map of numbers and `{}`). When it resolves within
   * `handlerTimeoutMs`, the delivery is answered 200 and the service stops
   * retrying it — it is now yours to keep. When it throws or is late, or
   * resolves a result that says it failed (an `Error`, an object with
   * `ok: false` such as a refused `fetch` Response), the answer is 500 and
   * the service retries. A parked delivery's claim is
   * released when it throws, so the retry runs `onPayment` again; when it is
   * late, the claim is kept until it ends (logged `late-handler-settled`):
   * recorded as handled when it resolves, so the retry is a duplicate,
   * released when it throws. An `INVALID_PAYLOAD` is
   * not deduplicated (there is no webhook to key), so a redelivery may reach
   * it again: make it idempotent, e.g. keyed on a SHA-256 of the body. Not on
   * the `signature` header: a retry comes with a new `x-api-timestamp` (the
   * old one would be stale within minutes), so its signature is new too.
   * @defaultValue none — a payload not understood is answered 400; a parked
   * delivery is still answered 200, logged and recorded
   */
  deadLetter?: (delivery: DeadLetterDelivery) => unknown;
  /**
   * Put the text of thrown errors (yours, the store's, the key's) into the
   * JSON body of 5xx answers. Off by default: the sender of a request is not
   * the one who should read `db down at 10.0.0.5`; the code and a generic
   * message are answered, the full text goes to `logger` and `onError`.
   * @defaultValue false
   */
  exposeErrors?: boolean;
  /**
   * Where log records go. A function receives every record (map it to your
   * logger); `false` silences payhook. A logger that throws, or an async one
   * that rejects, is ignored: it changes no answer. What an async one (or an
   * async hook) still runs after the answer goes to the platform's
   * `waitUntil`, when the handler is given one.
   * @defaultValue one line on the console per refused or failed delivery
   * (levels `warn` and `error`; control characters escaped, cut at 4,000
   * characters), at most 10 lines a second, and 10 more for
   * verified deliveries (parked, failed, dead-lettered), so a flood of
   * bad requests cannot hide them; the lines left out are counted by event
   * and printed with the next line after that second.
   */
  logger?: ((record: WebhookLogRecord) => void) | false;
}

/**
 * The keys of a handler named by environment: the service's own public
 * key(s), shipped with payhook. `publicKeys` may add more (key rotation).
 *
 * @example
 * ```ts
 * import type { ServiceKeys } from 'payhook/web';
 *
 * const keys: ServiceKeys = { environment: 'production' };
 * ```
 */
export interface ServiceKeys {
  /**
   * The service environment whose shipped key to accept: `'production'` or `'beta'` (the sandbox). Both together
   * are refused at creation (`INVALID_ARGUMENT`): a sandbox delivery signed for your URL would pass for a real
   * payment. Receive each environment with a handler of its own.
   */
  environment: ServiceEnvironment | readonly ServiceEnvironment[];
  /** Further public key(s) that may verify a delivery (PEM, JWK or CryptoKey). */
  publicKeys?: KeyInput | readonly KeyInput[];
}

/**
 * The keys of a handler given as public key(s) of your own (PEM, JWK or
 * CryptoKey): any of them may verify a delivery.
 *
 * @example
 * ```ts
 * import type { GivenKeys } from 'payhook/web';
 *
 * declare const pem: string;
 * const keys: GivenKeys = { publicKeys: pem };
 * ```
 */
export interface GivenKeys {
  /** Public key(s) the signature may verify with (PEM, JWK or CryptoKey). */
  publicKeys: KeyInput | readonly KeyInput[];
  /** Also accept the shipped key of this service environment (not production and beta together: see {@link ServiceKeys}). */
  environment?: ServiceEnvironment | readonly ServiceEnvironment[];
}

/**
 * A handler whose host, path and query are pinned to the callback URL you
 * registered with the service: the recommended policy.
 *
 * @example
 * ```ts
 * import type { PinnedHost } from 'payhook/web';
 *
 * const host: PinnedHost = { webhookUrl: 'https://shop.example.kg/webhooks/payments' };
 * ```
 */
export interface PinnedHost {
  /**
   * The callback URL you registered with the service, absolute: host, path
   * and query of the canonical string come from it, so a proxy or router
   * that rewrote them does not matter, and a delivery signed for another
   * merchant's endpoint never verifies here. Several shops: a list of
   * registered URLs, or a function of the request returning the one it was
   * sent to; `onPayment`'s context then says which one it was signed for.
   */
  webhookUrl: WebhookUrlOption;
  /** With `webhookUrl` set, `allowAnyHost` changes nothing: the registered URL is what is checked. */
  allowAnyHost?: boolean;
}

/**
 * A handler that accepts the `Host` as received: only where your
 * infrastructure already guarantees it (see {@link AnyHost.allowAnyHost}).
 *
 * @example
 * ```ts
 * import type { AnyHost } from 'payhook/web';
 *
 * const host: AnyHost = { allowAnyHost: true };
 * ```
 */
export interface AnyHost {
  /**
   * Accept the `Host` (and, with `trustForwardedHeaders`, `X-Forwarded-Host`)
   * as received instead of pinning it with `webhookUrl`.
   *
   * A handler needs one of the two: the service signs the deliveries of every
   * merchant with the same key, so without a pinned host a delivery signed
   * for another merchant's endpoint, replayed within the 5-minute window with
   * that merchant's `Host`, verifies here. Set `allowAnyHost: true` only when
   * your infrastructure already guarantees the Host — a proxy or load
   * balancer that routes only your own domain to this app. Prefer
   * `webhookUrl`. `trustForwardedHeaders` without `webhookUrl` needs it too.
   */
  allowAnyHost: true;
  /** The registered callback URL; when given it pins the host after all. */
  webhookUrl?: WebhookUrlOption;
}

/**
 * Options of the receiving handlers (`createWebhookHandler`,
 * `createNodeWebhookHandler`): the {@link WebhookHandlerBaseOptions}, plus
 * keys — `environment` ({@link ServiceKeys}) or `publicKeys`
 * ({@link GivenKeys}) — plus a host policy — `webhookUrl`
 * ({@link PinnedHost}) or `allowAnyHost: true` ({@link AnyHost}). The
 * compiler refuses options that lack either; JavaScript callers get the
 * same rule as an `INVALID_ARGUMENT` when the handler is created.
 *
 * @example
 * ```ts
 * import type { WebhookHandlerOptions } from 'payhook/web';
 *
 * declare const db: { outbox: { insert(row: object): Promise<void> } };
 * const options: WebhookHandlerOptions = {
 *   environment: 'production',
 *   webhookUrl: 'https://shop.example.kg/webhooks/payments',
 *   onPayment: async (webhook) => { await db.outbox.insert({ id: webhook.id, body: webhook.raw }); },
 * };
 * ```
 */
export type WebhookHandlerOptions = WebhookHandlerBaseOptions & (GivenKeys | ServiceKeys) & (AnyHost | PinnedHost);
