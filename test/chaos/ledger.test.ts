// The chaos run's verdicts come from its ledger and its flood body: these
// pin what each column counts, so a green table cannot come from a ledger
// that counts nothing.
import { describe, expect, it } from 'vitest';
import { Ledger } from '../../scripts/chaos/ledger.mjs';
import { maximalBody } from '../../scripts/chaos/scenarios/flood.mjs';
import { judge } from '../../scripts/chaos/report.mjs';

const newLedger = () => new Ledger();

describe('chaos ledger', () => {
  it('counts a 200 without a recorded onPayment as lost, and a second onPayment as duplicated', () => {
    const ledger = newLedger();
    ledger.sent('a', 'handle');
    ledger.answer('a', 200);
    ledger.sent('b', 'handle');
    ledger.answer('b', 200);
    ledger.handled('b');
    ledger.handled('b');
    ledger.sent('c', 'handle');
    ledger.answer('c', 503);
    expect(ledger.summary()).toMatchObject({ sent: 3, handled: 2, lost: 1, duplicated: 1, pending: 1 });
  });

  it('counts any 200 or onPayment call for a forged request as a false accept', () => {
    const ledger = newLedger();
    ledger.sent('forged-answered', 'refuse');
    ledger.answer('forged-answered', 200);
    ledger.sent('forged-handled', 'refuse');
    ledger.answer('forged-handled', 401);
    ledger.handled('forged-handled');
    ledger.sent('refused', 'refuse');
    ledger.answer('refused', 401);
    expect(ledger.summary()).toMatchObject({ falseAccepts: 2, lost: 0, pending: 0 });
  });

  it('counts a 200 for a dead-lettered delivery as recorded, not lost', () => {
    const ledger = newLedger();
    ledger.sent('dead', 'either');
    ledger.answer('dead', 200);
    ledger.recorded('dead');
    expect(ledger.summary()).toMatchObject({ lost: 0, duplicated: 0, pending: 0 });
  });

  it('fails a row for every counted problem and every scenario failure', () => {
    const ledger = newLedger();
    ledger.sent('x', 'refuse');
    ledger.answer('x', 200);
    ledger.wrong('a reset instead of the 413', 2);
    ledger.fail('p99 over 50 ms');
    const summary = ledger.summary();
    const failures = judge({ ...summary, failures: ledger.failures });
    expect(summary.wrong).toBe(2);
    expect(failures).toEqual(['1 false accepts', '2 wrong: a reset instead of the 413', 'p99 over 50 ms']);
  });
});

describe('chaos flood body', () => {
  it('is valid JSON of exactly the given size, packed with tiny keys', () => {
    for (const size of [65_536, 1_048_576]) {
      const body = maximalBody(size);
      expect(body.byteLength).toBe(size);
      const keys = Object.keys(JSON.parse(new TextDecoder().decode(body)) as object);
      expect(keys.length).toBeGreaterThan(size / 10);
    }
  });
});
