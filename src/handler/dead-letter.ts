// Dead-lettering: a genuine delivery that will not be applied, handed to the
// merchant's deadLetter within handlerTimeoutMs. Two kinds reach it: a
// payload payhook does not understand (answered 400 when there is no
// deadLetter, so the service keeps it), and a delivery onPayment parked
// (answered 200 and recorded as handled either way). Internal.
import { getHeader } from '../lib/headers.js';
import { describeError } from '../lib/misuse.js';
import { describeParked, type Parked } from '../park.js';
import type { VerifyWebhookError, WebhookRequest } from '../verify-webhook.js';
import type { PaymentWebhook } from '../webhook/types.js';
import { answer, HANDLED, PARKED, type Answer } from './answer.js';
import type { Deadline } from './deadline.js';
import type { DeadLetterDelivery, InvalidPayloadDelivery, ParkedDelivery } from './hooks.js';
import type { DeliveryReport } from './report.js';
import type { Settings } from './settings.js';
import type { StoreCalls } from './store-calls.js';

/** Internal: hands `delivery` to `deadLetter`; the 500 to answer when it throws or is late, else undefined. */
async function handOff(
  settings: Settings,
  delivery: DeadLetterDelivery,
  deadline: Deadline,
  report: DeliveryReport,
  afterAnswer = false,
): Promise<Answer | undefined> {
  const { deadLetter } = settings.options;
  if (deadLetter === undefined) return undefined;
  const { handlerTimeoutMs } = settings;
  const outcome = await deadline.run(() => deadLetter(delivery), handlerTimeoutMs);
  if (outcome.kind === 'done') return undefined;
  const message =
    outcome.kind === 'threw'
      ? `deadLetter threw: ${describeError(outcome.error)}`
      : `deadLetter did not finish within ${handlerTimeoutMs} ms; the service will retry.`;
  const cause = outcome.kind === 'threw' ? outcome.error : undefined;
  if (afterAnswer) {
    // The delivery was answered (500) already: logged, not refused a second time.
    report.log('error', 'handler-failed', `${message} The claim is released for the retry.`, { error: cause });
    return answer(500, { ok: false });
  }
  return report.refuse('HANDLER_FAILED', message, { cause, event: 'handler-failed', level: 'error' });
}

/** Internal: signed and fresh but not understood: reported; dead-lettered when the merchant opted in, else 400. */
export async function deadLetterInvalid(
  settings: Settings,
  request: WebhookRequest,
  error: VerifyWebhookError,
  deadline: Deadline,
  report: DeliveryReport,
): Promise<Answer> {
  const delivery: InvalidPayloadDelivery = {
    code: 'INVALID_PAYLOAD',
    message: error.message,
    ...(error.issues === undefined ? {} : { issues: error.issues }),
    request,
    // Only a fresh timestamp gets this far, so the header holds plain digits.
    timestamp: Number(getHeader(request.headers, 'x-api-timestamp')),
  };
  report.hook(settings.options.onInvalidPayload, delivery);
  if (settings.options.deadLetter === undefined) {
    return report.refuse('INVALID_PAYLOAD', error.message, { event: 'invalid-payload', level: 'error' });
  }
  const failed = await handOff(settings, delivery, deadline, report);
  if (failed !== undefined) return failed;
  const message = `Signed but not understood (${error.message}); handed to deadLetter and answered 200.`;
  report.log('warn', 'dead-lettered', message, { status: 200, code: 'INVALID_PAYLOAD' });
  return HANDLED;
}

/** Internal: what a parked delivery is, beside its reason. */
export interface ParkedClaim {
  readonly webhook: PaymentWebhook;
  readonly request: WebhookRequest;
  readonly timestamp: number;
  readonly key: string;
  readonly token: string;
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
  const failed = await handOff(settings, parkedDelivery(parked, claim), deadline, report);
  if (failed !== undefined) {
    // Not kept anywhere: the retry runs onPayment again.
    await stores.release(key, token, deadline, report);
    return failed;
  }
  await stores.record(key, token, deadline, report);
  const message = `Parked by onPayment (${describeParked(parked)}); answered 200 and recorded as handled, never retried.`;
  report.log('warn', 'parked', message, { status: 200 });
  return PARKED;
}

/**
 * Internal: a park that came after the answer (onPayment missed its deadline) still reaches `deadLetter` before
 * its claim is completed; false when the hand-off failed, so the claim is released and the retry parks it again.
 */
export async function deadLetterLatePark(
  settings: Settings,
  parked: Parked,
  claim: ParkedClaim,
  deadline: Deadline,
  report: DeliveryReport,
): Promise<boolean> {
  return (await handOff(settings, parkedDelivery(parked, claim), deadline, report, true)) === undefined;
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
