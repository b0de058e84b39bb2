// The store's three calls as the flow makes them: each within
// storeTimeoutMs, a failure or a timeout turned into STORE_UNAVAILABLE, and a
// claim that lands after its deadline released with its own token. Internal.
import type { ClaimResult } from '../dedup/store.js';
import { PayhookError } from '../errors.js';
import { describeError } from '../lib/misuse.js';
import { TIMED_OUT, within } from './deadline.js';
import type { Reporter } from './report.js';
import type { Settings } from './settings.js';

/** Internal: the store calls of one handler. */
export interface StoreCalls {
  claim(key: string): Promise<ClaimResult>;
  complete(key: string, token: string): Promise<void>;
  release(key: string, token: string): Promise<void>;
}

/** Internal: the store calls for `settings`, reporting late bookkeeping to `reporter`. */
export function createStoreCalls(settings: Settings, reporter: Reporter): StoreCalls {
  const { store, storeTimeoutMs, leaseMs, retentionMs } = settings;

  /** Rejects with STORE_UNAVAILABLE when the call fails or misses its deadline. */
  async function call<T>(what: string, pending: Promise<T>): Promise<T> {
    let result: T | typeof TIMED_OUT;
    try {
      result = await within(pending, storeTimeoutMs);
    } catch (cause) {
      throw new PayhookError(
        'STORE_UNAVAILABLE',
        `The deduplication store failed to ${what}: ${describeError(cause)}`,
        {
          cause,
        },
      );
    }
    if (result === TIMED_OUT) {
      throw new PayhookError(
        'STORE_UNAVAILABLE',
        `The deduplication store did not ${what} within ${storeTimeoutMs} ms.`,
      );
    }
    return result;
  }

  const release = (key: string, token: string): Promise<void> =>
    call(
      'release',
      Promise.resolve().then(() => store.release(key, token)),
    );

  /**
   * A claim answered 503 for its deadline may still land in the store later;
   * left there, it would hold the delivery for a whole lease and every retry
   * meanwhile would get 409. Whatever the store, it is released with its own
   * token as soon as it lands.
   */
  function releaseWhenLanded(key: string, pending: Promise<ClaimResult>): void {
    pending.then(
      async (late) => {
        if (late.status !== 'claimed') return;
        try {
          await release(key, late.token);
          reporter.log({
            level: 'warn',
            event: 'late-claim-released',
            message: 'A claim that landed after its deadline (answered 503) was released for the retry.',
            key,
          });
        } catch (error) {
          reporter.log({
            level: 'error',
            event: 'bookkeeping-failed',
            message: `Could not release a claim that landed late: ${describeError(error)} (it holds until its lease expires).`,
            key,
            error,
          });
        }
      },
      () => {
        // A claim that failed late holds nothing.
      },
    );
  }

  return {
    async claim(key) {
      const pending = Promise.resolve().then(() => store.claim(key, { leaseMs }));
      try {
        return await call('claim', pending);
      } catch (error) {
        releaseWhenLanded(key, pending);
        throw error;
      }
    },
    complete: (key, token) =>
      call(
        'complete',
        Promise.resolve().then(() => store.complete(key, token, { retentionMs })),
      ),
    release,
  };
}
