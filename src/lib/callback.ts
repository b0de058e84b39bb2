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
  try {
    const result = fn();
    if (isThenable(result)) result.then(undefined, (error: unknown) => failed(error, 'rejected'));
  } catch (error) {
    failed(error, 'threw');
  }
}
