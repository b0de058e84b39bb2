import { readFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { MAX_TIMER_MS } from '../lib/clock.js';

/** Exit codes every command shares; documented in `payhook --help`. */
export const EXIT = { OK: 0, FAILED: 1, USAGE: 2 } as const;

/** A mistake in how the command was called: printed with the usage line, exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Where a command writes; tests and the demo can capture it. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
}

/**
 * Writes to stdout and stderr that end quietly when the reader goes away:
 * `payhook send … | head -1` closes the pipe after one line, and the next
 * write fails with EPIPE, which Node reports as an unhandled 'error' event
 * (a stack trace and exit 1). From then on that stream's lines are dropped;
 * the command still runs to its end and exits with its own code.
 */
function quietOnClosedPipe(stream: NodeJS.WriteStream): (line: string) => void {
  let closed = false;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    closed = true;
  });
  return (line) => {
    if (!closed) stream.write(`${line}\n`);
  };
}

let processIoCache: Io | undefined;

/** The real stdout and stderr (listeners attached on first use). */
export function processIo(): Io {
  processIoCache ??= { out: quietOnClosedPipe(process.stdout), err: quietOnClosedPipe(process.stderr) };
  return processIoCache;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * `--age -400000` as `--age=-400000`: parseArgs refuses a value that starts
 * with "-" after a string option as ambiguous, but a negative number is
 * never an option name.
 */
function joinNegativeNumbers(args: readonly string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** `parseArgs` in strict mode, its errors turned into {@link UsageError}s. */
export function parse<O extends Options>(args: readonly string[], options: O, positionals = 0) {
  try {
    const parsed = parseArgs({
      args: joinNegativeNumbers(args, options),
      options,
      strict: true,
      allowPositionals: positionals > 0,
      tokens: true,
    });
    if (parsed.positionals.length > positionals) {
      throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[positionals])}`);
    }
    // parseArgs keeps the last of a value given twice: `--status FAILED --status SUCCEEDED` would sign a success.
    const given = new Set<string>();
    for (const token of parsed.tokens) {
      if (token.kind !== 'option' || options[token.name]?.type !== 'string' || options[token.name]?.multiple) continue;
      if (given.has(token.name)) throw new UsageError(`--${token.name} is given more than once`);
      given.add(token.name);
    }
    return parsed;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new UsageError(message.replace(/\. To specify a positional argument.*$/s, ''));
  }
}

/** A positive integer flag (or its default). */
export function integerFlag(value: string | undefined, name: string, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`--${name} must be a whole number, at least ${min} (got ${JSON.stringify(value)})`);
  }
  return Number(value);
}

/** A positive number flag (or its default). */
export function numberFlag(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number) || number <= 0) {
    throw new UsageError(`--${name} must be a number greater than 0 (got ${JSON.stringify(value)})`);
  }
  return number;
}

/** `value` read as an absolute http: or https: URL, or a usage error naming `what`. */
export function checkHttpUrl(value: string, what: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new UsageError(
      `${what} is not a valid absolute URL (scheme, host, a port up to 65535): ${JSON.stringify(value)}`,
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new UsageError(`${what} must be http: or https:`);
  return parsed;
}

/** `name=value` pairs from a repeatable flag. */
export function pairs(values: readonly string[] | undefined, name: string): Array<[string, string]> {
  return (values ?? []).map((entry) => {
    const at = entry.indexOf('=');
    if (at <= 0) throw new UsageError(`--${name} takes name=value (got ${JSON.stringify(entry)})`);
    return [entry.slice(0, at), entry.slice(at + 1)];
  });
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Refuses `-` for two inputs: the first read takes all of stdin, and the second would get nothing. */
export function stdinOnce(inputs: ReadonlyArray<readonly [flag: string, path: string | undefined]>): void {
  const flags = inputs.filter(([, path]) => path === '-').map(([flag]) => flag);
  if (flags.length > 1)
    throw new UsageError(`stdin ("-") can be read once, and ${flags.join(' and ')} both name it: give one a file`);
}

/** Reads a file (or stdin for `-`) as bytes; an unreadable file is a usage error. */
export async function readInputBytes(path: string, what: string): Promise<Buffer> {
  try {
    return path === '-' ? await readStdin() : await readFile(path);
  } catch (error) {
    throw new UsageError(
      `cannot read the ${what} ${JSON.stringify(path)}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
}

/** Reads a file (or stdin for `-`) as text; an unreadable file is a usage error. */
export async function readInput(path: string, what: string): Promise<string> {
  return (await readInputBytes(path, what)).toString('utf8');
}

/** Reads a UTF-8 text file (or stdin for `-`), a leading byte order mark dropped; other bytes are a usage error. */
export async function readUtf8(path: string, what: string): Promise<string> {
  const bytes = await readInputBytes(path, what);
  try {
    // fatal: a byte that is not UTF-8 throws instead of becoming U+FFFD; the BOM is dropped by default.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`the ${what} ${JSON.stringify(path)} is not UTF-8: save it as UTF-8`);
  }
}

/** Milliseconds as a short human figure: `30 s`, `2 min`, `1 h`, `250 ms`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Math.round(ms / 100) / 10} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 6000) / 10} min`;
  return `${Math.round(ms / 360_000) / 10} h`;
}

/** Waits `ms`, in steps no timer overflows (a retry slowed by a tiny `--speed` can wait years). */
export async function sleep(ms: number): Promise<void> {
  for (let left = ms; left > 0; left -= MAX_TIMER_MS) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(left, MAX_TIMER_MS)));
  }
}
