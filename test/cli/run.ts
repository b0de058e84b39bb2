import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The built CLI; the suite tests what users run (`npm run build` first). */
export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

export function assertBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" before the CLI tests.`);
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/cli.js ...args` and collects its output and exit code. */
export function run(
  args: readonly string[],
  options: { input?: string | Uint8Array; cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<Run> {
  assertBuilt();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(options.env && { env: { ...process.env, ...options.env } }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`payhook ${args.join(' ')} did not finish in time\n${stdout}\n${stderr}`));
    }, options.timeoutMs ?? 15_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    // A command that exits without reading its input closes the pipe first: EPIPE here says nothing about it.
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error);
    });
    child.stdin.end(options.input ?? '');
  });
}
