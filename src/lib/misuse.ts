import { PayhookError } from './errors.js';

/** The error for a caller's mistake (bad options, wrong argument types): thrown, never returned. */
export function misuse(message: string): PayhookError {
  return new PayhookError('INVALID_ARGUMENT', message);
}

/** A thrown value as text for a message or a log line: an Error's message, anything else stringified. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    // An object without a prototype (or with a throwing toString) has no text of its own.
    return Object.prototype.toString.call(error);
  }
}
