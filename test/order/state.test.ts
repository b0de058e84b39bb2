import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPayhookError } from '../../src/errors.js';
import { shouldApplyStatus } from '../../src/order/state.js';
import { isFinalStatus, type PaymentStatus } from '../../src/status.js';

const ORDER: readonly PaymentStatus[] = ['PENDING', 'PROCESSING', 'FAILED', 'CANCELED', 'SUCCEEDED'];
const ALL: readonly PaymentStatus[] = [...ORDER, 'UNKNOWN'];
const status = fc.constantFrom(...ALL);

/** An order's state after a run of deliveries, as a merchant's handler keeps it. */
function fold(statuses: readonly PaymentStatus[]): PaymentStatus | undefined {
  let state: PaymentStatus | undefined;
  for (const incoming of statuses) if (shouldApplyStatus(state, incoming)) state = incoming;
  return state;
}

describe('shouldApplyStatus', () => {
  it('is true exactly when incoming is not UNKNOWN and ranks above current (CONTRACT §7)', () => {
    for (const current of [undefined, ...ALL]) {
      for (const incoming of ALL) {
        const from = current === undefined || current === 'UNKNOWN' ? -1 : ORDER.indexOf(current);
        const expected = incoming !== 'UNKNOWN' && ORDER.indexOf(incoming) > from;
        expect(shouldApplyStatus(current, incoming), `${current} → ${incoming}`).toBe(expected);
      }
    }
  });

  it('never leaves SUCCEEDED, and a late PROCESSING never undoes a final status', () => {
    for (const incoming of ALL) expect(shouldApplyStatus('SUCCEEDED', incoming)).toBe(false);
    for (const final of ALL.filter(isFinalStatus)) {
      expect(shouldApplyStatus(final, 'PROCESSING')).toBe(false);
      expect(shouldApplyStatus(final, 'PENDING')).toBe(false);
    }
  });

  it('ends paid after FAILED then SUCCEEDED, and after SUCCEEDED then FAILED', () => {
    expect(fold(['FAILED', 'SUCCEEDED'])).toBe('SUCCEEDED');
    expect(fold(['SUCCEEDED', 'FAILED'])).toBe('SUCCEEDED');
    expect(fold(['PROCESSING', 'SUCCEEDED', 'PROCESSING'])).toBe('SUCCEEDED');
  });

  it('never applies UNKNOWN, whatever came before', () => {
    expect(fold(['UNKNOWN'])).toBeUndefined();
    expect(fold(['PENDING', 'UNKNOWN'])).toBe('PENDING');
    expect(shouldApplyStatus(null, 'PENDING')).toBe(true);
  });

  it('folds any sequence with duplicates in any order to the same state, paid only if a SUCCEEDED was among them', () => {
    fc.assert(
      fc.property(
        fc
          .array(status, { maxLength: 30 })
          .chain((statuses) =>
            fc.tuple(fc.constant(statuses), fc.shuffledSubarray(statuses, { minLength: statuses.length })),
          ),
        fc.array(fc.nat(), { maxLength: 10 }),
        ([statuses, reordered], duplicates) => {
          // Redeliveries: repeat some statuses anywhere in the second run.
          const redelivered = [...reordered];
          for (const index of duplicates) {
            if (statuses.length > 0)
              redelivered.splice(index % (redelivered.length + 1), 0, statuses[index % statuses.length]!);
          }
          const end = fold(statuses);
          expect(fold(redelivered)).toBe(end);
          expect(end === 'SUCCEEDED').toBe(statuses.includes('SUCCEEDED'));
          // The end state is the highest-ranked known status among them.
          const known = statuses.filter((s) => s !== 'UNKNOWN');
          expect(end).toBe(known.length === 0 ? undefined : ORDER[Math.max(...known.map((s) => ORDER.indexOf(s)))]);
        },
      ),
      { numRuns: 5_000 },
    );
  });

  it.each([
    ['paid', 'SUCCEEDED'],
    ['SUCCEEDED', 'paid'],
    ['succeeded', 'FAILED'],
    [0, 'FAILED'],
    ['PENDING', undefined],
  ])('throws INVALID_ARGUMENT for %j → %j', (current, incoming) => {
    let caught: unknown;
    try {
      shouldApplyStatus(current as PaymentStatus, incoming as PaymentStatus);
    } catch (error) {
      caught = error;
    }
    expect(isPayhookError(caught, 'INVALID_ARGUMENT')).toBe(true);
  });
});
