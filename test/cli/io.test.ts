import { afterEach, describe, expect, it, vi } from 'vitest';
import { sleep } from '../../src/cli/io.js';
import { MAX_TIMER_MS } from '../../src/lib/clock.js';

describe('sleep', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('waits longer than one timer can, in steps, instead of firing at once', async () => {
    vi.useFakeTimers();
    let done = false;
    void sleep(MAX_TIMER_MS + 10).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(10);
    expect(done).toBe(true);
  });

  it('waits a short time once', async () => {
    vi.useFakeTimers();
    let done = false;
    void sleep(30).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(29);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
  });
});
