// The one delivery flow behind payhook/web and payhook/node, read top to
// bottom: method → body → verify → claim → onPayment → settle → answer.
// Each step returns what the next needs, or the answer that ends the
// delivery; no step calls the next. The adapters only translate their
// platform's request into a DeliveryInput and the Answer into a response. Internal.
import { isPayhookError, PayhookError, type PayhookErrorCode } from '../lib/errors.js';
import { getHeader } from '../lib/headers.js';
import { describeError, misuse } from '../lib/misuse.js';
import { holdsKey } from '../lib/test-key.js';
import { checkedOutcome, isParked } from '../park.js';
import { UNSIGNED } from '../verifier.js';
import type { VerifyWebhookError, VerifyWebhookResult, WebhookRequest } from '../verify-webhook.js';
import type { PaymentWebhook } from '../webhook/types.js';
import { Answer, HANDLED, withAfter } from './answer.js';
import { DeliveryContext } from './context.js';
import { deadLetterInvalid, deadLetterLatePark, deadLetterParked } from './dead-letter.js';
import { Deadline } from './deadline.js';
import type { WebhookHandlerOptions } from './options.js';
import { CLOSE, receiveBody, type DeliveryInput } from './receive.js';
import { captureMismatch, createReporter, DeliveryReport, describeChecks, type Reporter } from './report.js';
import type { SchemeFactory } from '../lib/signature-scheme.js';
import { resolveSettings, type HandlerFactory, type Settings } from './settings.js';
import { claimDelivery, createStoreCalls, type StoreCalls } from './store-calls.js';

const ALLOW_POST = { allow: 'POST' };

/** Internal: the start-up warning of a handler whose publicKeys hold payhook's published test key. */
export const TEST_KEY_WARNING: string =
  "publicKeys holds payhook's published test key (TEST_KEY_PAIR): anyone can sign what this handler accepts. " +
  'Never in production.';

/** A verified webhook whose `field` is empty text, which `needed` says what for: a payload not understood. */
function emptyField(
  field: 'id' | 'transactionId',
  needed: string,
): VerifyWebhookError & { readonly code: 'INVALID_PAYLOAD' } {
  const issue = { path: field, message: 'expected non-empty string, got empty string' };
  return { code: 'INVALID_PAYLOAD', message: `The webhook has an empty ${field}, ${needed}`, issues: [issue] };
}

const EMPTY_ID = emptyField('id', 'which the default dedupKey needs to tell deliveries apart.');
const EMPTY_TRANSACTION_ID = emptyField(
  'transactionId',
  'which tells the payment that paid an order from another: a second payment would pass for the first.',
);

/** Runs one delivery to its answer. */
async function deliver(flow: Flow, input: DeliveryInput, deadline: Deadline, report: DeliveryReport): Promise<Answer> {
  const { settings, stores } = flow;
  const { method, url, headers } = input;
  if (typeof method !== 'string' || method.toUpperCase() !== 'POST') {
    const message = `Webhooks arrive as POST, not ${String(method)}.`;
    return report.refuse('METHOD_NOT_ALLOWED', message, { headers: ALLOW_POST });
  }

  // Nothing else is read for a request without a signature, its body least of all.
  if (!getHeader(headers, 'signature')) return report.refuse('MISSING_SIGNATURE', UNSIGNED, { headers: CLOSE });

  const received = await receiveBody(input, settings, deadline, report);
  if (received instanceof Answer) return received;
  const request: WebhookRequest = { method, url, headers, body: received.body };

  const verified = await verify(settings, request, report);
  if (verified instanceof Answer) return verified;
  if (!verified.ok) {
    const { error } = verified;
    if (error.code === 'INVALID_PAYLOAD') return deadLetterInvalid(settings, request, error, deadline, report);
    if (error.code !== 'SIGNATURE_MISMATCH') return report.refuse(error.code, error.message);
    captureMismatch(settings.options, request, report);
    const changed = 'note' in input.body && input.body.note !== undefined ? `${input.body.note} ` : '';
    return report.refuse(error.code, error.message, { note: changed + flow.checks });
  }
  const { webhook, timestamp, webhookUrl } = verified;
  // A lenient parse keeps an empty id, but the default key cannot tell such a
  // delivery from another payment's: answered as a duplicate, one would be lost.
  if (webhook.id === '' && settings.options.dedupKey === undefined) {
    return deadLetterInvalid(settings, request, EMPTY_ID, deadline, report);
  }
  // Nor can an order tell one payment from another without it (paid twice, or a FAILED of the paying transaction).
  if (webhook.transactionId === '') {
    return deadLetterInvalid(settings, request, EMPTY_TRANSACTION_ID, deadline, report);
  }

  const key = dedupKey(settings, webhook, report);
  if (key instanceof Answer) return key;
  report.bind(webhook.transactionId, key);
  const claimedAt = Date.now();
  const token = await claimDelivery(settings, stores, key, webhook, deadline, report);
  if (token instanceof Answer) return token;

  const context = new DeliveryContext(key, timestamp, webhookUrl);
  const outcome = await deadline.run(
    async () => checkedOutcome(await settings.options.onPayment(webhook, context)),
    settings.handlerTimeoutMs,
  );
  if (outcome.kind === 'late') {
    const message = `onPayment did not finish within ${settings.handlerTimeoutMs} ms; the service will retry.`;
    DeliveryContext.abort(context, new PayhookError('HANDLER_FAILED', message));
    const claim = { webhook, request, timestamp, key, token, claimedAt };
    const work = outcome.work.then(async (value) => {
      if (isParked(value) && !(await deadLetterLatePark(settings, value, claim, deadline, report))) {
        throw new Error('onPayment parked the delivery, but deadLetter failed');
      }
      return value;
    });
    const after = stores.settleLate(work, key, token, claimedAt, deadline, report, 'onPayment');
    return report.refuse('HANDLER_FAILED', message, { event: 'handler-timeout', level: 'error', after });
  }
  if (outcome.kind === 'threw') {
    const { released, after } = await stores.release(key, token, deadline, report);
    // A release that missed its deadline may still land (it goes on with the answer, to waitUntil).
    const stays = released ? '' : ' (the claim may stay until its lease expires)';
    const message = `onPayment threw: ${describeError(outcome.error)}${stays}`;
    // A store of payhook's inside onPayment (the PostgreSQL inbox) could not reach its database: an outage, 503.
    const outage = isPayhookError(outcome.error) && outcome.error.code === 'STORE_UNAVAILABLE';
    return report.refuse(outage ? 'STORE_UNAVAILABLE' : 'HANDLER_FAILED', message, {
      cause: outcome.error,
      event: 'handler-failed',
      level: 'error',
      ...(after && { after }),
    });
  }
  if (isParked(outcome.value)) {
    const parked = { webhook, request, timestamp, key, token, claimedAt };
    return deadLetterParked(settings, stores, outcome.value, parked, deadline, report);
  }

  const { after } = await stores.record(key, token, deadline, report);
  report.log('info', 'handled', 'Delivery handled.', { status: 200 });
  return withAfter(HANDLED, after);
}

