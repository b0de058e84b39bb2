// The table the chaos run prints, and the targets it is judged by.

/** Issue 12's bounds, with default options. */
export const TARGETS = { unsignedStallMs: 20, validP99Ms: 50 };

const COLUMNS = [
  ['scenario', (row) => `${row.scenario} ${row.name}`],
  ['receiver', (row) => row.target],
  ['sent', (row) => row.sent],
  ['handled', (row) => row.handled],
  ['lost', (row) => row.lost],
  ['duplicated', (row) => row.duplicated],
  ['pending', (row) => row.pending],
  ['wrong answers', (row) => row.wrong],
  ['false accepts', (row) => row.falseAccepts],
  ['verdict', (row) => (row.failures.length === 0 ? 'pass' : 'FAIL')],
];

/** The `p` quantile (0–1) of `values`; NaN for none. */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
}

/** Milliseconds to one decimal, for the figures. */
export const round = (ms) => Math.round(ms * 10) / 10;

/** A missed timing target fails the full run; the quick run only notes it (see run.mjs). */
export function judgeTiming(ctx, ledger, message) {
  if (!ctx.quick) ledger.fail(message);
  else ledger.note(`timing target missed (judged in the full run only): ${message}`);
}

/** The targets every row is held to, plus the scenario's own failures. */
export function judge(row) {
  const failures = [];
  if (row.lost > 0) failures.push(`${row.lost} lost (answered 200, never recorded)`);
  if (row.duplicated > 0) failures.push(`${row.duplicated} handled more than once`);
  if (row.falseAccepts > 0) failures.push(`${row.falseAccepts} false accepts`);
  for (const [reason, count] of Object.entries(row.wrongReasons)) failures.push(`${count} wrong: ${reason}`);
  return [...failures, ...row.failures];
}

export function printTable(rows, write = (line) => process.stdout.write(`${line}\n`)) {
  const cells = rows.map((row) => COLUMNS.map(([, get]) => String(get(row))));
  const widths = COLUMNS.map(([title], i) => Math.max(title.length, ...cells.map((line) => line[i].length)));
  const line = (values) =>
    values.map((value, i) => (i < 2 ? value.padEnd(widths[i]) : value.padStart(widths[i]))).join('  ');
  write(line(COLUMNS.map(([title]) => title)));
  write(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const values of cells) write(line(values));
}

export function printDetails(rows, write = (line) => process.stdout.write(`${line}\n`)) {
  for (const row of rows) {
    const figures = Object.entries(row.metrics).map(([name, value]) => `${name}=${value}`);
    if (row.failures.length === 0 && row.notes.length === 0 && figures.length === 0) continue;
    write(`${row.scenario} ${row.name} ${row.target}:`);
    if (figures.length > 0) write(`    figures: ${figures.join(', ')}`);
    for (const note of row.notes) write(`    note: ${note}`);
    for (const failure of row.failures) write(`    FAIL: ${failure}`);
  }
}
