import { isPayhookError } from '../../src/errors.js';

/**
 * The `code` of the PayhookError that `run` throws, or `undefined` when it
 * throws nothing. Any other exception is rethrown, so a test that expects a
 * code fails loudly on a crash.
 */
export function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (isPayhookError(error)) return error.code;
    throw error;
  }
  return undefined;
}

/** {@link codeOf} for a promise: the code it rejects with, or `undefined`. */
export async function rejectionCodeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    if (isPayhookError(error)) return error.code;
    throw error;
  }
  return undefined;
}

/** The same PEM written differently: a distinct key-cache entry, still a valid PEM. */
export function spelling(base: string, index: number): string {
  return base + '\n'.repeat(index + 1);
}
