// The run's own bookkeeping, kept apart from payhook's: which deliveries were
// sent (and what each should come to), which onPayment calls completed, and
// which answers came back. The table is computed from this alone.

/**
 * `expect`:
 * - `handle`: a genuine delivery; it must reach onPayment exactly once.
 * - `refuse`: forged, tampered, stale or otherwise not a delivery to process;
 *   a 200 or an onPayment call is a false accept.
 * - `either`: the verdict may go both ways (it is checked elsewhere), but a
 *   200 must still mean it was recorded, and it must not run twice.
 */
export class Ledger {
  constructor() {
    this.entries = new Map();
    this.wrongReasons = new Map();
    this.failures = [];
    this.notes = [];
    this.metrics = {};
  }

  /** A figure printed beside the table (a stall, a p99). */
  metric(name, value) {
    this.metrics[name] = value;
  }

  sent(id, expect) {
    let entry = this.entries.get(id);
    if (entry === undefined) {
      entry = { id, expect, answers: [], handled: 0, recorded: 0 };
      this.entries.set(id, entry);
    }
    return entry;
  }

  answer(id, status) {
    this.sent(id, 'either').answers.push(status);
  }

  /** onPayment resolved for `id`. */
  handled(id) {
    this.sent(id, 'either').handled++;
  }

  /** Another durable hand-off (a dead-letter hook) took `id`. */
  recorded(id) {
    this.sent(id, 'either').recorded++;
  }

  /** An answer the sender should not have received (counted per reason). */
  wrong(reason, count = 1) {
    if (count > 0) this.wrongReasons.set(reason, (this.wrongReasons.get(reason) ?? 0) + count);
  }

  /** A target of this scenario that was missed, beside the counted ones. */
  fail(message) {
    this.failures.push(message);
  }

  note(message) {
    this.notes.push(message);
  }

  summary() {
    let sent = 0;
    let handled = 0;
    let lost = 0;
    let duplicated = 0;
    let pending = 0;
    let falseAccepts = 0;
    for (const entry of this.entries.values()) {
      sent++;
      handled += entry.handled;
      const got200 = entry.answers.includes(200);
      const taken = entry.handled + entry.recorded;
      if (entry.expect === 'refuse') {
        if (got200 || entry.handled > 0) falseAccepts++;
        continue;
      }
      if (entry.handled > 1) duplicated++;
      if (got200 && taken === 0) lost++;
      else if (entry.expect === 'handle' && taken === 0) pending++;
    }
    let wrong = 0;
    for (const count of this.wrongReasons.values()) wrong += count;
    return {
      sent,
      handled,
      lost,
      duplicated,
      pending,
      wrong,
      falseAccepts,
      wrongReasons: Object.fromEntries(this.wrongReasons),
    };
  }
}
