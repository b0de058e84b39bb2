// The handler options, checked once at creation and resolved to the values a
// delivery uses. Misuse throws INVALID_ARGUMENT naming the function the
// merchant called. Internal.
import { createMemoryStore } from '../dedup/memory.js';
import type { DedupStore } from '../dedup/store.js';
import { resolveClock } from '../lib/clock.js';
import { checkDuration } from '../lib/duration.js';
import { misuse } from '../lib/misuse.js';
import { defaultDedupKey } from '../dedup/key.js';
import { DEFAULT_LEASE_MS } from '../dedup/token.js';
import type { SchemeFactory } from '../lib/signature-scheme.js';
import { prepareVerifier, type PreparedVerifier } from '../verify-webhook.js';
import type { PaymentWebhook } from '../webhook/types.js';
import type { WebhookHandlerOptions } from './options.js';

/** Internal: the public function a handler was created with, named in misuse messages. */
export type HandlerFactory = 'createWebhookHandler' | 'createNodeWebhookHandler';

/** Internal: the options of one handler, checked and with their defaults. */
export interface Settings {
  readonly factory: HandlerFactory;
  readonly options: WebhookHandlerOptions;
  /** The verifier, prepared once (a `now` clock function is read per delivery). */
  readonly verifier: PreparedVerifier;
  /** Resolves once the keys are imported; rejects with INVALID_KEY / WEAK_KEY. */
  readonly ready: () => Promise<unknown>;
  readonly maxBodyBytes: number;
  readonly store: DedupStore;
  readonly dedupKey: (webhook: PaymentWebhook) => string;
  readonly leaseMs: number;
  readonly retentionMs: number;
  readonly handlerTimeoutMs: number;
  readonly storeTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly exposeErrors: boolean;
}

const DAY_MS = 86_400_000;

/** Internal: checks `options` for a handler made by `factory`; throws `INVALID_ARGUMENT` for misuse. */
export function resolveSettings(
  options: WebhookHandlerOptions,
  factory: HandlerFactory,
  scheme?: SchemeFactory,
): Settings {
  if (typeof options !== 'object' || options === null) {
    throw misuse(`${factory} needs options: { environment or publicKeys, webhookUrl, onPayment }.`);
  }
  if (typeof options.onPayment !== 'function') {
    throw misuse(`${factory} needs onPayment(webhook): your fast, durable hand-off (outbox row, queue message).`);
  }
  if (options.webhookUrl === undefined && options.allowAnyHost !== true) {
    throw misuse(
      `${factory} needs webhookUrl (the URL you registered with the service, ` +
        'e.g. webhookUrl: "https://shop.example.kg/webhooks/payments"): the service signs for every merchant ' +
        "with one key, so without it a delivery signed for another merchant's endpoint, replayed with that Host, " +
        'would verify here. Only if your infrastructure already guarantees the Host (a proxy that routes only ' +
        'your domain to this app), set allowAnyHost: true instead.',
    );
  }
  for (const name of ['onError', 'onDuplicate', 'onSignatureMismatch', 'onInvalidPayload', 'deadLetter'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      throw misuse(`${factory}: ${name} must be a function.`);
    }
  }
  if (options.logger !== undefined && options.logger !== false && typeof options.logger !== 'function') {
    throw misuse(`${factory}: logger must be a function, or false for silence.`);
  }
  // It checks the keys (none: "<factory> needs { environment … }") and the verification options.
  const verifier = prepareVerifier(options, scheme, factory);
  const leaseMs = checkDuration('leaseMs', options.leaseMs, 'time', DEFAULT_LEASE_MS);
  const handlerTimeoutMs = checkDuration('handlerTimeoutMs', options.handlerTimeoutMs, 'timer', 10_000);
  const storeTimeoutMs = checkDuration('storeTimeoutMs', options.storeTimeoutMs, 'timer', 5_000);
  const bodyTimeoutMs = checkDuration('bodyTimeoutMs', options.bodyTimeoutMs, 'timer', 10_000);
  const retentionMs = checkDuration('retentionMs', options.retentionMs, 'retention', 7 * DAY_MS);
  // A claim is taken, then onPayment runs, then complete is sent: the lease
  // must outlive the handler and both store calls around it, or a retry could
  // claim the delivery again while the first run is still being recorded. A
  // delivery onPayment parks also runs deadLetter (its own handlerTimeoutMs)
  // before complete, so with deadLetter the lease must outlive both.
  const handlers = options.deadLetter === undefined ? 1 : 2;
  const shortestLeaseMs = handlers * handlerTimeoutMs + 2 * storeTimeoutMs;
  if (!(leaseMs > shortestLeaseMs)) {
    const bound = handlers === 1 ? 'handlerTimeoutMs' : '2 × handlerTimeoutMs (onPayment, then deadLetter)';
    throw misuse(
      `leaseMs (${leaseMs}) must be longer than ${bound} + 2 × storeTimeoutMs (${shortestLeaseMs} ms): ` +
        'a claim must outlive its handlers and the store calls around them.',
    );
  }
  const { toleranceMs } = resolveClock(options.toleranceMs === undefined ? {} : { toleranceMs: options.toleranceMs });
  if (retentionMs < 2 * toleranceMs) {
    throw misuse(
      `retentionMs (${retentionMs}) must be at least twice toleranceMs (${toleranceMs}), ` +
        'so a replayed delivery is either remembered or stale.',
    );
  }
  // The default store keeps the handler's clock, so a test that moves `now` past a lease or a retention sees it pass.
  const { now } = options;
  const store: DedupStore =
    options.store ?? createMemoryStore(now === undefined ? undefined : { now: () => resolveClock({ now }).now });
  for (const method of ['claim', 'complete', 'release'] as const) {
    if (typeof store?.[method] !== 'function') {
      throw misuse(`store must be a DedupStore (claim, complete, release); ${method} is missing.`);
    }
  }
  if (options.dedupKey !== undefined && typeof options.dedupKey !== 'function') {
    throw misuse(`${factory}: dedupKey must be a function of the webhook.`);
  }
  return {
    factory,
    options,
    verifier,
    ready: () => verifier.ready(),
    maxBodyBytes: verifier.maxBodyBytes,
    store,
    dedupKey: options.dedupKey ?? defaultDedupKey,
    leaseMs,
    retentionMs,
    handlerTimeoutMs,
    storeTimeoutMs,
    bodyTimeoutMs,
    exposeErrors: options.exposeErrors === true,
  };
}
