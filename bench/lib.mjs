// Measurement helpers for the benchmark scripts. Nothing here is part of the
// package; it only times functions and formats what it measured.
import { readFileSync } from 'node:fs';

/** The median of a list of numbers (the mean of the two middle ones for an even count). */
export function median(values) {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Process CPU time (every thread: main, libuv pool, GC) in µs since `start`. */
function cpuSince(start) {
  const used = process.cpuUsage(start);
  return used.user + used.system;
}

const MAIN_THREAD_STAT = `/proc/self/task/${process.pid}/schedstat`;

/**
 * CPU time of the main (JavaScript) thread alone, in µs, from Linux's
 * schedstat; `NaN` where that file does not exist. With Web Crypto the RSA
 * work runs on libuv's pool, so this says how much of a delivery's CPU the
 * one JavaScript thread has to do: the figure that caps throughput when the
 * pool has idle threads.
 */
function mainThreadCpu() {
  try {
    return Number(readFileSync(MAIN_THREAD_STAT, 'utf8').split(' ')[0]) / 1000;
  } catch {
    return Number.NaN;
  }
}

/**
 * Runs a synchronous `fn` back to back over `items` (cycling) for `durationMs`
 * and returns `{ opsPerSecond, cpuPerOp, mainCpuPerOp }`: operations per
 * second, the process's CPU time per operation in µs (all threads), and the
 * main thread's share of it (`NaN` off Linux). The CPU figure
 * depends less on what else the machine runs than the throughput does (it
 * still grows under contention, most for the thread-pool figures), so it
 * explains the throughput. Every call must return a truthy value:
 * a falsy one means the thing under test rejected a valid delivery, which is
 * a bug in the benchmark or the package, so it throws.
 */
export function measureSync(fn, items, durationMs) {
  const n = items.length;
  let ops = 0;
  const cpu = process.cpuUsage();
  const main = mainThreadCpu();
  const start = performance.now();
  const end = start + durationMs;
  let now = start;
  while (now < end) {
    // Check the clock every 16 calls: an RSA verification takes tens of µs,
    // so this keeps the timing overhead negligible without overshooting.
    for (let k = 0; k < 16; k++) {
      if (!fn(items[ops % n])) throw new Error(`rejected a valid delivery (item ${ops % n})`);
      ops++;
    }
    now = performance.now();
  }
  return {
    opsPerSecond: (ops * 1000) / (now - start),
    cpuPerOp: cpuSince(cpu) / ops,
    mainCpuPerOp: (mainThreadCpu() - main) / ops,
  };
}

/**
 * Runs an async `fn` over `items` with `concurrency` calls in flight (each of
 * `concurrency` workers awaits its call before starting the next) for
 * `durationMs`, and returns `{ opsPerSecond, cpuPerOp, mainCpuPerOp }` as
 * measureSync does.
 */
export async function measureAsync(fn, items, durationMs, concurrency) {
  const n = items.length;
  let next = 0;
  let ops = 0;
  let failure;
  const cpu = process.cpuUsage();
  const main = mainThreadCpu();
  const start = performance.now();
  const end = start + durationMs;
  async function worker() {
    while (failure === undefined && performance.now() < end) {
      const index = next++ % n;
      let result;
      try {
        result = await fn(items[index]);
      } catch (error) {
        failure ??= error;
        return;
      }
      if (!result) {
        failure ??= new Error(`rejected a valid delivery (item ${index})`);
        return;
      }
      ops++;
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  if (failure !== undefined) throw failure;
  return {
    opsPerSecond: (ops * 1000) / (performance.now() - start),
    cpuPerOp: cpuSince(cpu) / ops,
    mainCpuPerOp: (mainThreadCpu() - main) / ops,
  };
}

/** Formats operations per second with a thousands separator. */
export function formatOps(value) {
  if (!Number.isFinite(value)) return '—';
  return Math.round(value).toLocaleString('en-US');
}

/** Formats a ratio as `1.23×`. */
export function formatRatio(value) {
  if (!Number.isFinite(value)) return '—';
  return `${value >= 10 ? value.toFixed(1) : value.toFixed(2)}×`;
}

/** Lays out rows of cells as a Markdown-style table with padded columns. */
export function table(header, rows, align) {
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((row) => String(row[c]).length)));
  const pad = (cell, c) => (align[c] === 'r' ? String(cell).padStart(widths[c]) : String(cell).padEnd(widths[c]));
  const line = (row) => `| ${row.map(pad).join(' | ')} |`;
  const rule = `|${widths.map((w, c) => (align[c] === 'r' ? '-'.repeat(w + 1) + ':' : '-'.repeat(w + 2))).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** Lets pending I/O and timers run, and gives the GC a moment between figures. */
export function settle(ms = 50) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A non-negative number from the environment variable `name`, or `fallback` when it is unset or empty. */
export const env = (name, fallback) => {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0) throw new Error(`${name} must be a non-negative number, not ${value}`);
  return number;
};
