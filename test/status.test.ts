import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isFinalStatus, normaliseStatus, type PaymentStatus } from '../src/status.js';

describe('normaliseStatus', () => {
  const spellings: Array<[unknown, string]> = [
    // spec §3: SUCCEEDED or FAILED in any letter case, plus success / succeeded.
    ['SUCCEEDED', 'SUCCEEDED'],
    ['succeeded', 'SUCCEEDED'],
    ['Succeeded', 'SUCCEEDED'],
    ['sUcCeEdEd', 'SUCCEEDED'],
    ['success', 'SUCCEEDED'],
    ['SUCCESS', 'SUCCEEDED'],
    ['Success', 'SUCCEEDED'],
    ['FAILED', 'FAILED'],
    ['failed', 'FAILED'],
    ['Failed', 'FAILED'],
    ['PROCESSING', 'PROCESSING'],
    ['processing', 'PROCESSING'],
    ['Processing', 'PROCESSING'],
    // the payments gateway's documented list adds CANCELED (also spelled CANCELLED) and PENDING
    ['CANCELED', 'CANCELED'],
    ['canceled', 'CANCELED'],
    ['CANCELLED', 'CANCELED'],
    ['Cancelled', 'CANCELED'],
    ['PENDING', 'PENDING'],
    ['pending', 'PENDING'],
    [' Pending\n', 'PENDING'],
    // whitespace around the word
    [' SUCCEEDED ', 'SUCCEEDED'],
    ['\tsuccess\n', 'SUCCEEDED'],
    ['\u00a0failed\r\n', 'FAILED'],
    ['  processing', 'PROCESSING'],
    // anything else
    ['', 'UNKNOWN'],
    ['   ', 'UNKNOWN'],
    ['SUCCEED', 'UNKNOWN'],
    ['successful', 'UNKNOWN'],
    ['succeeded!', 'UNKNOWN'],
    ['SUC CEEDED', 'UNKNOWN'],
    ['fail', 'UNKNOWN'],
    ['FAILURE', 'UNKNOWN'],
    ['refunded', 'UNKNOWN'],
    // no document of the service names these: never a success
    ['PAID', 'UNKNOWN'],
    ['paid', 'UNKNOWN'],
    ['EXPIRED', 'UNKNOWN'],
    ['CANCEL', 'UNKNOWN'],
    ['CANCELLLED', 'UNKNOWN'],
    ['PROCESSİNG', 'UNKNOWN'],
    ['UNKNOWN', 'UNKNOWN'],
    // non-strings
    [null, 'UNKNOWN'],
    [undefined, 'UNKNOWN'],
    [1, 'UNKNOWN'],
    [true, 'UNKNOWN'],
    [{ toString: () => 'SUCCEEDED' }, 'UNKNOWN'],
    [['SUCCEEDED'], 'UNKNOWN'],
    [new String('SUCCEEDED'), 'UNKNOWN'],
  ];

  it.each(spellings)('%j → %s', (raw, expected) => {
    expect(normaliseStatus(raw)).toBe(expected);
  });

  it('never throws and only returns the six statuses', () => {
    fc.assert(
      fc.property(fc.anything(), (raw) => {
        expect(['SUCCEEDED', 'FAILED', 'CANCELED', 'PROCESSING', 'PENDING', 'UNKNOWN']).toContain(normaliseStatus(raw));
      }),
    );
  });

  it('ignores letter case and surrounding whitespace for every known word', () => {
    const word = fc.constantFrom(
      ['succeeded', 'SUCCEEDED'],
      ['success', 'SUCCEEDED'],
      ['failed', 'FAILED'],
      ['processing', 'PROCESSING'],
      ['canceled', 'CANCELED'],
      ['cancelled', 'CANCELED'],
      ['pending', 'PENDING'],
    );
    const space = fc.constantFrom('', ' ', '\t', '\n', '  \r\n');
    fc.assert(
      fc.property(
        word,
        fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }),
        space,
        space,
        ([text, expected], upper, before, after) => {
          const cased = [...text].map((char, i) => (upper[i % upper.length] ? char.toUpperCase() : char)).join('');
          expect(normaliseStatus(before + cased + after)).toBe(expected);
        },
      ),
    );
  });

  it('says SUCCEEDED only for the success spellings', () => {
    fc.assert(
      fc.property(fc.string(), (raw) => {
        const word = raw.trim().toLowerCase();
        expect(normaliseStatus(raw) === 'SUCCEEDED').toBe(word === 'succeeded' || word === 'success');
      }),
    );
  });
});

describe('isFinalStatus', () => {
  it.each<[PaymentStatus, boolean]>([
    ['SUCCEEDED', true],
    ['FAILED', true],
    ['CANCELED', true],
    ['PROCESSING', false],
    ['PENDING', false],
    ['UNKNOWN', false],
  ])('%s → %s', (status, final) => {
    expect(isFinalStatus(status)).toBe(final);
  });

  it('calls a cancelled payment final and a pending one not', () => {
    expect(isFinalStatus(normaliseStatus('CANCELLED'))).toBe(true);
    expect(isFinalStatus(normaliseStatus('canceled'))).toBe(true);
    expect(isFinalStatus(normaliseStatus('PENDING'))).toBe(false);
  });

  it('never calls an unrecognised status final', () => {
    fc.assert(
      fc.property(fc.string(), (raw) => {
        if (normaliseStatus(raw) === 'UNKNOWN') expect(isFinalStatus(normaliseStatus(raw))).toBe(false);
      }),
    );
  });
});
