// The store's calls as the delivery flow makes them, the claim step with the
// answers it leads to, and what happens to a claim once the answer is decided: each call within storeTimeoutMs (on the
// delivery's deadline), a failure or a timeout turned into STORE_UNAVAILABLE;
// a claim that lands after its deadline released with its own token; a
// claim whose handler was late settled when the handler ends. Internal.
import type { ClaimResult, DedupStore } from '../dedup/store.js';
import { isPayhookError, PayhookError } from '../lib/errors.js';
import { describeError, misuse } from '../lib/misuse.js';
import { describeParked, isParked } from '../park.js';
import type { PaymentWebhook } from '../webhook/types.js';
import { DUPLICATE, type Answer } from './answer.js';
import { LATE, type Deadline } from './deadline.js';
import type { DeliveryReport } from './report.js';
import type { Settings } from './settings.js';

/**
 * Internal: a claim that failed, missed its deadline (`after` releases the claim should it land later), or
 * resolved no claim result (a misconfigured store).
 */
export interface FailedClaim {
  readonly status: 'failed';
  readonly error: unknown;
  readonly after?: Promise<void>;
}

/** Internal: `after`, for waitUntil with the answer, is a store call that missed its deadline, still on its way. */
export interface Landing {
  readonly after?: Promise<void>;
}

/** Internal: how a release ended. */
export interface Released extends Landing {
  readonly released: boolean;
}

/** Internal: the store calls of one handler. */
export interface StoreCalls {
  /**
   * Claims `key`; a failure (or a missed deadline) resolves `failed`, with the release of a claim that lands later,
   * and so does a result that is no claim result (`INVALID_ARGUMENT`).
   */
  claim(key: string, deadline: Deadline, report: DeliveryReport): Promise<ClaimResult | FailedClaim>;
  /** Records a handled delivery; a failure is reported (the answer stays 200), never thrown. */
  record(key: string, token: string, deadline: Deadline, report: DeliveryReport): Promise<Landing>;
  /** Releases a claim after its handler failed; `released` false (and logged) when the store could not. */
  release(key: string, token: string, deadline: Deadline, report: DeliveryReport): Promise<Released>;
  /**
   * After the answer: settles the claim of a late handler (`who`) once `work` ends (never rejects). `claimedAt`
   * (the wall clock's `Date.now()`, taken before the claim) tells whether its lease has lapsed by then, which the
   * log line says.
   */
  settleLate(
    work: Promise<unknown>,
    key: string,
    token: string,
    claimedAt: number,
    deadline: Deadline,
    report: DeliveryReport,
    who: 'onPayment' | 'deadLetter',
  ): Promise<void>;
}

