/**
 * A payment's status, normalised from whatever spelling the service sent.
 *
 * - `SUCCEEDED`: the money moved (`SUCCEEDED`, `succeeded`, `success`, any case). Final.
 * - `FAILED`: the payment failed (`FAILED`, `failed`, any case). Final.
 * - `CANCELED`: the payment was cancelled (`CANCELED` or `CANCELLED`, any case). Final, and not a success.
 * - `PROCESSING`: not final yet (seen in the service's query results).
 * - `PENDING`: not final yet (`PENDING`, any case).
 * - `UNKNOWN`: anything else (`PAID` and `EXPIRED` included: no document of the
 *   service names them). Never treat it as paid, and never as final.
 *
 * @example
 * ```ts
 * import { isFinalStatus, type PaymentStatus } from 'payhook';
 *
 * const label = (status: PaymentStatus): string => (isFinalStatus(status) ? `final: ${status}` : 'waiting');
 * ```
 */
export type PaymentStatus = 'SUCCEEDED' | 'FAILED' | 'CANCELED' | 'PROCESSING' | 'PENDING' | 'UNKNOWN';

/** Lower-cased spellings and what they mean; anything else is UNKNOWN. */
const SPELLINGS: ReadonlyMap<string, PaymentStatus> = /* @__PURE__ */ new Map<string, PaymentStatus>([
  ['succeeded', 'SUCCEEDED'],
  ['success', 'SUCCEEDED'],
  ['failed', 'FAILED'],
  ['canceled', 'CANCELED'],
  ['cancelled', 'CANCELED'],
  ['processing', 'PROCESSING'],
  ['pending', 'PENDING'],
]);

/**
 * Normalises a status as the service sends it. The comparison
 * ignores letter case and surrounding whitespace: `succeeded` and `success`
 * mean `SUCCEEDED`, `failed` means `FAILED`, `canceled` and `cancelled` mean
 * `CANCELED`, `processing` means `PROCESSING`, `pending` means `PENDING`, and
 * everything else — other words (`paid`, `expired`), empty text, numbers,
 * `null`, objects — is `UNKNOWN`, so an unexpected value can never pass for a
 * success.
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
 * normaliseStatus('Cancelled');  // 'CANCELED'
 * normaliseStatus('pending');    // 'PENDING'
 * normaliseStatus('PAID');       // 'UNKNOWN'
 * normaliseStatus(200);          // 'UNKNOWN'
 * ```
 */
export function normaliseStatus(raw: unknown): PaymentStatus {
  if (typeof raw !== 'string') return 'UNKNOWN';
  // toLowerCase, not toLocaleLowerCase: the result must not depend on the
  // runtime's locale (a Turkish locale lower-cases `I` differently).
  return SPELLINGS.get(raw.trim().toLowerCase()) ?? 'UNKNOWN';
}

/**
 * Whether a status is final: the payment will not move on from it.
 * `SUCCEEDED`, `FAILED` and `CANCELED` are final; `PROCESSING`, `PENDING` and
 * `UNKNOWN` are not (an unknown status says nothing, so look the payment up).
 *
 * @param status - A normalised status (`webhook.status`).
 * @returns `true` for `SUCCEEDED`, `FAILED` and `CANCELED`; `false` otherwise.
 *
 * @example
 * ```ts
 * import { isFinalStatus } from 'payhook';
 *
 * isFinalStatus('CANCELED');  // true
 * isFinalStatus('PENDING');   // false
 * isFinalStatus('UNKNOWN');   // false
 * ```
 */
export function isFinalStatus(status: PaymentStatus): boolean {
  return status === 'SUCCEEDED' || status === 'FAILED' || status === 'CANCELED';
}
