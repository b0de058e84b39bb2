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
 * Calls `fn`; a throw or a rejection is passed to `failed` (by default, dropped).
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
  failed: (error: unknown, how: 'threw' | 'rejected') => void = () => {},
): void {
  // Reporting the failure must not fail in turn (a logger that throws while a hook's failure is logged).
  const report = (error: unknown, how: 'threw' | 'rejected'): void => {
    try {
      failed(error, how);
    } catch {
      // Nothing left to tell.
    }
  };
  try {
    const result = fn();
    if (isThenable(result)) result.then(undefined, (error: unknown) => report(error, 'rejected'));
  } catch (error) {
    report(error, 'threw');
  }
}
