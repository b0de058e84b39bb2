/**
 * explainSignatureMismatch: explain as a handler's debug hook, rate-limited
 * because anyone can send a request with a bad signature.
 *
 * @module
 */
import { isThenable } from '../lib/callback.js';
import { misuse } from '../lib/misuse.js';
import { oneLine } from '../lib/one-line.js';
import { explainVerificationFailure } from './diagnose.js';
import type { ExplainOptions, ExplainRequest, VerificationDiagnosis } from './types.js';

/**
 * Options for {@link explainSignatureMismatch}.
 *
 * @example
 * ```ts
 * import type { ExplainHookOptions } from 'payhook/explain';
 *
 * const options: ExplainHookOptions = { report: (diagnosis) => console.warn(diagnosis.message), maxPerMinute: 5 };
 * ```
 */
export interface ExplainHookOptions {
  /**
   * Receives each diagnosis. An async one is awaited: its rejection rejects
   * the hook, which a handler logs as a failed hook. A diagnosis that is
   * slow to report does not hold up the next one.
   * @defaultValue `console.warn` of `payhook: <message>`
   */
  report?: (diagnosis: VerificationDiagnosis) => void;
  /**
   * At most this many diagnoses a minute, and one at a time: each costs up
   * to a few hundred signature checks, and anyone can send a request with a
   * bad signature. The rest are skipped.
   * @defaultValue 10
   */
  maxPerMinute?: number;
}

/**
 * An opt-in debug hook for a handler's `onSignatureMismatch` option: on
 * every delivery refused with `SIGNATURE_MISMATCH` it runs
 * {@link explainVerificationFailure} with the handler's own options (after
 * the 401 is answered) and reports the diagnosis, so your logs say
 * "signature would verify with Host `shop.example.kg` (your request has
 * `internal:8080`): set `webhookUrl` …". It is rate-limited (10 a minute,
 * one at a time) because anyone can send a bad signature; turn it on while
 * setting up or debugging.
 *
 * @throws PayhookError `INVALID_ARGUMENT` when
 * `maxPerMinute` is not a whole number of at least 0 or `report` is not a
 * function.
 *
 * @example
 * ```ts
 * import { createNodeWebhookHandler } from 'payhook/node';
 * import { explainSignatureMismatch } from 'payhook/explain';
 *
 * const options = {
 *   environment: 'production' as const,
 *   webhookUrl: 'https://shop.example.kg/webhooks/payments',
 *   onPayment: async () => {},
 * };
 * const handler = createNodeWebhookHandler({ ...options, onSignatureMismatch: explainSignatureMismatch(options) });
 * ```
 */
export function explainSignatureMismatch(
  options: ExplainOptions,
  hookOptions?: ExplainHookOptions,
): (request: ExplainRequest) => Promise<void> {
  const report =
    hookOptions?.report ??
    ((diagnosis: VerificationDiagnosis) => {
      (globalThis as { console?: { warn(message: string): void } }).console?.warn(
        `payhook: ${oneLine(diagnosis.message)}`,
      );
    });
  const limit = hookOptions?.maxPerMinute ?? 10;
  // NaN or a fraction would quietly lift the limit that keeps this hook cheap for anyone sending bad signatures.
  if (!Number.isSafeInteger(limit) || limit < 0) throw misuse('maxPerMinute must be a whole number, 0 or more.');
  if (typeof report !== 'function') throw misuse('report must be a function.');
  let windowStart = 0;
  let used = 0;
  let running = false;
  return async (request) => {
    const now = performance.now();
    if (now - windowStart >= 60_000) {
      windowStart = now;
      used = 0;
    }
    if (running || used >= limit) return;
    used++;
    running = true;
    let diagnosis: VerificationDiagnosis;
    try {
      diagnosis = await explainVerificationFailure(request, options);
    } finally {
      running = false;
    }
    // An async report is awaited, so its rejection reaches the caller (a handler logs a failed hook) rather than
    // surfacing unhandled; the next diagnosis does not wait for it.
    const reported: unknown = report(diagnosis);
    if (isThenable(reported)) await reported;
  };
}
