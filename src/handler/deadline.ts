// Deadlines on work the handler does not control: the merchant's handlers
// and the store's calls. Internal.

/** Internal: what {@link within} resolves to when the deadline passed first. */
export const TIMED_OUT: unique symbol = Symbol('timed out');

/** Internal: races `promise` against a deadline of `ms`; the timer is cleared either way. */
export function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(resolve, ms, TIMED_OUT);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** Internal: how a merchant's function ended within its deadline. */
export type Run =
  | { readonly kind: 'done' }
  | { readonly kind: 'threw'; readonly error: unknown }
  /** Late: `work` is still running; it settles some time after the answer. */
  | { readonly kind: 'late'; readonly work: Promise<unknown> };

/** Internal: runs `fn` (sync or async) within `ms`. When late, `controller` is
 * aborted with `reason`, so a merchant handler that passes the signal on stops.
 */
export async function runWithin(
  fn: () => unknown,
  ms: number,
  controller: AbortController,
  reason: () => unknown,
): Promise<Run> {
  const work = Promise.resolve().then(fn);
  try {
    if ((await within(work, ms)) !== TIMED_OUT) return { kind: 'done' };
  } catch (error) {
    return { kind: 'threw', error };
  }
  controller.abort(reason());
  return { kind: 'late', work };
}
