import { describe, expect, it } from 'vitest';
import { describeParked, isParked, park } from '../src/park.js';

describe('park', () => {
  it('parks with a non-empty reason only', () => {
    expect(isParked(park('amount differs'))).toBe(true);
    for (const value of [undefined, null, 'park', { park: 1 }, { park: '' }, {}]) expect(isParked(value)).toBe(false);
  });

  it('refuses a reason that is not non-empty text, which would read as "applied"', () => {
    for (const reason of ['', undefined, 42]) {
      expect(() => park(reason as string)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    }
    // The message says what was given instead.
    expect(() => park('')).toThrow(/\(got empty text\)/);
    expect(() => park(42 as unknown as string)).toThrow(/\(got number\)/);
  });

  it('describes a parked delivery for a log line: the reason, then the details as JSON, cut at 200 characters', () => {
    expect(describeParked(park('unknown order'))).toBe('unknown order');
    expect(describeParked(park('unknown order', { reference: 'order-1' }))).toBe(
      'unknown order {"reference":"order-1"}',
    );
    const long = describeParked(park('amount differs', { note: 'x'.repeat(500) }));
    expect(long).toHaveLength('amount differs '.length + 201);
    expect(long.endsWith('…')).toBe(true);
    // Exactly at the limit, nothing is cut.
    const full = describeParked(park('amount differs', 'x'.repeat(198)));
    expect(full).toBe(`amount differs "${'x'.repeat(198)}"`);
    // What JSON cannot write still gives a line, never a throw.
    const cycle: Record<string, unknown> = {};
    cycle['self'] = cycle;
    for (const details of [cycle, 10n, () => 1]) {
      expect(describeParked(park('odd', details))).toBe('odd (details JSON cannot write)');
    }
  });
});
