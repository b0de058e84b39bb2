import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkTimestamp, DEFAULT_TOLERANCE_MS, isTimestampFresh } from '../src/freshness.js';
import { codeOf } from './helpers/codes.js';

const NOW = 1_763_712_345_678;
const at = (offset: number): string => String(NOW + offset);

afterEach(() => vi.useRealTimers());

describe('isTimestampFresh', () => {
  it('uses the service window of 5 minutes by default', () => {
    expect(DEFAULT_TOLERANCE_MS).toBe(300_000);
  });

  it('includes the boundary exactly, in both directions', () => {
    expect(isTimestampFresh(at(-300_000), { now: NOW })).toBe(true);
    expect(isTimestampFresh(at(+300_000), { now: NOW })).toBe(true);
  });

  it('refuses one millisecond beyond the boundary, in both directions', () => {
    expect(isTimestampFresh(at(-300_001), { now: NOW })).toBe(false);
    expect(isTimestampFresh(at(+300_001), { now: NOW })).toBe(false);
  });

  it('accepts the present moment and anything in between', () => {
    expect(isTimestampFresh(at(0), { now: NOW })).toBe(true);
    expect(isTimestampFresh(at(-1), { now: NOW })).toBe(true);
    expect(isTimestampFresh(at(123_456), { now: NOW })).toBe(true);
  });

  it('honours an injected tolerance, including 0', () => {
    expect(isTimestampFresh(at(-1_000), { now: NOW, toleranceMs: 1_000 })).toBe(true);
    expect(isTimestampFresh(at(-1_001), { now: NOW, toleranceMs: 1_000 })).toBe(false);
    expect(isTimestampFresh(at(0), { now: NOW, toleranceMs: 0 })).toBe(true);
    expect(isTimestampFresh(at(1), { now: NOW, toleranceMs: 0 })).toBe(false);
  });

  it('takes now as a Date, also from another realm', () => {
    expect(isTimestampFresh(at(-300_000), { now: new Date(NOW) })).toBe(true);
    expect(isTimestampFresh(at(-300_001), { now: new Date(NOW) })).toBe(false);
    const foreignDate = runInNewContext(`new Date(${NOW})`) as Date;
    expect(foreignDate instanceof Date).toBe(false);
    expect(isTimestampFresh(at(0), { now: foreignDate })).toBe(true);
  });

  it('defaults now to Date.now() at the time of the call', () => {
    vi.useFakeTimers({ now: NOW, toFake: ['Date'] });
    expect(isTimestampFresh(at(-300_000))).toBe(true);
    expect(isTimestampFresh(at(-300_001))).toBe(false);
    vi.setSystemTime(NOW + 10_000);
    expect(isTimestampFresh(at(-300_000))).toBe(false);
  });

  it('refuses a timestamp in seconds instead of milliseconds', () => {
    const seconds = String(Math.floor(NOW / 1000));
    expect(isTimestampFresh(seconds, { now: NOW })).toBe(false);
    const check = checkTimestamp(seconds, { now: NOW });
    expect(check.ok).toBe(false);
    expect(!check.ok && check.code).toBe('TIMESTAMP_OUT_OF_WINDOW');
    expect(!check.ok && check.message).toMatch(/seconds/);
  });

  it('suggests seconds only when the value in seconds would be within the window, the boundary included', () => {
    const seconds = Math.floor(NOW / 1000);
    const remainder = NOW - seconds * 1000; // 678 ms: how far the value read as seconds lies from now
    const hint = (timestamp: string | number, toleranceMs: number): string => {
      const check = checkTimestamp(timestamp, { now: NOW, toleranceMs });
      if (check.ok) throw new Error('expected a refusal');
      return check.message;
    };
    expect(hint(seconds, remainder)).toContain('It looks like seconds, not milliseconds.');
    expect(hint(seconds, remainder - 1)).not.toContain('seconds');
    expect(hint(at(-400_000), 300_000)).toBe(
      "The delivery is 400000 ms old; the window is 300000 ms. If all deliveries are refused so, check this server's clock.",
    );
  });

  it('takes numbers as well as strings, with the same window', () => {
    expect(isTimestampFresh(NOW - 300_000, { now: NOW })).toBe(true);
    expect(isTimestampFresh(NOW + 300_000, { now: NOW })).toBe(true);
    expect(isTimestampFresh(NOW - 300_001, { now: NOW })).toBe(false);
  });

  it.each([
    ['a plus sign', `+${NOW}`],
    ['a minus sign', `-${NOW}`],
    ['a decimal point', `${NOW}.0`],
    ['a decimal fraction', `${NOW}.5`],
    ['a leading space', ` ${NOW}`],
    ['a trailing space', `${NOW} `],
    ['a trailing newline', `${NOW}\n`],
    ['an inner space', `${String(NOW).slice(0, 5)} ${String(NOW).slice(5)}`],
    ['an exponent', '1.763712345678e12'],
    ['an exponent without point', '1763712345678e0'],
    ['hexadecimal', `0x${NOW.toString(16)}`],
    ['an underscore separator', '1_763_712_345_678'],
    ['a comma separator', '1,763,712,345,678'],
    ['full-width digits', '１７６３７１２３４５６７８'],
    ['Arabic-Indic digits', '١٧٦٣٧١٢٣٤٥٦٧٨'],
    ['letters mixed in', '17637x2345678'],
    ['"Infinity"', 'Infinity'],
    ['"NaN"', 'NaN'],
    ['an ISO date', new Date(NOW).toISOString()],
  ])('MALFORMED_TIMESTAMP, never fresh: %s', (_label, value) => {
    expect(isTimestampFresh(value, { now: NOW })).toBe(false);
    const check = checkTimestamp(value, { now: NOW });
    expect(check.ok ? 'ok' : check.code).toBe('MALFORMED_TIMESTAMP');
  });

  it.each([
    ['a fractional number', NOW + 0.5],
    ['a negative number', -1],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a number beyond the safe integers', 2 ** 60],
    ['an object', { valueOf: () => NOW } as unknown as number],
    ['a boolean', true as unknown as number],
    ['an array', [String(NOW)] as unknown as string],
  ])('MALFORMED_TIMESTAMP for %s', (_label, value) => {
    const check = checkTimestamp(value, { now: NOW });
    expect(check.ok ? 'ok' : check.code).toBe('MALFORMED_TIMESTAMP');
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['the empty string', ''],
  ])('MISSING_TIMESTAMP for %s', (_label, value) => {
    expect(isTimestampFresh(value, { now: NOW })).toBe(false);
    const check = checkTimestamp(value, { now: NOW });
    expect(check.ok ? 'ok' : check.code).toBe('MISSING_TIMESTAMP');
  });

  it('accepts leading zeros (still plain decimal digits)', () => {
    expect(isTimestampFresh(`000${NOW}`, { now: NOW })).toBe(true);
  });

  it('reads 0 as a timestamp (digits, or a non-negative safe integer), only far out of the window', () => {
    for (const zero of ['0', 0]) {
      expect(checkTimestamp(zero, { now: 0 })).toEqual({ ok: true, timestamp: 0, skewMs: 0 });
      expect(checkTimestamp(zero, { now: NOW })).toMatchObject({ ok: false, code: 'TIMESTAMP_OUT_OF_WINDOW' });
    }
  });

  it('a digit string too large for a number is out of the window, not fresh', () => {
    const check = checkTimestamp('9'.repeat(400), { now: NOW });
    expect(check.ok ? 'ok' : check.code).toBe('TIMESTAMP_OUT_OF_WINDOW');
  });
});

