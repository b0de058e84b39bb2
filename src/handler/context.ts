// What onPayment receives beside the webhook. Its abort signal is made only
// when read: most handlers never read it, and an AbortController per
// delivery is a cost every delivery would pay. Internal.
import type { HandlerAbortSignal, PaymentContext } from './hooks.js';

/** Internal: the context of one delivery's `onPayment`. */
export class DeliveryContext implements PaymentContext {
  readonly key: string;
  readonly timestamp: number;
  readonly webhookUrl: string | undefined;
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  constructor(key: string, timestamp: number, webhookUrl: string | undefined) {
    this.key = key;
    this.timestamp = timestamp;
    this.webhookUrl = webhookUrl;
  }

  get signal(): HandlerAbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Aborts the signal, now if it was read, else as soon as it is. */
  static abort(context: DeliveryContext, reason: unknown): void {
    context.#aborted = true;
    context.#reason = reason;
    context.#controller?.abort(reason);
  }
}
