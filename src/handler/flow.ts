// The one delivery flow behind payhook/web and payhook/node:
//   method → body (read by the adapter's reader, within its limits) → verify
//   → claim → onPayment within its deadline → complete / release → answer.
// It returns a plain, frozen Answer; the adapters only translate their
// platform's request into a DeliveryInput and the Answer into a response.
// Internal.
import { captureDelivery } from '../capture.js';
import type { ClaimResult } from '../dedup/store.js';
import { isPayhookError, PayhookError } from '../errors.js';
import { describeError, misuse } from '../lib/misuse.js';
import type { VerifyWebhookError, VerifyWebhookResult, WebhookRequest } from '../verify-webhook.js';
import type { PaymentWebhook } from '../webhook/types.js';
import { handledAnswer, type Answer } from './answer.js';
import { runWithin } from './deadline.js';
import type { InvalidPayloadDelivery, PaymentContext } from './hooks.js';
import type { WebhookHandlerOptions } from './options.js';
import { receiveBody, type DeliveryInput } from './receive.js';
import { createRefuse } from './refuse.js';
import { createReporter } from './report.js';
import { resolveSettings, type HandlerFactory } from './settings.js';
import { createStoreCalls } from './store-calls.js';

/** Internal: runs one delivery to its answer; never rejects. */
export type Deliver = (input: DeliveryInput) => Promise<Answer>;

