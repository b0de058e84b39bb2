// The deadlines of one delivery share one timer, each stage still ending at
// its own deadline; onPayment's abort signal exists only once read.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeliveryContext } from '../../src/handler/context.js';
import { Deadline, LATE } from '../../src/handler/deadline.js';

const never = new Promise<never>(() => {});
const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(resolve, ms, value));

describe('Deadline', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  // A stage's due time was read from the wall clock: a step back (NTP, a resumed VM) stretched it by the step.
  it('ends a stage on time when the wall clock steps back or forward meanwhile', async () => {
    for (const step of [-60_000, 60_000]) {
      const deadline = new Deadline();
      let late = false;
      void deadline.race(never, 500).then((result) => (late = result === LATE));
      await vi.advanceTimersByTimeAsync(100);
      vi.setSystemTime(Date.now() + step);
      await vi.advanceTimersByTimeAsync(399);
      expect(late).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(late).toBe(true);
    }
  });

  // node:test's mock timers and Jest's legacy ones fake setTimeout but not performance: the timer fired with the
  // clock unmoved, and was re-armed for the whole deadline again, for ever (a merchant's timeout test hung).
  it('ends stages on time under fake timers that leave performance.now alone', async () => {
    vi.useRealTimers();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    // As those runtimes leave it: a clock the fake timers do not move (the real one barely moves in a test).
    const now = vi.spyOn(performance, 'now').mockReturnValue(1_000);
    try {
      const deadline = new Deadline();
      let handler: unknown;
      void deadline.race(never, 10_000).then((result) => (handler = result));
      await vi.advanceTimersByTimeAsync(9_999);
      expect(handler).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      expect(handler).toBe(LATE);
      let store: unknown;
      void deadline.race(never, 200).then((result) => (store = result));
      await vi.advanceTimersByTimeAsync(200);
      expect(store).toBe(LATE);
    } finally {
      now.mockRestore();
    }
  });

  it('ends each stage at its own deadline, whether shorter or longer than the one before', async () => {
    const deadline = new Deadline();
    const ended: Array<[string, number]> = [];
    const start = Date.now();
    const stage = async <T>(name: string, work: Promise<T>, ms: number) => {
      const result = await deadline.race(work, ms);
      ended.push([result === LATE ? `${name} late` : name, Date.now() - start]);
    };
    const first = stage('claim', after(10, 'token'), 100);
    await vi.advanceTimersByTimeAsync(10);
    await first;
    // Longer than the timer armed for the first stage: it is re-armed, not fired early.
    const second = stage('handler', never, 1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    await second;
    // Shorter than what is left of the timer: re-armed sooner.
    const third = stage('complete', never, 50);
    await vi.advanceTimersByTimeAsync(50);
    await third;
    expect(ended).toEqual([
      ['claim', 10],
      ['handler late', 1_010],
      ['complete late', 1_060],
    ]);
    deadline.answered();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("keeps a stage's deadline when the work of an earlier, late stage ends during it", async () => {
    const deadline = new Deadline();
    const start = Date.now();
    // deadLetter misses its 100 ms; the release that follows hangs; deadLetter's work ends at 150 ms, mid-release.
    const letter = deadline.race(after(150, 'letter'), 100);
    await vi.advanceTimersByTimeAsync(100);
    expect(await letter).toBe(LATE);
    const release = deadline.race(never, 100);
    await vi.advanceTimersByTimeAsync(100);
    expect(await release).toBe(LATE);
    expect(Date.now() - start).toBe(200);
  });

  it('arms one timer at a time, for each stage its own deadline, and clears it once answered', async () => {
    const setTimer = vi.spyOn(globalThis, 'setTimeout');
    // The defaults: body 10 s, store calls 5 s, onPayment 10 s.
    const deadline = new Deadline();
    const body = deadline.stage(10_000, () => expect.unreachable());
    body();
    for (const ms of [5_000, 10_000, 5_000]) expect(await deadline.race(Promise.resolve(ms), ms)).toBe(ms);
    expect(await deadline.run(() => Promise.resolve('done'), 10_000)).toEqual({ kind: 'done', value: 'done' });
    expect(setTimer.mock.calls.map((call) => call[1])).toEqual([10_000, 5_000, 10_000, 5_000, 10_000]);
    expect(vi.getTimerCount()).toBe(1);
    deadline.answered();
    expect(vi.getTimerCount()).toBe(0);
    // A stage after the answer (bookkeeping) clears its timer when it ends.
    expect(await deadline.race(Promise.resolve('late bookkeeping'), 5_000)).toBe('late bookkeeping');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('keeps a stage longer than the longest timer JavaScript keeps, re-arming for the rest', async () => {
    const setTimer = vi.spyOn(globalThis, 'setTimeout');
    const deadline = new Deadline();
    const wait = deadline.race(never, 2 ** 31 + 1_000);
    await vi.advanceTimersByTimeAsync(2 ** 31 - 1);
    expect(setTimer.mock.calls.map((call) => call[1])).toEqual([2 ** 31 - 1, 1_001]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await Promise.race([wait, Promise.resolve('pending')])).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(await wait).toBe(LATE);
  });

  it('lets a stage still under way once the delivery is answered stop keeping the process alive', async () => {
    const setTimer = vi.spyOn(globalThis, 'setTimeout');
    const deadline = new Deadline();
    const wait = deadline.race(never, 1_000);
    const first = setTimer.mock.results[0]?.value as NodeJS.Timeout;
    expect(first.hasRef()).toBe(true);
    deadline.answered();
    expect(first.hasRef()).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await wait).toBe(LATE);
    // A stage after the answer (bookkeeping): unreferenced from the start.
    const bookkeeping = deadline.race(never, 100);
    const second = setTimer.mock.results[1]?.value as NodeJS.Timeout;
    expect(second.hasRef()).toBe(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(await bookkeeping).toBe(LATE);
  });

  it('ends a stage shorter than what is left of the timer an earlier stage armed at its own deadline', async () => {
    const deadline = new Deadline();
    const start = Date.now();
    // The first stage arms a 1 s timer and ends at 10 ms; the next is due 50 ms later, long before that timer.
    const claim = deadline.race(after(10, 'claimed'), 1_000);
    await vi.advanceTimersByTimeAsync(10);
    expect(await claim).toBe('claimed');
    const short = deadline.race(never, 50);
    await vi.advanceTimersByTimeAsync(50);
    expect(await Promise.race([short, Promise.resolve('pending')])).toBe(LATE);
    expect(Date.now() - start).toBe(60);
  });

  it('lets a timer that fires between stages go, re-arming nothing and throwing nothing', async () => {
    const deadline = new Deadline();
    const ended = deadline.stage(1_000, () => expect.unreachable());
    ended();
    // No stage under way when the timer fires (the flow is verifying, say).
    await vi.advanceTimersByTimeAsync(1_000);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('answers on runtimes whose timers are numbers, which have no unref', async () => {
    const timers = new Map<number, () => void>();
    let next = 0;
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((callback: () => void) => {
      timers.set(++next, callback);
      return next;
    }) as never);
    vi.spyOn(globalThis, 'clearTimeout').mockImplementation(((id: number) => void timers.delete(id)) as never);
    try {
      const deadline = new Deadline();
      const wait = deadline.race(never, 100);
      expect(() => deadline.answered()).not.toThrow();
      const idle = new Deadline();
      expect(await idle.race(Promise.resolve('done'), 100)).toBe('done');
      expect(() => idle.answered()).not.toThrow();
      // Bookkeeping after the answer arms its timer on such a runtime too.
      const after = idle.race(never, 100);
      expect(timers.size).toBe(2);
      vi.advanceTimersByTime(100); // the clocks only: these timers are the stand-in's
      for (const fire of [...timers.values()]) fire();
      expect(await wait).toBe(LATE);
      expect(await after).toBe(LATE);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('runs a function to done, threw or late, a synchronous one without a timer', async () => {
    const deadline = new Deadline();
    expect(await deadline.run(() => 1, 100)).toEqual({ kind: 'done', value: 1 });
    expect(vi.getTimerCount()).toBe(0);
    const error = new Error('db down');
    expect(
      await deadline.run(() => {
        throw error;
      }, 100),
    ).toEqual({ kind: 'threw', error });
    expect(await deadline.run(() => Promise.reject(error), 100)).toEqual({ kind: 'threw', error });
    const late = deadline.run(() => after(500, 'eventually'), 100);
    await vi.advanceTimersByTimeAsync(100);
    const outcome = await late;
    expect(outcome.kind).toBe('late');
    await vi.advanceTimersByTimeAsync(400);
    expect(await (outcome as { work: Promise<string> }).work).toBe('eventually');
  });
});

describe('DeliveryContext', () => {
  it('makes its signal only when read, aborted when read after the deadline', () => {
    const Original = globalThis.AbortController;
    let made = 0;
    globalThis.AbortController = class extends Original {
      constructor() {
        super();
        made++;
      }
    };
    try {
      const context = new DeliveryContext('key', 1, undefined);
      const reason = new Error('late');
      DeliveryContext.abort(context, reason);
      expect(made).toBe(0);
      expect([context.signal.aborted, context.signal.reason]).toEqual([true, reason]);
      expect(made).toBe(1);
    } finally {
      globalThis.AbortController = Original;
    }
  });

  it('aborts a signal already read, and keeps one signal per context', () => {
    const context = new DeliveryContext('key', 1, undefined);
    const { signal } = context;
    expect(signal.aborted).toBe(false);
    DeliveryContext.abort(context, 'late');
    expect([signal.aborted, signal.reason]).toEqual([true, 'late']);
    expect(context.signal).toBe(signal);
    expect({ key: context.key, timestamp: context.timestamp }).toEqual({ key: 'key', timestamp: 1 });
  });
});
