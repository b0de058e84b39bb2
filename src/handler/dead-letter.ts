// Dead-lettering: a genuine delivery that will not be applied, handed to the
// merchant's deadLetter within handlerTimeoutMs. Two kinds reach it: a
// payload payhook does not understand (answered 400 when there is no
// deadLetter, so the service keeps it), and a delivery onPayment parked
// (answered 200 and recorded as handled either way). Internal.
import { getHeader } from '../lib/headers.js';
import { PayhookError } from '../lib/errors.js';
import { parseJsonBody } from '../lib/json-body.js';
import { describeError } from '../lib/misuse.js';
import { describeParked, notFailed, type Parked } from '../park.js';
import type { VerifyWebhookError, WebhookRequest } from '../verify-webhook.js';
import type { PaymentWebhook } from '../webhook/types.js';
import { HANDLED, PARKED, withAfter, type Answer } from './answer.js';
import type { Deadline } from './deadline.js';
import type { DeadLetterDelivery, InvalidPayloadDelivery, ParkedDelivery } from './hooks.js';
import type { DeliveryReport } from './report.js';
import type { Settings } from './settings.js';
import type { StoreCalls } from './store-calls.js';

/** Why a hand-off to `deadLetter` failed: it threw, or missed `handlerTimeoutMs`. */
interface HandOffFailure {
  readonly message: string;
  readonly cause: unknown;
  /** It missed its deadline and still runs: rejects with what it throws, naming deadLetter. */
  readonly late?: Promise<unknown>;
}

/** Internal: hands `delivery` to `deadLetter` (when set); why that failed, else undefined. */
async function handOff(
  settings: Settings,
  delivery: DeadLetterDelivery,
  deadline: Deadline,
): Promise<HandOffFailure | undefined> {
  const { deadLetter } = settings.options;
  if (deadLetter === undefined) return undefined;
  const { handlerTimeoutMs } = settings;
  // A result that says it failed (a dead-letter endpoint's refused Response) is no hand-off.
  const outcome = await deadline.run(async () => notFailed(await deadLetter(delivery), 'deadLetter'), handlerTimeoutMs);
  if (outcome.kind === 'done') return undefined;
  if (outcome.kind === 'threw')
    return { message: `deadLetter threw: ${describeError(outcome.error)}`, cause: outcome.error };
  return {
    message: `deadLetter did not finish within ${handlerTimeoutMs} ms; the service will retry.`,
    cause: undefined,
    late: outcome.work.catch((error: unknown) => {
      throw new PayhookError('HANDLER_FAILED', `deadLetter threw: ${describeError(error)}`, { cause: error });
    }),
  };
}

/** The 500 for a hand-off that failed while the delivery is still unanswered. */
function refuseFailed(report: DeliveryReport, { message, cause }: HandOffFailure): Answer {
  return report.refuse('HANDLER_FAILED', message, { cause, event: 'handler-failed', level: 'error' });
}

/** Internal: signed and fresh but not understood: reported; dead-lettered when the merchant opted in, else 400. */
export async function deadLetterInvalid(
  settings: Settings,
  request: WebhookRequest,
  error: VerifyWebhookError & { readonly code: 'INVALID_PAYLOAD' },
  deadline: Deadline,
  report: DeliveryReport,
): Promise<Answer> {
  // Its log lines lead to the payment its body names (read again: only such rare deliveries pay for it).
  let named: unknown;
  try {
    named = parseJsonBody(request.body)?.['transactionId'];
  } catch {
    // verified, so it parses; a parsed body whose getter throws names nothing
  }
  if (typeof named === 'string' && named !== '') report.bind(named);
  const delivery: InvalidPayloadDelivery = {
    code: 'INVALID_PAYLOAD',
    message: error.message,
    issues: error.issues,
    request,
    // Only a fresh timestamp gets this far, so the header holds plain digits.
    timestamp: Number(getHeader(request.headers, 'x-api-timestamp')),
  };
  report.hook('onInvalidPayload', settings.options.onInvalidPayload, delivery);
  if (settings.options.deadLetter === undefined) {
    return report.refuse('INVALID_PAYLOAD', error.message, { event: 'invalid-payload', level: 'error' });
  }
  const failed = await handOff(settings, delivery, deadline);
  if (failed !== undefined)
    return withAfter(refuseFailed(report, failed), failed.late && settledLate(failed.late, report));
  const message = `Signed but not understood (${error.message}); handed to deadLetter and answered 200.`;
  report.log('warn', 'dead-lettered', message, { status: 200, code: 'INVALID_PAYLOAD' });
  return HANDLED;
}

