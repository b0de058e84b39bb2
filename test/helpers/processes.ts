// A child process whose output a test reads back: forked with extra
// environment, its stdout and stderr collected line by line.
import { fork, type ChildProcess } from 'node:child_process';

export interface Running {
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr, line by line. */
  lines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Forks `script` with `env` over this process's environment; `children` holds it until it exits (for cleanup). */
export function forkCollecting(script: string, env: Record<string, string>, children: Set<ChildProcess>): Running {
  const child = fork(script, [], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  children.add(child);
  const lines: string[] = [];
  const collect = (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean));
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<Awaited<Running['exited']>>((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, lines, exited };
}
