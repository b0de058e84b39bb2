import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { retryDelay, retryOffset, retrySchedule } from '../src/retry.js';

// Spec §8's doubling table, step counted from 0; step s is retry 6 + s (CONTRACT §5).
const DOUBLING_TABLE: Array<[step: number, seconds: number]> = [
  [0, 60],
  [1, 120],
  [2, 240],
  [3, 480],
  [4, 960],
  [5, 1920],
  [6, 3840],
  [7, 7680],
  [8, 15360],
  [9, 30720],
  [10, 61440],
  [11, 86400],
];

const BAD_RETRIES: unknown[] = [
  0,
  -1,
  -30,
  1.5,
  0.5,
  -0.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  '3',
  null,
  undefined,
];

describe('retryDelay (CONTRACT §5)', () => {
  it.each([1, 2, 3, 4, 5])('retry %i waits 30 s (first phase)', (retry) => {
    expect(retryDelay(retry)).toBe(30_000);
  });

  it.each(DOUBLING_TABLE)('doubling step %i (retry 6 + step) waits %i s', (step, seconds) => {
    expect(retryDelay(6 + step)).toBe(seconds * 1000);
  });

  it('gives the pinned values', () => {
    expect(retryDelay(6)).toBe(60_000);
    expect(retryDelay(7)).toBe(120_000);
    expect(retryDelay(16)).toBe(61_440_000);
    expect(retryDelay(17)).toBe(86_400_000);
  });

  it.each([17, 18, 20, 100, 10_000, Number.MAX_SAFE_INTEGER])('retry %i waits one day (after the cap)', (retry) => {
    expect(retryDelay(retry)).toBe(86_400_000);
  });

  it.each(BAD_RETRIES)('throws RangeError for %s', (retry) => {
    expect(() => retryDelay(retry as number)).toThrow(RangeError);
  });

  it('never decreases and never exceeds the cap', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), (retry) => {
        expect(retryDelay(retry + 1)).toBeGreaterThanOrEqual(retryDelay(retry));
        expect(retryDelay(retry)).toBeLessThanOrEqual(86_400_000);
      }),
    );
  });
});

describe('retryOffset', () => {
  it('sums the delays from the first failure', () => {
    expect(retryOffset(1)).toBe(30_000);
    expect(retryOffset(5)).toBe(150_000);
    expect(retryOffset(6)).toBe(210_000);
    expect(retryOffset(7)).toBe(330_000);
    expect(retryOffset(16)).toBe(122_970_000);
    expect(retryOffset(17)).toBe(122_970_000 + 86_400_000);
    expect(retryOffset(20)).toBe(122_970_000 + 4 * 86_400_000);
  });

  it('equals the running sum of retryDelay for the first 200 retries', () => {
    let sum = 0;
    for (let retry = 1; retry <= 200; retry++) {
      sum += retryDelay(retry);
      expect(retryOffset(retry)).toBe(sum);
    }
  });

  it('satisfies offset(n) − offset(n − 1) = delay(n)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 10_000_000 }), (retry) => {
        expect(retryOffset(retry) - retryOffset(retry - 1)).toBe(retryDelay(retry));
      }),
    );
  });

  it.each(BAD_RETRIES)('throws RangeError for %s', (retry) => {
    expect(() => retryOffset(retry as number)).toThrow(RangeError);
  });
});

describe('retrySchedule', () => {
  it('lists absolute times after a first failure given in ms or as a Date', () => {
    const start = Date.UTC(2025, 10, 21, 8, 0, 0);
    for (const first of [start, new Date(start)]) {
      const schedule = retrySchedule(first, 7);
      expect(schedule.map((entry) => entry.retry)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(schedule.map((entry) => entry.delayMs)).toEqual([30_000, 30_000, 30_000, 30_000, 30_000, 60_000, 120_000]);
      expect(schedule.map((entry) => entry.at - start)).toEqual([
        30_000, 60_000, 90_000, 120_000, 150_000, 210_000, 330_000,
      ]);
      expect(new Date(schedule[6]!.at).toISOString()).toBe('2025-11-21T08:05:30.000Z');
    }
  });

  it('takes a Date from another realm (vm context, iframe) as a Date', () => {
    const start = Date.UTC(2025, 10, 21, 8, 0, 0);
    const foreign = runInNewContext(`new Date(${start})`) as Date;
    expect(foreign instanceof Date).toBe(false);
    expect(retrySchedule(foreign, 2)).toEqual(retrySchedule(start, 2));
    expect(() => retrySchedule(runInNewContext('new Date(Number.NaN)') as Date, 1)).toThrow(RangeError);
  });

  it('agrees with retryDelay and retryOffset for every entry', () => {
    const schedule = retrySchedule(1_000, 40);
    expect(schedule).toHaveLength(40);
    for (const entry of schedule) {
      expect(entry.delayMs).toBe(retryDelay(entry.retry));
      expect(entry.offsetMs).toBe(retryOffset(entry.retry));
      expect(entry.at).toBe(1_000 + entry.offsetMs);
    }
  });

  it('gives an empty list for count 0 and accepts the documented maximum', () => {
    expect(retrySchedule(0, 0)).toEqual([]);
    expect(retrySchedule(0, 10_000)).toHaveLength(10_000);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 10_001])('throws RangeError for count %s', (count) => {
    expect(() => retrySchedule(0, count)).toThrow(RangeError);
  });

  it.each([104_250_006, Number.MAX_SAFE_INTEGER])(
    'retryOffset throws RangeError for %s (offsets no longer exact)',
    (retry) => {
      expect(() => retryOffset(retry)).toThrow(RangeError);
    },
  );

  it('gives valid dates and exact offsets at the bounds', () => {
    // The last retry whose offset is a safe integer, and so exact.
    expect(retryOffset(104_250_005)).toBe(122_970_000 + (104_250_005 - 16) * 86_400_000);
    expect(Number.isSafeInteger(retryOffset(104_250_005))).toBe(true);
    expect(Number.isSafeInteger(122_970_000 + (104_250_006 - 16) * 86_400_000)).toBe(false);
    // Past the safe integers, and not a number: refused, the latter by its type.
    expect(() => retryDelay(2 ** 53)).toThrow(RangeError);
    expect(() => retryDelay('1' as never)).toThrow('got string.');
    const latest = 8.64e15 - retryOffset(10_000);
    const schedule = retrySchedule(latest, 10_000);
    expect(new Date(schedule.at(-1)!.at).getTime()).toBe(8.64e15);
    expect(new Date(retrySchedule(-8.64e15, 1)[0]!.at).getTime()).not.toBeNaN();
    // Only as far as the schedule reaches: the last valid Date itself starts an empty one.
    expect(retrySchedule(new Date(8.64e15), 0)).toEqual([]);
    expect(retrySchedule(8.64e15 - 30_000, 1)[0]!.at).toBe(8.64e15);
    expect(() => retrySchedule(8.64e15 - 29_999, 1)).toThrow(RangeError);
  });

  it.each([
    Number.NaN,
    Number.POSITIVE_INFINITY,
    new Date('not a date'),
    '2025-01-01',
    8.64e15 + 1,
    -8.64e15 - 1,
    1e300,
  ])('throws RangeError for first failure %s', (first) => {
    expect(() => retrySchedule(first as number, 1)).toThrow(RangeError);
  });
});
