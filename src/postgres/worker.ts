/**
 * The inbox worker's loop: `concurrency` loops taking one row each, a shared
 * outage state (back-off with jitter, one report per change of state), and a
 * bounded stop that leaves no timer behind. Internal.
 *
 * @module
 */
import { PayhookError } from '../errors.js';
import { callDetached } from '../lib/callback.js';
import { MAX_TIMER_MS } from '../lib/clock.js';
import { describeError } from '../lib/misuse.js';
import type { Holder } from './driver.js';
import { isMisconfiguration } from './faults.js';
import type { InboxDelivery, InboxOutcome, InboxProcessOptions, InboxWorker } from './inbox-types.js';

/** One attempt at one row, as the loop sees it. */
export interface Attempt {
  outcome: InboxOutcome;
  /** The handler's error, when it threw (the failure is recorded): present even when it is `undefined`. */
  error?: unknown;
  delivery?: InboxDelivery;
}

/** What the loop needs of the inbox. */
export interface WorkerDeps {
  /**
   * Takes and processes one row; rejects when the database failed. When
   * `stopped()` is true once its transaction has begun (the loop may have
   * waited for a connection meanwhile), it takes none and resolves `idle`.
   */
  attempt(holder: Holder, stopped: () => boolean): Promise<Attempt>;
  /** Remembers the last error for `health()`. */
  remember(error: unknown): void;
}

const DEFAULT_STOP_MS = 10_000;
const DEFAULT_MAX_BACKOFF_MS = 10_000;
const DEFAULT_REMIND_MS = 300_000;
const FIRST_BACKOFF_MS = 250;
/** How long failures must last before they are an outage worth a report. */
const BLIP_MS = 1000;

function nonNegative(value: unknown, name: string, fallback: number): number {
  const n = value ?? fallback;
  // Each is a timer's delay: past the longest timer JavaScript keeps, it would fire at once.
  if (typeof n !== 'number' || !(n >= 0) || !(n <= MAX_TIMER_MS)) {
    throw new PayhookError(
      'INVALID_ARGUMENT',
      `${name} must be a number of milliseconds from 0 to ${MAX_TIMER_MS} (about 24.8 days, the longest timer JavaScript keeps).`,
    );
  }
  return n;
}

/** The settings of one worker, checked. */
export function workerSettings(options: InboxProcessOptions): {
  pollIntervalMs: number;
  maxBackoffMs: number;
  remindEveryMs: number;
} {
  return {
    pollIntervalMs: nonNegative(options.pollIntervalMs, 'pollIntervalMs', 1000),
    maxBackoffMs: nonNegative(options.maxBackoffMs, 'maxBackoffMs', DEFAULT_MAX_BACKOFF_MS),
    remindEveryMs: nonNegative(options.outageReminderMs, 'outageReminderMs', DEFAULT_REMIND_MS),
  };
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}

/** The default `onError`: one line per report, never a stack trace. */
function defaultReport(error: unknown, delivery?: InboxDelivery): void {
  const where = delivery === undefined ? '' : ` (delivery ${delivery.deliveryId}, attempt ${delivery.attempt})`;
  console.error(`payhook inbox: ${describeError(error)}${where}`);
}

function defaultRecover(outageMs: number): void {
  console.error(`payhook inbox: PostgreSQL is reachable again after ${seconds(outageMs)}; processing resumes.`);
}