/** Internal: runs one delivery to its answer; never rejects. */
export type Deliver = (input: DeliveryInput) => Promise<Answer>;

/** What every delivery of one handler shares. */
interface Flow {
  readonly settings: Settings;
  readonly reporter: Reporter;
  readonly stores: StoreCalls;
  /** What signatures are checked against, for a SIGNATURE_MISMATCH's log line. */
  readonly checks: string;
}

/**
 * Internal: checks `options` (throwing `INVALID_ARGUMENT` naming `factory`) and returns the flow; `scheme` is how
 * signatures are checked (Web Crypto unless the adapter's runtime offers better).
 */
export function createDeliveryFlow(
  options: WebhookHandlerOptions,
  factory: HandlerFactory,
  scheme?: SchemeFactory,
): Deliver {
  const settings = resolveSettings(options, factory, scheme);
  const flow: Flow = {
    settings,
    reporter: createReporter(options.logger),
    stores: createStoreCalls(settings),
    checks: describeChecks(options),
  };
  // Import the keys now, so the first delivery does not wait and a bad key
  // is logged at start-up; deliveries still see the error.
  settings.ready().catch((error: unknown) => {
    const message = `The public key cannot be used: ${describeError(error)}`;
    void flow.reporter.log({ level: 'error', event: 'misconfigured', message, error });
  });
  if (holdsKey(options.publicKeys, 'test')) {
    void flow.reporter.log({ level: 'warn', event: 'misconfigured', message: TEST_KEY_WARNING });
  }
  return (input) => {
    const deadline = new Deadline();
    const report = new DeliveryReport(flow.reporter, options.onError, settings.exposeErrors);
    const answered = (answer: Answer): Answer => {
      deadline.answered();
      // The bookkeeping after the answer, then the merchant's async hooks and logger: all of it goes to waitUntil.
      const after = report.settled(answer.after);
      return after === answer.after ? answer : new Answer(answer.status, answer.body, answer.headers, after);
    };
    return deliver(flow, input, deadline, report).then(answered, (error: unknown) => {
      // Every outcome above is answered; this only keeps a bug from leaving a
      // request unanswered (or a listener's promise rejected).
      const message = `Unexpected failure: ${describeError(error)}`;
      return answered(
        report.refuse('HANDLER_FAILED', message, { cause: error, event: 'handler-failed', level: 'error' }),
      );
    });
  };
}

/** The codes of a misconfiguration, each answered 500: what `verify` throws keeps its code only when it is one. */
const MISCONFIGURED: ReadonlySet<PayhookErrorCode> = new Set(['INVALID_KEY', 'WEAK_KEY', 'INVALID_ARGUMENT']);

/**
 * Verifies; only misconfiguration throws (a bad key, a clock that returns no time), answered here. A request's
 * code thrown by the merchant's clock or webhookUrl function is answered INVALID_ARGUMENT: as a 4xx it would
 * blame the sender, and its message would reach the sender (a 4xx body carries it, whatever exposeErrors says).
 */
async function verify(
  settings: Settings,
  request: WebhookRequest,
  report: DeliveryReport,
): Promise<VerifyWebhookResult | Answer> {
  try {
    return await settings.verifier.verify(request);
  } catch (error) {
    const code = isPayhookError(error) && MISCONFIGURED.has(error.code) ? error.code : 'INVALID_ARGUMENT';
    const message = `The webhook handler is misconfigured: ${describeError(error)}`;
    return report.refuse(code, message, { cause: error, event: 'misconfigured', level: 'error' });
  }
}

function dedupKey(settings: Settings, webhook: PaymentWebhook, report: DeliveryReport): string | Answer {
  try {
    const key = settings.dedupKey(webhook);
    if (typeof key === 'string' && key !== '') return key;
    throw misuse('dedupKey must return a non-empty string.');
  } catch (error) {
    report.bind(webhook.transactionId);
    const message = `dedupKey failed: ${describeError(error)}`;
    return report.refuse('HANDLER_FAILED', message, { cause: error, event: 'handler-failed', level: 'error' });
  }
}
