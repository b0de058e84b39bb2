// The deadlines of one delivery: its body within bodyTimeoutMs, each store
// call within storeTimeoutMs, each merchant function within
// handlerTimeoutMs, one after the other (and, after a 503 for a claim that
// missed its deadline, the wait for it to land: one lease). They share one
// timer per delivery, armed afresh as each stage starts for that stage's
// deadline, and cleared once the delivery is answered. Arming it once for
// several stages, to be re-armed for the rest when it fired early, ended no
// stage under fake timers that leave performance.now alone (node:test's,
// Jest's legacy ones): the re-armed timer fell after the test's whole tick.
// Times are read from the monotonic clock: a wall clock stepped back (NTP, a
// resumed VM) would stretch a deadline by the step. Internal.

import { isThenable } from '../lib/callback.js';
import { MAX_TIMER_MS } from '../lib/clock.js';

/** Internal: what {@link Deadline.race} resolves to when the deadline passed first. */
export const LATE: unique symbol = Symbol('late');

/** Internal: how a merchant's function ended within its deadline. */
export type Outcome<T> =
  | { readonly kind: 'done'; readonly value: T }
  | { readonly kind: 'threw'; readonly error: unknown }
  /** Late: `work` is still running; it settles some time after the answer. */
  | { readonly kind: 'late'; readonly work: Promise<T> };

/** Internal: the deadlines of one delivery, one stage at a time. */
export class Deadline {
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When the armed timer fires (Infinity: none armed). */
  #firesAt = Number.POSITIVE_INFINITY;
  /** When the stage under way is due. */
  #due = 0;
  /** Ends the stage under way as late; undefined between stages. */
  #expire: (() => void) | undefined;
  /** Set once the delivery is answered: a stage after it clears the timer when it ends. */
  #answered = false;

  /**
   * Starts a stage due in `ms`; `late` is called once it is due, unless the
   * function returned (call it when the stage's work ends) was called first.
   */
  stage(ms: number, late: () => void): () => void {
    const now = performance.now();
    this.#due = now + ms;
    this.#expire = late;
    this.#arm(ms, now);
    return () => this.#stageEnded(late);
  }

  /** Resolves (or rejects) as `work` does, or with {@link LATE} once `ms` pass first. */
  race<T>(work: PromiseLike<T>, ms: number): Promise<T | typeof LATE> {
    return new Promise<T | typeof LATE>((resolve, reject) => {
      const ended = this.stage(ms, () => resolve(LATE));
      work.then(
        (value) => {
          ended();
          resolve(value);
        },
        (error: unknown) => {
          ended();
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the work's own rejection, passed on
          reject(error);
        },
      );
    });
  }

  /** Runs `fn` (sync or async) within `ms`. */
  async run<T>(fn: () => T | PromiseLike<T>, ms: number): Promise<Outcome<T>> {
    let work: Promise<T>;
    try {
      const result = fn();
      // A synchronous result needs no deadline.
      if (!isThenable(result)) return { kind: 'done', value: result };
      work = Promise.resolve(result);
    } catch (error) {
      return { kind: 'threw', error };
    }
    try {
      const value = await this.race(work, ms);
      return value === LATE ? { kind: 'late', work } : { kind: 'done', value };
    } catch (error) {
      return { kind: 'threw', error };
    }
  }

  /**
   * The delivery is answered: the timer goes now unless a stage is under way;
   * from now on it no longer keeps a Node process alive (bookkeeping after
   * the answer must not hold up a shutdown).
   */
  answered(): void {
    this.#answered = true;
    if (this.#expire === undefined) this.#clear();
    else unref(this.#timer);
  }

  /** The work of the stage `expire` belongs to has ended; the work of an earlier stage that ended late changes nothing. */
  #stageEnded(expire: () => void): void {
    if (this.#expire !== expire) return;
    this.#expire = undefined;
    if (this.#answered) this.#clear();
  }

  /** Arms the timer for `ms`, or for the longest timer JavaScript keeps (it then re-arms for the rest). */
  #arm(ms: number, now: number): void {
    clearTimeout(this.#timer);
    const wait = Math.min(ms, MAX_TIMER_MS);
    this.#firesAt = now + wait;
    this.#timer = setTimeout(() => this.#fire(), wait);
    if (this.#answered) unref(this.#timer);
  }

  #clear(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#firesAt = Number.POSITIVE_INFINITY;
  }

  #fire(): void {
    // A timer that fired has waited its wait: fake timers that do not fake `performance` (node:test's, Jest's
    // legacy ones) fire it with the clock unmoved, which re-armed it for ever.
    const now = Math.max(performance.now(), this.#firesAt);
    this.#timer = undefined;
    this.#firesAt = Number.POSITIVE_INFINITY;
    const expire = this.#expire;
    if (expire === undefined) return;
    if (this.#due > now) {
      this.#arm(this.#due - now, now);
      return;
    }
    this.#expire = undefined;
    expire();
  }
}

/** Lets a Node timer stop keeping the process alive; other runtimes' timers are numbers. */
function unref(timer: ReturnType<typeof setTimeout> | undefined): void {
  (timer as { unref?: () => void } | undefined)?.unref?.();
}