/** Starts `concurrency` loops over `deps.attempt`. */
export function startWorker(deps: WorkerDeps, concurrency: number, options: InboxProcessOptions): InboxWorker {
  const { pollIntervalMs, maxBackoffMs, remindEveryMs } = workerSettings(options);
  const { signal } = options;
  // A hook that throws or rejects must not end the loop (and with it the worker); it has nothing left to tell.
  const report = options.onError ?? defaultReport;
  const onError = (error: unknown, delivery?: InboxDelivery): void => void callDetached(() => report(error, delivery));
  const recover = options.onRecover ?? defaultRecover;

  let stopping = false;
  const sleepers = new Set<() => void>();
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      sleepers.add(wake);
    });

  // The outage, shared by every loop: when it began, how many failures in a row, when it was last reported.
  // A blip (a dropped connection that the next try replaces) is not reported: only a failure that lasts.
  let downSince: number | undefined;
  let reportedAt: number | undefined;
  let failures = 0;
  function failed(error: unknown): number {
    deps.remember(error);
    const now = performance.now();
    downSince ??= now;
    if (reportedAt === undefined) {
      if (now - downSince >= BLIP_MS || isMisconfiguration(error)) {
        reportedAt = now;
        onError(outage(error, 'the inbox worker keeps retrying with back-off'));
      }
    } else if (remindEveryMs > 0 && now - reportedAt >= remindEveryMs) {
      reportedAt = now;
      onError(outage(error, `still failing after ${seconds(now - downSince)}, the worker keeps retrying`));
    }
    failures++;
    const ceiling = Math.min(maxBackoffMs, FIRST_BACKOFF_MS * 2 ** Math.min(failures - 1, 20));
    // Jitter: many workers that lost the database together do not all come back at the same instant.
    return ceiling / 2 + (Math.random() * ceiling) / 2;
  }
  function succeeded(): void {
    if (downSince === undefined) return;
    const outageMs = performance.now() - downSince;
    const reported = reportedAt !== undefined;
    downSince = reportedAt = undefined;
    failures = 0;
    if (reported) void callDetached(() => recover(outageMs));
  }

  const held = new Set<() => void>();
  const loop = async () => {
    while (!stopping) {
      let abort: (() => void) | undefined;
      const holder: Holder = {
        hold(drop) {
          abort = drop;
          held.add(drop);
        },
        letGo() {
          if (abort !== undefined) held.delete(abort);
        },
      };
      let wait = 0;
      try {
        const result = await deps.attempt(holder, () => stopping);
        succeeded();
        // Keyed on the field, not its value: a handler may reject with undefined, still a failed attempt to report.
        if ('error' in result) {
          deps.remember(result.error);
          onError(result.error, result.delivery);
        }
        if (result.outcome === 'idle') wait = pollIntervalMs;
      } catch (error) {
        wait = failed(error);
      }
      if (wait > 0 && !stopping) await sleep(wait);
    }
  };

  const stopRequested = () => {
    stopping = true;
    for (const wake of [...sleepers]) wake();
  };
  if (signal?.aborted === true) stopping = true;
  signal?.addEventListener('abort', stopRequested);
  const stopped = Promise.all(Array.from({ length: concurrency }, loop)).then(() => {
    signal?.removeEventListener('abort', stopRequested);
  });

  return {
    stopped,
    async stop(stopOptions) {
      const bound = nonNegative(stopOptions?.timeoutMs, 'timeoutMs', DEFAULT_STOP_MS);
      stopRequested();
      const result = await within(stopped, bound, 'late' as const);
      // Rows still in hand after the bound: drop their connections (pg), so PostgreSQL rolls them back.
      if (result === 'late') for (const drop of [...held]) drop();
    },
  };
}

/** Internal: what `work` resolves to, or `late` once `ms` pass first; the timer is cleared either way. */
export async function within<T, L>(work: Promise<T>, ms: number, late: L): Promise<T | L> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([work, new Promise<L>((resolve) => (timer = setTimeout(resolve, ms, late)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** One report of an outage: `state` says what goes on, the first line of the cause says why. */
function outage(error: unknown, state: string): PayhookError {
  if (isMisconfiguration(error)) {
    return new PayhookError('INVALID_ARGUMENT', `${describeError(error)} (${state})`, { cause: error });
  }
  const cause = error instanceof PayhookError && error.cause !== undefined ? error.cause : error;
  return new PayhookError('STORE_UNAVAILABLE', `PostgreSQL is failing (${describeError(cause)}); ${state}.`, {
    cause: error,
  });
}
