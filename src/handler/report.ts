// Telling the merchant what happened: log records, onError and the other
// hooks, none of which may change an answer (a throwing logger or hook is
// contained), and the refusals that are reported through them. Internal.
import { captureDelivery } from '../capture.js';
import { callDetached } from '../lib/callback.js';
import { codeFacts, type PayhookErrorCode } from '../lib/errors.js';
import { describeError } from '../lib/misuse.js';
import { oneLine } from '../lib/one-line.js';
import { answer, type Answer } from './answer.js';
import { registeredUrl } from '../lib/signed-target.js';
import { redactUrl } from '../lib/url.js';
import type { WebhookRequest, WebhookUrlOption } from '../verify-webhook.js';
import type { WebhookHandlerError, WebhookLogEvent, WebhookLogRecord } from './hooks.js';
import type { WebhookHandlerOptions } from './options.js';

type Level = WebhookLogRecord['level'];

/** Internal: how a handler reports, whatever the delivery. */
export interface Reporter {
  /** Logs `record`; what an async logger still runs, else undefined. */
  readonly log: (record: WebhookLogRecord) => Promise<void> | undefined;
  /** False when no `info` record would reach anyone (silenced, or the default logger): none is built. */
  readonly wantsInfo: boolean;
}

/** Internal: how a refusal is reported, and what its answer carries beside the body. */
export interface Refusal {
  /** @defaultValue `rejected` */
  readonly event?: WebhookLogEvent;
  /** @defaultValue `warn` */
  readonly level?: Level;
  readonly cause?: unknown;
  /** Added to the message that the log and onError get, never to the answer (the sender must not learn it). */
  readonly note?: string;
  readonly headers?: Record<string, string>;
  readonly after?: Promise<void>;
}

/** Internal: what one delivery reports, with its start, key and transaction id bound once. */
export class DeliveryReport {
  readonly started: number = performance.now();
  #key: string | undefined;
  #transactionId: string | undefined;
  /** What async hooks and loggers of this delivery still run: a serverless platform must be told to wait for it. */
  #running: Set<Promise<void>> | undefined;

  constructor(
    readonly reporter: Reporter,
    readonly onError: ((error: WebhookHandlerError) => unknown) | undefined,
    readonly exposeErrors: boolean,
  ) {}

  /** From here on, every record and error of this delivery names its transaction (and key). */
  bind(transactionId: string, key?: string): void {
    this.#transactionId = transactionId;
    this.#key = key;
  }

