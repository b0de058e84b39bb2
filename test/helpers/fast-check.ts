import fc from 'fast-check';

/**
 * fast-check builds its table of every code point the first time a process
 * draws a `unit: 'binary'` string: 1.4 s on a quiet 2-core machine, more
 * than a test's 20 s timeout at load 6. A file that draws such strings runs
 * this in `beforeAll` (60 s), so no test pays for it.
 */
export function warmBinaryStrings(): void {
  fc.sample(fc.string({ unit: 'binary' }), 1);
}
