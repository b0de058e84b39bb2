import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultDedupKey } from '../../src/dedup/key.js';
import { parseWebhook } from '../../src/webhook/parse.js';

const delivery = (status: string, id = 'p-1_DEBIT') =>
  parseWebhook({ id, transactionId: 'p-1', status, amount: 100, fields: {} });

describe('defaultDedupKey', () => {
  it('keeps the keys of the known statuses as stores already hold them', () => {
    expect(defaultDedupKey(delivery('success'))).toBe('p-1_DEBIT:SUCCEEDED');
    expect(defaultDedupKey(delivery('FAILED'))).toBe('p-1_DEBIT:FAILED');
    expect(defaultDedupKey(delivery('processing'))).toBe('p-1_DEBIT:PROCESSING');
    expect(defaultDedupKey(delivery('CANCELLED'))).toBe('p-1_DEBIT:CANCELED');
    expect(defaultDedupKey(delivery('pending'))).toBe('p-1_DEBIT:PENDING');
  });

  it('gives UNKNOWN deliveries of one payment with different raw statuses different keys', () => {
    expect(defaultDedupKey(delivery('PAID'))).toBe('p-1_DEBIT:UNKNOWN:PAID');
    expect(defaultDedupKey(delivery('EXPIRED'))).not.toBe(defaultDedupKey(delivery('PAID')));
    // A redelivery of the same raw status (in any letter case) is still a duplicate.
    expect(defaultDedupKey(delivery(' paid '))).toBe(defaultDedupKey(delivery('PAID')));
    // A _CREDIT stays apart from the _DEBIT of the same transaction.
    expect(defaultDedupKey(delivery('PAID', 'p-1_CREDIT'))).not.toBe(defaultDedupKey(delivery('PAID')));
  });

  it('never gives an unknown status the key of a known one, and keeps distinct words apart', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        const [ka, kb] = [defaultDedupKey(delivery(a)), defaultDedupKey(delivery(b))];
        const sameWord = a.trim().toUpperCase() === b.trim().toUpperCase();
        const sameStatus = delivery(a).status === delivery(b).status && delivery(a).status !== 'UNKNOWN';
        expect(ka === kb).toBe(sameWord || sameStatus);
      }),
      { numRuns: 2_000 },
    );
  });
});