/** Internal: the store calls for `settings`. */
export function createStoreCalls(settings: Settings): StoreCalls {
  const { store, storeTimeoutMs } = settings;
  const claimOptions = { leaseMs: settings.leaseMs };
  const completeOptions = { retentionMs: settings.retentionMs };

  /** Rejects with STORE_UNAVAILABLE when the call fails or misses its deadline. */
  async function call<T>(what: string, pending: Promise<T>, deadline: Deadline): Promise<T> {
    let result: T | typeof LATE;
    try {
      result = await deadline.race(pending, storeTimeoutMs);
    } catch (cause) {
      // A store that says it is not set up (a PostgreSQL table never migrated) is misconfigured, not unreachable.
      if (isMisconfigured(cause)) throw cause;
      throw new PayhookError(
        'STORE_UNAVAILABLE',
        `The deduplication store failed to ${what}: ${describeError(cause)}`,
        {
          cause,
        },
      );
    }
    if (result === LATE) {
      throw new PayhookError(
        'STORE_UNAVAILABLE',
        `The deduplication store did not ${what} within ${storeTimeoutMs} ms.`,
      );
    }
    return result;
  }

  /** The store's own call, a synchronous throw included, as a promise. */
  function start<T>(fn: (store: DedupStore) => Promise<T>): Promise<T> {
    try {
      return Promise.resolve(fn(store));
    } catch (error) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the store's own error, passed on
      return Promise.reject(error);
    }
  }

  const completing = (key: string, token: string): Promise<void> =>
    start((s) => s.complete(key, token, completeOptions));
  const releasing = (key: string, token: string): Promise<void> => start((s) => s.release(key, token));
  const complete = (key: string, token: string, deadline: Deadline): Promise<void> =>
    call('complete', completing(key, token), deadline);
  const release = (key: string, token: string, deadline: Deadline): Promise<void> =>
    call('release', releasing(key, token), deadline);

  /**
   * A completion or release that missed its deadline is still on its way. A
   * serverless platform (Cloudflare Workers) cancels it once the answer is
   * sent unless it is handed to waitUntil with the answer; it is waited for
   * one lease at most, as a late claim is (below).
   */
  const landing = (pending: Promise<unknown>, deadline: Deadline): Promise<void> =>
    deadline.race(pending, settings.leaseMs).then(
      () => undefined,
      () => undefined,
    );

  /**
   * A claim answered 503 for its deadline may still land in the store later;
   * left there, it would hold the delivery for a whole lease and every retry
   * meanwhile would get 409. Whatever the store, it is released with its own
   * token as soon as it lands. It is waited for one lease at most, so a
   * store call that never ends does not keep a serverless function alive
   * (through waitUntil) for as long as the platform allows.
   */
  function releaseWhenLanded(
    key: string,
    pending: Promise<ClaimResult>,
    deadline: Deadline,
    report: DeliveryReport,
  ): Promise<void> {
    return deadline.race(pending, settings.leaseMs).then(
      async (landed) => {
        if (landed === LATE) {
          const message = `The claim answered 503 had not landed after one lease (${settings.leaseMs} ms); no longer waiting to release it (should it land, it holds the delivery until its lease expires).`;
          report.log('error', 'bookkeeping-failed', message);
          return;
        }
        // A result that is no claim is logged: what goes to waitUntil (or floats, on Node) must never reject.
        let late: ClaimResult;
        try {
          late = checkedClaim(landed);
        } catch (error) {
          const message = `The claim answered 503 landed later; nothing was released: ${describeError(error)}`;
          report.log('error', 'bookkeeping-failed', message, { error });
          return;
        }
        if (late.status !== 'claimed') return;
        try {
          await release(key, late.token, deadline);
          const message = 'A claim that landed after its deadline (answered 503) was released for the retry.';
          report.log('warn', 'late-claim-released', message);
        } catch (error) {
          const message = `Could not release a claim that landed late: ${describeError(error)} (it holds until its lease expires).`;
          report.log('error', 'bookkeeping-failed', message, { error });
        }
      },
      () => {
        // A claim that failed late holds nothing.
      },
    );
  }

  return {
    async claim(key, deadline, report) {
      const pending = start((s) => s.claim(key, claimOptions));
      let result: ClaimResult;
      try {
        result = await call('claim', pending, deadline);
      } catch (error) {
        // Handed to the platform's waitUntil with the 503, so a serverless function lives to release it.
        return { status: 'failed', error, after: releaseWhenLanded(key, pending, deadline, report) };
      }
      try {
        // Any other result is a store misconfigured, not a delivery in progress (which every retry would find: 409).
        return checkedClaim(result);
      } catch (error) {
        return { status: 'failed', error };
      }
    },

    async record(key, token, deadline, report) {
      const pending = completing(key, token);
      try {
        await call('complete', pending, deadline);
        return {};
      } catch (error) {
        // The merchant's side has the delivery (handed off or parked), so the
        // answer is 200: a non-200 would only make the service redeliver it.
        // The claim expires with its lease.
        const message = `Handled, but the store could not record it: ${describeError(error)}`;
        report.failed('STORE_UNAVAILABLE', message, 200, error);
        report.log('error', 'bookkeeping-failed', message, { status: 200, code: 'STORE_UNAVAILABLE', error });
        return { after: landing(pending, deadline) };
      }
    },

    async release(key, token, deadline, report) {
      const pending = releasing(key, token);
      try {
        await call('release', pending, deadline);
        return { released: true };
      } catch (error) {
        const message = `Could not release the claim (the lease will expire): ${describeError(error)}`;
        report.log('error', 'bookkeeping-failed', message, { error });
        return { released: false, after: landing(pending, deadline) };
      }
    },

    settleLate(work, key, token, claimedAt, deadline, report, who) {
      const settled = (message: string, error?: unknown) => () =>
        report.log('warn', 'late-handler-settled', message, { error });
      // Past its lease the claim may be a retry's, which the stores keep: this claim's token then settles nothing.
      // The wall clock, as the stores' leases run on it (a database's, Date.now()).
      const lapsed = () => Date.now() - claimedAt >= settings.leaseMs;
      return work
        .then(
          (value) => {
            const recorded = lapsed()
              ? ' and its lease; recorded as handled unless a retry claimed the delivery meanwhile.'
              : '; the delivery is now recorded as handled.';
            const what = isParked(value) ? `parked the delivery (${describeParked(value)})` : 'finished';
            return complete(key, token, deadline).then(settled(`${who} ${what} after its deadline${recorded}`));
          },
          (error: unknown) => {
            const released = lapsed() ? 'its lease had passed' : 'the claim was released for the retry';
            return release(key, token, deadline).then(
              settled(`After its deadline: ${describeError(error)}; ${released}.`, error),
            );
          },
        )
        .catch((error: unknown) => {
          // The answer was a 500 (the handler missed its deadline). This failure comes after it, so it reaches
          // onError on its own, as a completion failing after a 200 does: retries get 409 until the lease expires.
          const code = isMisconfigured(error) ? 'INVALID_ARGUMENT' : 'STORE_UNAVAILABLE';
          const message = `Could not settle the claim after a late handler (the lease will expire): ${describeError(error)}`;
          report.failed(code, message, 500, error);
          report.log('error', 'bookkeeping-failed', message, { status: 500, code, error });
        });
    },
  };
}

