// The wire format between createDurableObjectStore (the Worker side) and
// PayhookDedupObject (the Durable Object side). Internal: both files import
// it, so one build's two ends agree; a Worker sharing the object of another
// Worker's build (script_name) may not, and each end refuses what it cannot
// read (an error status, a 503 for the delivery). A success the Worker side
// cannot read comes from another class bound by mistake: INVALID_ARGUMENT,
// a 500. Not re-exported.

/** The operations the object answers, one path each. */
export type Operation = 'claim' | 'complete' | 'release';

/**
 * The stub's `fetch` needs an absolute URL; the host is never resolved (the
 * request goes to the object, not to the network).
 */
export const OPERATION_URL = 'https://payhook-dedup.invalid/';

/** The JSON body of each operation. `retentionMs: null` means "keep forever" (JSON has no Infinity). */
export interface OperationBodies {
  claim: { leaseMs: number };
  complete: { token: string; retentionMs: number | null };
  release: { token: string };
}

/** The JSON the object answers on failure (status 400 or 500). */
export interface FailureBody {
  code: string;
  message: string;
}
