// Telling the merchant what happened: log records and hooks, neither of
// which may change an answer (a throwing logger or hook is contained).
// Internal.
import { describeError } from '../lib/misuse.js';
import type { WebhookLogRecord } from './hooks.js';

/** Internal: how the flow reports. */
export interface Reporter {
  readonly log: (record: WebhookLogRecord) => void;
  /** Calls a merchant hook, fire and forget; its failure is logged, never thrown. */
  readonly hook: <A>(fn: ((arg: A) => unknown) | undefined, arg: A) => void;
}

/** How many lines the default logger prints in one second, at most. */
const LINES_PER_SECOND = 10;

/** Internal: the logger used when the merchant gives none: one console line
 * per refused or failed delivery (`warn` and `error` records), at most
 * {@link LINES_PER_SECOND} a second so a flood of bad requests cannot flood
 * the log. The count of lines left out is printed with the first line of a
 * later second (no timer: nothing runs between deliveries).
 */
export function createDefaultLogger(
  print: Pick<Console, 'warn' | 'error'> = globalThis.console,
  clock: () => number = Date.now,
): (record: WebhookLogRecord) => void {
  let windowStart = Number.NEGATIVE_INFINITY;
  let printed = 0;
  let suppressed = 0;
  return (record) => {
    if (record.level !== 'warn' && record.level !== 'error') return;
    const now = clock();
    if (now - windowStart >= 1000) {
      if (suppressed > 0)
        print.warn(`payhook: ${suppressed} more log lines suppressed (at most ${LINES_PER_SECOND}/s)`);
      windowStart = now;
      printed = 0;
      suppressed = 0;
    }
    if (printed >= LINES_PER_SECOND) {
      suppressed++;
      return;
    }
    printed++;
    print[record.level](formatLine(record));
  };
}

/** Internal: one log record as one line of text. */
export function formatLine(record: WebhookLogRecord): string {
  const parts = ['payhook:', record.event];
  if (record.status !== undefined) parts.push(String(record.status));
  if (record.code !== undefined) parts.push(record.code);
  parts.push('-', record.message);
  if (record.key !== undefined) parts.push(`(key ${record.key})`);
  return parts.join(' ');
}

/** Internal: the reporter for a handler's `logger` option (absent: the default logger; `false`: silence). */
export function createReporter(logger: ((record: WebhookLogRecord) => void) | false | undefined): Reporter {
  const sink = logger === false ? undefined : (logger ?? createDefaultLogger());

  function log(record: WebhookLogRecord): void {
    if (sink === undefined) return;
    try {
      sink(record);
    } catch {
      // A broken logger must not change the answer.
    }
  }

  function hook<A>(fn: ((arg: A) => unknown) | undefined, arg: A): void {
    if (fn === undefined) return;
    const failed = (error: unknown, how: string): void =>
      log({ level: 'warn', event: 'hook-failed', message: `A payhook hook ${how}: ${describeError(error)}`, error });
    try {
      const result = fn(arg);
      if (isThenable(result)) result.then(undefined, (error: unknown) => failed(error, 'rejected'));
    } catch (error) {
      failed(error, 'threw');
    }
  }

  return { log, hook };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';
}