/** Internal: claims the delivery: its token, or the answer for a duplicate, one in progress, or a store that failed. */
export async function claimDelivery(
  settings: Settings,
  stores: StoreCalls,
  key: string,
  webhook: PaymentWebhook,
  deadline: Deadline,
  report: DeliveryReport,
): Promise<string | Answer> {
  const claimed = await stores.claim(key, deadline, report);
  if (claimed.status === 'failed') {
    const misconfigured = isMisconfigured(claimed.error);
    return report.refuse(misconfigured ? 'INVALID_ARGUMENT' : 'STORE_UNAVAILABLE', describeError(claimed.error), {
      cause: claimed.error,
      event: misconfigured ? 'misconfigured' : 'store-unavailable',
      level: 'error',
      ...(claimed.after && { after: claimed.after }),
    });
  }
  if (claimed.status === 'claimed') return claimed.token;
  const { onDuplicate } = settings.options;
  if (claimed.status === 'completed') {
    report.hook('onDuplicate', onDuplicate, { key, state: 'completed', webhook });
    report.log('info', 'duplicate', 'Already handled; answered 200 without calling onPayment.', { status: 200 });
    return DUPLICATE;
  }
  report.hook('onDuplicate', onDuplicate, { key, state: 'in-progress', webhook });
  // Not answered 200, so onError hears of it too (a claim that stays in
  // progress across retries is worth an alert).
  const message = 'Another worker is handling this delivery; retry later.';
  return report.refuse('DELIVERY_IN_PROGRESS', message, { event: 'in-progress', level: 'info' });
}

/**
 * A claim's result as {@link ClaimResult} says it is, read once; anything else
 * (no object, a status of another name or that cannot be read, `claimed`
 * without a token) is refused `INVALID_ARGUMENT`, saying what it is.
 */
function checkedClaim(result: unknown): ClaimResult {
  let what: string;
  try {
    const { status, token } = Object(result) as { status?: unknown; token?: unknown };
    if (status === 'claimed' && typeof token === 'string' && token !== '') return { status, token };
    if (status === 'in-progress' || status === 'completed') return { status };
    // A claimed status's fault is its token: named, so the message does not seem to refuse "claimed" itself.
    const given = status !== 'claimed' ? '' : ` with token ${token === '' ? '""' : `of type ${typeof token}`}`;
    what =
      typeof result === 'object' && result !== null
        ? `status ${String(JSON.stringify(status))}${given}`
        : String(result);
  } catch (error) {
    what = `a status that cannot be read (${describeError(error)})`;
  }
  throw misuse(
    `The deduplication store's claim resolved ${what.slice(0, 80)}, not a claim result: its status must be "claimed" (with a non-empty string token), "in-progress" or "completed".`,
  );
}

/** A store's own INVALID_ARGUMENT: it is not set up for payhook (a table missing, a privilege not granted). */
function isMisconfigured(error: unknown): boolean {
  return isPayhookError(error) && error.code === 'INVALID_ARGUMENT';
}
