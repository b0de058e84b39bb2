import { MAX_TIMER_MS } from './clock.js';
import { misuse } from './misuse.js';

/** What a duration option may be: a timer's delay, a time a store keeps, or a retention that may be endless. */
export type DurationKind = 'timer' | 'time' | 'retention';

const LIMITS: Readonly<Record<DurationKind, string>> = {
  timer: `at most ${MAX_TIMER_MS} (about 24.8 days, the longest timer JavaScript keeps)`,
  time: 'at most Number.MAX_SAFE_INTEGER',
  retention: 'at most Number.MAX_SAFE_INTEGER (or Infinity, to keep for ever)',
};

/**
 * Internal: checks one duration option, in milliseconds, and returns it
 * (`fallback` when absent). Every handler and store duration goes through
 * here, so each refuses the same way with one message form.
 */
export function checkDuration(name: string, value: unknown, kind: DurationKind, fallback?: number): number {
  const ms = value ?? fallback;
  const max = kind === 'timer' ? MAX_TIMER_MS : Number.MAX_SAFE_INTEGER;
  const ok = typeof ms === 'number' && ms > 0 && (ms <= max || (kind === 'retention' && ms === Infinity));
  if (!ok) throw misuse(`${name} must be a number of milliseconds greater than 0 and ${LIMITS[kind]}.`);
  return ms;
}