  log(level: Level, event: WebhookLogEvent, message: string, extra?: Partial<WebhookLogRecord>): void {
    if ((level === 'info' || level === 'debug') && !this.reporter.wantsInfo) return;
    const record: { -readonly [K in keyof WebhookLogRecord]: WebhookLogRecord[K] } = { level, event, message };
    if (extra?.status !== undefined) record.status = extra.status;
    if (extra?.code !== undefined) record.code = extra.code;
    if (this.#key !== undefined) record.key = this.#key;
    if (this.#transactionId !== undefined) record.transactionId = this.#transactionId;
    record.durationMs = Math.round(performance.now() - this.started);
    if (extra?.error !== undefined) record.error = extra.error;
    this.track(this.reporter.log(record));
  }

  /**
   * Calls the merchant's hook `name` without waiting for it; its failure is logged as `hook-failed`, naming it,
   * with this delivery's key, never thrown. What an async hook still runs is tracked.
   */
  hook<A>(name: string, fn: ((arg: A) => unknown) | undefined, arg: A): void {
    if (fn === undefined) return;
    this.track(
      callDetached(
        () => fn(arg),
        (error, how) => this.log('warn', 'hook-failed', `${name} ${how}: ${describeError(error)}`, { error }),
      ),
    );
  }

  /** Counts `work` (when there is some) among what {@link DeliveryReport.settled} waits for. */
  track(work: Promise<void> | undefined): void {
    if (work === undefined) return;
    const running = (this.#running ??= new Set());
    running.add(work);
    void work.then(() => running.delete(work));
  }

  /**
   * What to hand a platform's `waitUntil` with the answer: `after` (the bookkeeping after it), then every hook
   * and logger of this delivery still running, including those called meanwhile; undefined when there is none.
   */
  settled(after: Promise<void> | undefined): Promise<void> | undefined {
    if (after === undefined && this.#running === undefined) return undefined;
    const drain = async (): Promise<void> => {
      while (this.#running !== undefined && this.#running.size > 0) await Promise.all(this.#running);
    };
    return after === undefined ? drain() : after.then(drain);
  }

  /** Reports a failure to `onError` with the status answered (200 when it happened after a 200). */
  failed(code: PayhookErrorCode, message: string, status: number, cause: unknown): void {
    const key = this.#key;
    this.hook('onError', this.onError, {
      code,
      message,
      status,
      ...(key === undefined ? {} : { key }),
      ...(cause === undefined ? {} : { cause }),
    });
  }

  /** The non-200 answer for `code`: reported to `onError` and the log in full; a 5xx body says only the table's wording. */
  refuse(code: PayhookErrorCode, message: string, how: Refusal = {}): Answer {
    const [status, retriable, wording = 'The webhook handler failed'] = codeFacts(code);
    const { cause, note } = how;
    const told = note === undefined ? message : `${message} ${note}`;
    // The refusal's own line first, then onError (whose failure is logged after it).
    this.log(how.level ?? 'warn', how.event ?? 'rejected', told, { status, code, error: cause });
    this.failed(code, told, status, cause);
    const shown =
      status < 500 || this.exposeErrors
        ? message
        : `${wording}; the delivery was not processed.${retriable ? ' Retry later.' : ''}`;
    return answer(status, { ok: false, code, message: shown }, how.headers, how.after);
  }
}

/** Events only a verified delivery is logged with, key or none. */
const VERIFIED_ONLY: ReadonlySet<string> = new Set([
  'invalid-payload',
  'dead-lettered',
  'handler-failed',
  'late-handler-settled',
]);

/** How many lines the default logger prints in one second, at most. */
const LINES_PER_SECOND = 10;

/** Internal: the logger used when the merchant gives none: one console line
 * per refused or failed delivery (`warn` and `error` records), at most
 * {@link LINES_PER_SECOND} a second so a flood of bad requests cannot flood
 * the log, and as many again for records of verified deliveries (those with
 * a `key`, and signed payloads not understood), so such a flood cannot hide a
 * parked, failed or dead-lettered payment. What was left out is counted by
 * event and printed with the first line of a later second (no timer: nothing
 * runs between deliveries).
 */
export function createDefaultLogger(
  print: Pick<Console, 'warn' | 'error'> = globalThis.console,
  // Monotonic: with the wall clock, a step back (NTP) kept the second from ending, and printed nothing meanwhile.
  clock: () => number = () => performance.now(),
): (record: WebhookLogRecord) => void {
  let windowStart = Number.NEGATIVE_INFINITY;
  // Lines printed this second: of verified deliveries, and of everything else.
  let verified = 0;
  let other = 0;
  let suppressed = new Map<string, number>();
  return (record) => {
    if (record.level !== 'warn' && record.level !== 'error') return;
    const now = clock();
    if (now - windowStart >= 1000) {
      if (suppressed.size > 0) {
        const total = [...suppressed.values()].reduce((sum, count) => sum + count, 0);
        const counts = [...suppressed].map(([event, count]) => `${event} ${count}`).join(', ');
        print.warn(
          `payhook: ${total} more log lines suppressed (at most ${LINES_PER_SECOND}/s, and as many for verified deliveries): ${counts}`,
        );
      }
      windowStart = now;
      verified = other = 0;
      suppressed = new Map();
    }
    // A claimed delivery's records carry its key; a signed payload not understood is never claimed, but only a
    // verified delivery is dead-lettered, fails in a handler or settles late.
    const isVerified =
      record.key !== undefined || record.transactionId !== undefined || VERIFIED_ONLY.has(record.event);
    if ((isVerified ? verified++ : other++) < LINES_PER_SECOND) {
      print[record.level](formatLine(record));
      return;
    }
    suppressed.set(record.event, (suppressed.get(record.event) ?? 0) + 1);
  };
}

/** Internal: one log record as one line of text: control characters escaped, the message cut at 4,000 characters. */
export function formatLine(record: WebhookLogRecord): string {
  const parts = ['payhook:', record.event];
  if (record.status !== undefined) parts.push(String(record.status));
  if (record.code !== undefined) parts.push(record.code);
  // The key after a cut message still names the delivery.
  parts.push('-', oneLine(record.message));
  if (record.key !== undefined) parts.push(`(key ${oneLine(record.key, 200)})`);
  // A signed payload not understood has no key, but may name its transaction.
  else if (record.transactionId !== undefined) parts.push(`(transaction ${oneLine(record.transactionId, 200)})`);
  return parts.join(' ');
}

/** Internal: the reporter for a handler's `logger` option (absent: the default logger; `false`: silence). */
export function createReporter(logger: WebhookHandlerOptions['logger']): Reporter {
  const sink = logger === false ? undefined : (logger ?? createDefaultLogger());
  // The default logger prints warn and error records only.
  const wantsInfo = typeof logger === 'function';

  function log(record: WebhookLogRecord): Promise<void> | undefined {
    // A broken logger (one that throws, or an async one that rejects) must not change the answer.
    return sink === undefined ? undefined : callDetached(() => sink(record));
  }

  return { log, wantsInfo };
}

/** Internal: hands onSignatureMismatch a capture of the bytes verified (never the stream again), after the answer. */
export function captureMismatch(
  options: Pick<WebhookHandlerOptions, 'onSignatureMismatch' | 'webhookUrl'>,
  request: WebhookRequest,
  report: DeliveryReport,
): void {
  const { onSignatureMismatch } = options;
  if (onSignatureMismatch === undefined) return;
  report.track(
    captureDelivery(request, { webhookUrl: registeredFor(options.webhookUrl, request) }).then(
      (capture) => report.hook('onSignatureMismatch', () => onSignatureMismatch(request, { capture }), undefined),
      (cause: unknown) =>
        report.log('warn', 'hook-failed', `Could not capture the delivery: ${describeError(cause)}`, { error: cause }),
    ),
  );
}

/** The registered URL a refused request was meant for, as the capture records it; `undefined` when none fits. */
function registeredFor(webhookUrl: WebhookUrlOption | undefined, request: WebhookRequest): string | undefined {
  if (webhookUrl === undefined || typeof webhookUrl === 'string') return webhookUrl;
  try {
    return registeredUrl(webhookUrl)(request)?.url;
  } catch {
    return undefined; // a function that throws: the capture simply records no URL
  }
}

/**
 * Internal: what a signature is checked against, from the options alone (so nothing a sender controls is logged),
 * added to the log line of a SIGNATURE_MISMATCH: the first thing to compare when every delivery is refused (the
 * sandbox's key against production's, a test delivery, another registered URL).
 */
export function describeChecks(
  options: Pick<WebhookHandlerOptions, 'environment' | 'publicKeys' | 'webhookUrl' | 'trustForwardedHeaders'>,
): string {
  const environments = new Set([options.environment ?? []].flat());
  const keys = [...environments].map((name) => `the service's ${String(name)} key`);
  if ([options.publicKeys ?? []].flat().length > 0) keys.push('your publicKeys');
  const { webhookUrl } = options;
  const host = options.trustForwardedHeaders === true ? 'X-Forwarded-Host (else Host)' : 'Host';
  const url =
    webhookUrl === undefined
      ? `the ${host}, path and query each request arrives with (allowAnyHost)`
      : typeof webhookUrl === 'string'
        ? redactUrl(webhookUrl)
        : 'the URL your webhookUrl list or function picks';
  return `Checked with ${keys.join(' and ')}, for ${url}. Why it fails: payhook's docs/troubleshooting.md (payhook verify, explainSignatureMismatch).`;
}
