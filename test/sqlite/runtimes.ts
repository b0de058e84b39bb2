// Starts test/sqlite/server.mjs in one of the pinned runtimes of the matrix
// (test/runtimes), on a database file, and hands back a DedupStore driving
// it over loopback; or a whole receiver (receiver.mjs) on such a file, and
// the process that locks it (lock.mjs). A runtime that is missing or fails to start fails the
// suite (runtimeBinary throws), never skips it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DedupStore } from '../../src/dedup/store.js';
import { bundleForWorkerd } from '../../scripts/lib/bundle-worker.mjs';
import { remoteStore } from '../helpers/remote-store.js';
import { runtimeBinary } from '../../scripts/lib/runtime-binaries.mjs';

export type Runtime = 'node22' | 'node24' | 'deno' | 'bun';

const here = dirname(fileURLToPath(import.meta.url));
const bundles = new Map<string, Promise<string>>();

/** `entry` (a source file) bundled into one ESM file every runtime can import. */
function bundle(entry: string): Promise<string> {
  let bundled = bundles.get(entry);
  if (bundled === undefined) {
    bundled = (async () => {
      const file = join(mkdtempSync(join(tmpdir(), 'payhook-sqlite-')), 'bundle.mjs');
      writeFileSync(file, await bundleForWorkerd(join(here, entry)));
      return file;
    })();
    bundles.set(entry, bundled);
  }
  return bundled;
}

/** A fresh database file in a temporary directory. */
export function databaseFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'payhook-sqlite-db-')), 'payhook.sqlite');
}

export interface RunningProcess {
  port: number;
  version: string;
  /** Ends the process at once, as a crash would (SIGKILL). */
  kill: () => Promise<void>;
}

export interface RunningStore extends Omit<RunningProcess, 'port'> {
  store: DedupStore;
}

/** Spawns `script` (in this folder) in `runtime` with `args`, its output piped. */
function spawnScript(runtime: Runtime, script: string, args: string[]): ChildProcess {
  const { path } = runtimeBinary(runtime);
  const file = join(here, script);
  const command =
    runtime === 'deno'
      ? ['run', '--no-lock', '--no-prompt', '--allow-net=127.0.0.1', '--allow-read', '--allow-write', file]
      : [file];
  return spawn(path, [...command, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
  });
}

/** Starts `script` (in this folder) in `runtime` with `args`, and waits for its `listening <port>` line. */
async function startListening(runtime: Runtime, script: string, args: string[]): Promise<RunningProcess> {
  const { version } = runtimeBinary(runtime);
  const child = spawnScript(runtime, script, args);
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${runtime} did not start in 30 s:\n${output}`)), 30_000);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${runtime} exited (${code}) before listening:\n${output}`));
    });
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    port,
    version,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

export async function startStore(runtime: Runtime, database: string): Promise<RunningStore> {
  const { port, version, kill } = await startListening(runtime, 'server.mjs', [
    await bundle(join('..', '..', 'src', 'sqlite', 'index.ts')),
    database,
  ]);
  const store = remoteStore(async (operation, body) => {
    const response = await fetch(`http://127.0.0.1:${port}/store/${operation}`, { method: 'POST', body });
    return response.json();
  });
  return { store, version, kill };
}

/**
 * Runs `script` (commit-busy.mjs, shared-transaction.mjs, row-arrays.mjs,
 * locked-start.mjs: a scenario in this folder) in `runtime` on a fresh file with the bundled store, and returns
 * the JSON line it prints.
 */
export async function runScenario(runtime: Runtime, script: string): Promise<Record<string, unknown>> {
  const child = spawnScript(runtime, script, [
    await bundle(join('..', '..', 'src', 'sqlite', 'index.ts')),
    databaseFile(),
  ]);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const line = /^\{.*\}$/m.exec(output)?.[0];
  if (code !== 0 || line === undefined) throw new Error(`${script} on ${runtime} failed (${code}):\n${output}`);
  return JSON.parse(line) as Record<string, unknown>;
}

/**
 * Starts a whole receiver (test/sqlite/receiver.mjs) in `runtime` on
 * `database` in `journalMode`, with these handler options (JSON:
 * `publicKeys` at least).
 */
export async function startReceiver(
  runtime: Runtime,
  database: string,
  journalMode: 'wal' | 'delete',
  handler: Record<string, unknown>,
): Promise<RunningProcess> {
  return startListening(runtime, 'receiver.mjs', [
    await bundle('receiver-entry.ts'),
    database,
    JSON.stringify({ journalMode, handler }),
  ]);
}

export interface Lock {
  /** Resolves with performance.now() when the lock is held. */
  held: Promise<number>;
  /** Resolves with performance.now() when the holder announces it lets go (no write lands before). */
  unlocking: Promise<number>;
  /** Resolves when the holder has exited. */
  exited: Promise<void>;
}

/** Holds `database` from another process (Node 24's node:sqlite) for `ms`, in one EXCLUSIVE transaction. */
export function lockFile(database: string, ms: number): Lock {
  const { path } = runtimeBinary('node24');
  const child = spawn(path, [join(here, 'lock.mjs'), database, String(ms)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const line = (text: string) =>
    new Promise<number>((resolve, reject) => {
      child.stdout.on('data', () => {
        if (output.includes(`${text}\n`)) resolve(performance.now());
      });
      child.on('exit', () => reject(new Error(`the lock holder exited before "${text}":\n${output}`)));
    });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const held = line('locked');
  const unlocking = line('unlocking');
  held.catch(() => undefined);
  unlocking.catch(() => undefined);
  return { held, unlocking, exited: new Promise((resolve) => child.on('exit', () => resolve())) };
}