/** Internal: checks `options` (throwing `INVALID_ARGUMENT` naming `factory`) and returns the flow. */
export function createDeliveryFlow(options: WebhookHandlerOptions, factory: HandlerFactory): Deliver {
  const settings = resolveSettings(options, factory);
  const reporter = createReporter(options.logger);
  const stores = createStoreCalls(settings, reporter);
  const { onError, onDuplicate, onSignatureMismatch, onInvalidPayload, deadLetter } = options;
  const { handlerTimeoutMs } = settings;
  const { log, hook } = reporter;
  const refuse = createRefuse(onError, reporter, settings.exposeErrors);
  // Import the keys now, so the first delivery does not wait and a bad key
  // is logged at start-up; deliveries still see the error.
  settings.ready().catch((error: unknown) => {
    log({
      level: 'error',
      event: 'misconfigured',
      message: `The public key cannot be used: ${describeError(error)}`,
      error,
    });
  });

  async function verify(request: WebhookRequest, started: number): Promise<Answer> {
    let result: VerifyWebhookResult;
    try {
      result = await settings.verifier.verify(request);
    } catch (error) {
      // Only misconfiguration gets here (a bad key, a clock that returns no time).
      const code = isPayhookError(error) ? error.code : 'INVALID_ARGUMENT';
      return refuse(code, `The webhook handler is misconfigured: ${describeError(error)}`, {
        cause: error,
        event: 'misconfigured',
        level: 'error',
      });
    }
    if (result.ok) return claim(result.webhook, result.timestamp, started);
    const { error } = result;
    if (error.code === 'SIGNATURE_MISMATCH' && onSignatureMismatch !== undefined) {
      // Captured from the bytes verified (never the stream again), after the answer is on its way.
      captureDelivery(request).then(
        (capture) => hook((req: WebhookRequest) => onSignatureMismatch(req, { capture }), request),
        (cause: unknown) =>
          log({
            level: 'warn',
            event: 'hook-failed',
            message: `Could not capture the delivery: ${describeError(cause)}`,
          }),
      );
    }
    if (error.code === 'INVALID_PAYLOAD') return invalidPayload(request, error, started);
    return refuse(error.code, error.message, { event: 'rejected', level: 'warn', started });
  }

  /** Authentic but not understood: reported; dead-lettered when the merchant opted in, else refused (kept). */
  async function invalidPayload(request: WebhookRequest, error: VerifyWebhookError, started: number): Promise<Answer> {
    const delivery: InvalidPayloadDelivery = {
      code: 'INVALID_PAYLOAD',
      message: error.message,
      ...(error.issues === undefined ? {} : { issues: error.issues }),
      request,
    };
    hook(onInvalidPayload, delivery);
    if (deadLetter === undefined) {
      return refuse('INVALID_PAYLOAD', error.message, { event: 'invalid-payload', level: 'error', started });
    }
    const run = await runWithin(
      () => deadLetter(delivery),
      handlerTimeoutMs,
      new AbortController(),
      () => undefined,
    );
    if (run.kind === 'done') {
      log({
        level: 'warn',
        event: 'dead-lettered',
        message: `Signed but not understood (${error.message}); handed to deadLetter and answered 200.`,
        status: 200,
        code: 'INVALID_PAYLOAD',
        durationMs: Date.now() - started,
      });
      return handledAnswer(false);
    }
    const cause = run.kind === 'threw' ? run.error : undefined;
    const message =
      run.kind === 'threw'
        ? `deadLetter threw: ${describeError(run.error)}`
        : `deadLetter did not finish within ${handlerTimeoutMs} ms; the service will retry.`;
    return refuse('HANDLER_FAILED', message, { cause, event: 'handler-failed', level: 'error', started });
  }

  async function claim(webhook: PaymentWebhook, timestamp: number, started: number): Promise<Answer> {
    const { transactionId } = webhook;
    let key: string;
    try {
      key = settings.dedupKey(webhook);
      if (typeof key !== 'string' || key === '') throw misuse('dedupKey must return a non-empty string.');
    } catch (error) {
      return refuse('HANDLER_FAILED', `dedupKey failed: ${describeError(error)}`, {
        cause: error,
        event: 'handler-failed',
        level: 'error',
        transactionId,
      });
    }
    let claimed: ClaimResult;
    try {
      claimed = await stores.claim(key);
    } catch (error) {
      return refuse('STORE_UNAVAILABLE', describeError(error), {
        key,
        cause: error,
        event: 'store-unavailable',
        level: 'error',
        transactionId,
        started,
      });
    }
    if (claimed.status === 'completed') {
      hook(onDuplicate, { key, state: 'completed', webhook });
      const message = 'Already handled; answered 200 without calling onPayment.';
      log({ level: 'info', event: 'duplicate', message, status: 200, key, transactionId });
      return handledAnswer(true);
    }
    if (claimed.status !== 'claimed') {
      hook(onDuplicate, { key, state: 'in-progress', webhook });
      // Not answered 200, so onError hears of it too (a claim that stays in
      // progress across retries is worth an alert).
      return refuse('DELIVERY_IN_PROGRESS', 'Another worker is handling this delivery; retry later.', {
        key,
        event: 'in-progress',
        level: 'info',
        transactionId,
      });
    }
    return handle(webhook, { key, token: claimed.token, timestamp, started });
  }

  async function handle(
    webhook: PaymentWebhook,
    claimed: { key: string; token: string; timestamp: number; started: number },
  ): Promise<Answer> {
    const { key, token, timestamp, started } = claimed;
    const { transactionId } = webhook;
    const controller = new AbortController();
    const context: PaymentContext = { key, timestamp, signal: controller.signal };
    const run = await runWithin(
      () => options.onPayment(webhook, context),
      handlerTimeoutMs,
      controller,
      () => new PayhookError('HANDLER_FAILED', `onPayment did not finish within ${handlerTimeoutMs} ms.`),
    );
    const failed = { key, event: 'handler-failed', level: 'error', transactionId, started } as const;
    if (run.kind === 'threw') {
      const released = await release(key, token, transactionId);
      const stays = released ? '' : ' (the claim stays until its lease expires)';
      return refuse('HANDLER_FAILED', `onPayment threw: ${describeError(run.error)}${stays}`, {
        ...failed,
        cause: run.error,
      });
    }
    if (run.kind === 'late') {
      return refuse(
        'HANDLER_FAILED',
        `onPayment did not finish within ${handlerTimeoutMs} ms; the service will retry.`,
        {
          ...failed,
          event: 'handler-timeout',
          after: settleLate(run.work, key, token, transactionId, started),
        },
      );
    }
    try {
      await stores.complete(key, token);
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
    return handledAnswer(false);
  }

  /** Releases a claim after its handler failed; false (and logged) when the store could not. */
  async function release(key: string, token: string, transactionId: string): Promise<boolean> {
    try {
      await stores.release(key, token);
      return true;
    } catch (error) {
      log({
        level: 'error',
        event: 'bookkeeping-failed',
        message: `Could not release the claim: ${describeError(error)} (the lease will expire).`,
        key,
        transactionId,
        error,
      });
      return false;
    }
  }

  /** After the answer: settles a claim whose handler missed its deadline, when the handler does. */
  function settleLate(work: Promise<unknown>, key: string, token: string, transactionId: string, started: number) {
    const settled = (message: string) => () =>
      log({
        level: 'warn',
        event: 'late-handler-settled',
        message,
        key,
        transactionId,
        durationMs: Date.now() - started,
      });
    return work
      .then(
        () =>
          stores
            .complete(key, token)
            .then(settled('onPayment finished after its deadline; the delivery is now recorded as handled.')),
        () =>
          stores
            .release(key, token)
            .then(settled('onPayment failed after its deadline; the claim was released for the retry.')),
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

  async function deliver(input: DeliveryInput): Promise<Answer> {
    const started = Date.now();
    const { method } = input;
    if (typeof method !== 'string' || method.toUpperCase() !== 'POST') {
      return refuse('METHOD_NOT_ALLOWED', `Webhooks arrive as POST, not ${String(method)}.`, {
        event: 'rejected',
        level: 'warn',
        headers: { allow: 'POST' },
      });
    }
    const received = await receiveBody(input, settings, refuse, log);
    if ('status' in received) return received;
    return verify({ method, url: input.url, headers: input.headers, body: received.body }, started);
  }

  return (input) =>
    // Every outcome above is answered; this only keeps a bug from leaving a
    // request unanswered (or a listener's promise rejected).
    deliver(input).catch((error: unknown) =>
      refuse('HANDLER_FAILED', `Unexpected failure: ${describeError(error)}`, {
        cause: error,
        event: 'handler-failed',
        level: 'error',
      }),
    );
}
