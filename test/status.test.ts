import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normaliseStatus } from '../src/status.js';

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
    ['pending', 'UNKNOWN'],
    ['refunded', 'UNKNOWN'],
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

  it('never throws and only returns the four statuses', () => {
    fc.assert(
      fc.property(fc.anything(), (raw) => {
        expect(['SUCCEEDED', 'FAILED', 'PROCESSING', 'UNKNOWN']).toContain(normaliseStatus(raw));
      }),
    );
  });

  it('ignores letter case and surrounding whitespace for every known word', () => {
    const word = fc.constantFrom(
      ['succeeded', 'SUCCEEDED'],
      ['success', 'SUCCEEDED'],
      ['failed', 'FAILED'],
      ['processing', 'PROCESSING'],
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
