/**
 * Calling a merchant's function whose outcome payhook does not wait for (a
 * logger, a hook, an error report): whether it throws or, being async,
 * rejects, the failure goes to `failed` and nowhere else, so it changes no
 * answer and never surfaces as an unhandled rejection, which ends a Node
 * process.
 *
 * @module
 */

/** Whether `value` is a promise or another thenable. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null | undefined)?.then === 'function';
}

/**
 * Calls `fn`; a throw or a rejection is passed to `failed` (by default,
 * dropped). Returns, when `fn` returned a promise, one that settles with it
 * and never rejects, for a platform that must be told what is still running
 * (Workers' `waitUntil`); otherwise `undefined`.
 *
 * @example
 * ```ts
 * import { callDetached } from './callback.js';
 *
 * callDetached(async () => { throw new Error('log sink down'); }); // no unhandled rejection
 * ```
 */
export function callDetached(
  fn: () => unknown,
  failed: (error: unknown, how: 'threw' | 'rejected') => Promise<void> | undefined | void = () => {},
): Promise<void> | undefined {
  // Reporting the failure must not fail in turn (a logger that throws while a hook's failure is logged); what
  // reporting it still runs is waited for too.
  const report = (error: unknown, how: 'threw' | 'rejected'): Promise<void> | undefined => {
    try {
      return failed(error, how) ?? undefined;
    } catch {
      return undefined; // Nothing left to tell.
    }
  };
  try {
    const result = fn();
    if (isThenable(result)) {
      return Promise.resolve(result).then(
        () => undefined,
        (error: unknown) => report(error, 'rejected'),
      );
    }
  } catch (error) {
    return report(error, 'threw');
  }
  return undefined;
}