describe('checkTimestamp', () => {
  it('reports the timestamp and the skew (positive: in the past)', () => {
    expect(checkTimestamp(at(-1_500), { now: NOW })).toEqual({ ok: true, timestamp: NOW - 1_500, skewMs: 1_500 });
    expect(checkTimestamp(at(2_000), { now: NOW })).toEqual({ ok: true, timestamp: NOW + 2_000, skewMs: -2_000 });
  });

  it('says which way a timestamp is out of the window', () => {
    const old = checkTimestamp(at(-400_000), { now: NOW });
    const ahead = checkTimestamp(at(400_000), { now: NOW });
    expect(old).toMatchObject({
      ok: false,
      code: 'TIMESTAMP_OUT_OF_WINDOW',
      timestamp: NOW - 400_000,
      skewMs: 400_000,
    });
    expect(ahead).toMatchObject({
      ok: false,
      code: 'TIMESTAMP_OUT_OF_WINDOW',
      timestamp: NOW + 400_000,
      skewMs: -400_000,
    });
    expect(!old.ok && old.message).toContain('is 400000 ms old');
    expect(!ahead.ok && ahead.message).toContain('is 400000 ms in the future');
  });
});

describe('option misuse: INVALID_ARGUMENT', () => {
  it.each([
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['an invalid Date', new Date('not a date')],
    ['a numeric string', String(NOW)],
    ['null', null],
  ])('now = %s', (_label, now) => {
    expect(codeOf(() => isTimestampFresh(at(0), { now: now as number }))).toBe('INVALID_ARGUMENT');
  });

  it.each([
    ['negative', -1],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a string', '300000'],
  ])('toleranceMs = %s', (_label, toleranceMs) => {
    expect(codeOf(() => isTimestampFresh(at(0), { now: NOW, toleranceMs: toleranceMs as number }))).toBe(
      'INVALID_ARGUMENT',
    );
  });

  it('checks the options even when the timestamp is missing', () => {
    expect(codeOf(() => checkTimestamp(undefined, { now: Number.NaN }))).toBe('INVALID_ARGUMENT');
  });
});
