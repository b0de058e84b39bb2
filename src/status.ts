/**
 * A payment's status, normalised from whatever spelling the service sent.
 *
 * - `SUCCEEDED`: the money moved (`SUCCEEDED`, `succeeded`, `success`, any case).
 * - `FAILED`: the payment failed (`FAILED`, `failed`, any case).
 * - `PROCESSING`: not final yet (seen in the service's query results).
 * - `UNKNOWN`: anything else. Never treat it as paid.
 *
 * @example
 * ```ts
 * import type { PaymentStatus } from 'payhook';
 *
 * const isFinal = (status: PaymentStatus): boolean => status === 'SUCCEEDED' || status === 'FAILED';
 * ```
 */
export type PaymentStatus = 'SUCCEEDED' | 'FAILED' | 'PROCESSING' | 'UNKNOWN';

/**
 * Normalises a status as the service sends it (spec §3). The comparison
 * ignores letter case and surrounding whitespace; `succeeded` and `success`
 * mean `SUCCEEDED`, `failed` means `FAILED`, `processing` means `PROCESSING`,
 * and everything else — other words, empty text, numbers, `null`, objects —
 * is `UNKNOWN`, so an unexpected value can never pass for a success.
 *
 * @param raw - The status as received (any value).
 * @returns The normalised status.
 *
 * @example
 * ```ts
 * import { normaliseStatus } from 'payhook';
 *
 * normaliseStatus(' Success ');  // 'SUCCEEDED'
 * normaliseStatus('FAILED');     // 'FAILED'
 * normaliseStatus('refunded');   // 'UNKNOWN'
 * normaliseStatus(200);          // 'UNKNOWN'
 * ```
 */
export function normaliseStatus(raw: unknown): PaymentStatus {
  if (typeof raw !== 'string') return 'UNKNOWN';
  // toLowerCase, not toLocaleLowerCase: the result must not depend on the
  // runtime's locale (a Turkish locale lower-cases `I` differently).
  const status = raw.trim().toLowerCase();
  return status === 'succeeded' || status === 'success'
    ? 'SUCCEEDED'
    : status === 'failed'
      ? 'FAILED'
      : status === 'processing'
        ? 'PROCESSING'
        : 'UNKNOWN';
}
