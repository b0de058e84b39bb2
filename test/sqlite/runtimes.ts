// Starts test/sqlite/server.mjs in one of the pinned runtimes of the matrix
// (test/runtimes), on a database file, and hands back a DedupStore driving
// it over loopback. A runtime that is missing or fails to start fails the
// suite (runtimeBinary throws), never skips it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DedupStore } from '../../src/dedup/store.js';
import { bundleForWorkerd } from '../helpers/bundle-worker.mjs';
import { remoteStore } from '../helpers/remote-store.js';
import { runtimeBinary } from '../runtimes/binaries.mjs';

export type Runtime = 'node22' | 'node24' | 'deno' | 'bun';

const here = dirname(fileURLToPath(import.meta.url));
let bundled: Promise<string> | undefined;

/** payhook/sqlite bundled from the sources into one ESM file every runtime can import. */
function storeModule(): Promise<string> {
  bundled ??= (async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'payhook-sqlite-')), 'sqlite.mjs');
    writeFileSync(file, await bundleForWorkerd(join(here, '..', '..', 'src', 'sqlite', 'index.ts')));
    return file;
  })();
  return bundled;
}

/** A fresh database file in a temporary directory. */
export function databaseFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'payhook-sqlite-db-')), 'payhook.sqlite');
}

export interface RunningStore {
  store: DedupStore;
  version: string;
  /** Ends the process at once, as a crash would (SIGKILL). */
  kill(): Promise<void>;
}

export async function startStore(runtime: Runtime, database: string): Promise<RunningStore> {
  const { path, version } = runtimeBinary(runtime);
  const script = join(here, 'server.mjs');
  const args =
    runtime === 'deno'
      ? ['run', '--no-lock', '--no-prompt', '--allow-net=127.0.0.1', '--allow-read', '--allow-write', script]
      : [script];
  const child: ChildProcess = spawn(path, [...args, await storeModule(), database], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
  });
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
  const store = remoteStore(async (operation, body) => {
    const response = await fetch(`http://127.0.0.1:${port}/store/${operation}`, { method: 'POST', body });
    return response.json();
  });
  return {
    store,
    version,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
