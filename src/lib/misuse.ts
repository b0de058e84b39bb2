import { PayhookError } from './errors.js';

/** The error for a caller's mistake (bad options, wrong argument types): thrown, never returned. */
export function misuse(message: string): PayhookError {
  return new PayhookError('INVALID_ARGUMENT', message);
}

/**
 * A thrown value as text for a message or a log line: an Error's message,
 * anything else stringified. Always text: callers build messages and
 * database values from it, and a thrown value may be anything (an Error
 * whose message is a number or a Symbol, a throwing getter or toString).
 */
export function describeError(error: unknown): string {
  try {
    const text: unknown = error instanceof Error ? error.message : error;
    return typeof text === 'string' ? text : String(text);
  } catch {
    // An object without a prototype, a throwing toString or getter, a hostile Proxy.
    return 'a value that cannot be shown as text';
  }
}