/**
 * After the 500: says how a late hand-off of a payload not understood ended (never rejects). Nothing was claimed, so
 * there is nothing to settle; the retry reaches deadLetter again.
 */
function settledLate(late: Promise<unknown>, report: DeliveryReport): Promise<void> {
  return late.then(
    () => {
      const message =
        'deadLetter finished after its deadline (answered 500): the retry hands the delivery to it again.';
      report.log('warn', 'late-handler-settled', message);
    },
    (error: unknown) => {
      report.log('warn', 'late-handler-settled', `After its deadline: ${describeError(error)}.`, { error });
    },
  );
}

/** Internal: what a parked delivery is, beside its reason. */
export interface ParkedClaim {
  readonly webhook: PaymentWebhook;
  readonly request: WebhookRequest;
  readonly timestamp: number;
  readonly key: string;
  readonly token: string;
  /** `Date.now()` before the claim: whether its lease has lapsed when a late deadLetter ends. */
  readonly claimedAt: number;
}

/** Internal: `onPayment` parked the delivery: dead-lettered (when opted in), recorded as handled, answered 200. */
export async function deadLetterParked(
  settings: Settings,
  stores: StoreCalls,
  parked: Parked,
  claim: ParkedClaim,
  deadline: Deadline,
  report: DeliveryReport,
): Promise<Answer> {
  const { key, token } = claim;
  const failed = await handOff(settings, parkedDelivery(parked, claim), deadline);
  if (failed?.late !== undefined) {
    // Still running: the claim is kept until it ends, so a retry meanwhile does not park and dead-letter it again.
    const late = failed.late.then(() => {
      const message = `Parked by onPayment (${describeParked(parked)}); deadLetter finished after its deadline (answered 500): recorded as handled once its claim is settled, never retried.`;
      report.log('warn', 'parked', message);
    });
    const after = stores.settleLate(late, key, token, claim.claimedAt, deadline, report, 'deadLetter');
    return withAfter(refuseFailed(report, failed), after);
  }
  if (failed !== undefined) {
    // Not kept anywhere: the retry runs onPayment again.
    const { after } = await stores.release(key, token, deadline, report);
    return withAfter(refuseFailed(report, failed), after);
  }
  const { after } = await stores.record(key, token, deadline, report);
  const message = `Parked by onPayment (${describeParked(parked)}); answered 200 and recorded as handled, never retried.`;
  report.log('warn', 'parked', message, { status: 200 });
  return withAfter(PARKED, after);
}

/**
 * Internal: a park that came after the answer (onPayment missed its deadline) still reaches `deadLetter` before
 * its claim is completed, and is logged `parked` as one in time is; false when the hand-off failed, so the claim
 * is released and the retry parks it again.
 */
export async function deadLetterLatePark(
  settings: Settings,
  parked: Parked,
  claim: ParkedClaim,
  deadline: Deadline,
  report: DeliveryReport,
): Promise<boolean> {
  let failed = await handOff(settings, parkedDelivery(parked, claim), deadline);
  // Answered already, and its claim waits for this: a late deadLetter is waited for too.
  if (failed?.late !== undefined) {
    failed = await failed.late.then(
      () => undefined,
      (error: unknown) => ({ message: describeError(error), cause: error }),
    );
  }
  if (failed === undefined) {
    // No status: the answer was the 500 of the timeout. How the claim is settled is logged next.
    const message = `Parked by onPayment (${describeParked(parked)}) after its deadline (answered 500); recorded as handled once its claim is settled, never retried.`;
    report.log('warn', 'parked', message);
    return true;
  }
  // Answered (500) already: logged, not refused a second time.
  const message = `The claim is released for the retry: ${failed.message}`;
  report.log('error', 'handler-failed', message, { error: failed.cause });
  return false;
}

function parkedDelivery(parked: Parked, claim: ParkedClaim): ParkedDelivery {
  return {
    code: 'PARKED',
    reason: parked.park,
    message: parked.park,
    ...(parked.details === undefined ? {} : { details: parked.details }),
    webhook: claim.webhook,
    key: claim.key,
    request: claim.request,
    timestamp: claim.timestamp,
  };
}
