import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from './run.js';

// The merchant's first hour, from the README as written: its quick start and
// the "Try the quick start" loop, taken from README.md (not copied), run in
// order in a fresh project that installs payhook as a link to this repository.
const root = fileURLToPath(new URL('../../', import.meta.url));

/** The first fenced block of `lang` after `anchor` in the README. */
function blockAfter(readme: string, anchor: string, lang: string): string {
  const at = readme.indexOf(anchor);
  if (at < 0) throw new Error(`README.md has no ${JSON.stringify(anchor)}`);
  const match = new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(readme.slice(at));
  if (!match) throw new Error(`README.md has no \`\`\`${lang} block after ${JSON.stringify(anchor)}`);
  return match[1]!;
}

interface Command {
  env: Record<string, string>;
  argv: string[];
  comment: string;
}

/** `A=1 B=2 cmd args   # comment` lines, split on spaces (the loop holds no quoting). */
function commands(sh: string): Command[] {
  return sh
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const hash = line.indexOf(' #');
      const code = (hash < 0 ? line : line.slice(0, hash)).trim();
      expect(code, 'the loop is copy-paste shell without quoting').not.toMatch(/['"\\$`]/);
      const words = code.split(/\s+/);
      const env: Record<string, string> = {};
      while (/^[A-Z_]+=/.test(words[0]!)) {
        const [name, value] = words.shift()!.split('=') as [string, string];
        env[name] = value;
      }
      return { env, argv: words, comment: hash < 0 ? '' : line.slice(hash + 2).trim() };
    });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill();
  child = undefined;
});

/** Starts the quick start's server.mjs as the loop says, on a free port (PORT), and waits until it listens. */
async function startServer(dir: string, env: Record<string, string>, port: number): Promise<() => string> {
  let output = '';
  const server = spawn(process.execPath, ['server.mjs'], {
    cwd: dir,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = server;
  server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  for (let waited = 0; ; waited += 50) {
    const up = await fetch(`http://127.0.0.1:${port}/`, { method: 'HEAD' }).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (server.exitCode !== null || waited > 15_000) throw new Error(`server.mjs did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return () => output;
}

async function project(): Promise<{ dir: string; loop: Command[] }> {
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  const quickStart = blockAfter(readme, '<!-- section:quick-start -->', 'js');
  const loop = commands(blockAfter(readme, '### Try the quick start', 'sh'));
  const dir = await mkdtemp(join(tmpdir(), 'payhook-first-hour-'));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'shop', private: true, type: 'module' }));
  await mkdir(join(dir, 'node_modules'));
  await symlink(root, join(dir, 'node_modules', 'payhook'));
  expect(quickStart).toContain('// server.mjs');
  await writeFile(join(dir, 'server.mjs'), quickStart);
  return { dir, loop };
}

/** `npx payhook …` from the loop, against the port the server really listens on. */
function payhookArgs(command: Command, port: number): string[] {
  expect(command.argv.slice(0, 2)).toEqual(['npx', 'payhook']);
  return command.argv.slice(2).map((arg) => arg.replace('127.0.0.1:3000', `127.0.0.1:${port}`));
}

describe("the README's first hour", () => {
  it('quick start + its testing loop, in order: 200 for payhook send --webhook-url, 401 for a tampered one', async () => {
    const { dir, loop } = await project();
    const [start, ...sends] = loop;
    expect(start!.argv).toEqual(['node', 'server.mjs']);
    const port = await freePort();
    const serverOutput = await startServer(dir, start!.env, port);
    // A newcomer sees that it started (and, with the test key, the warning that says so).
    await expect.poll(serverOutput).toContain(`listening on port ${port}`);

    // Each line says what the receiver answers; the loop must show both outcomes.
    const expected = sends.map((command) => Number(/answers (\d{3})/.exec(command.comment)?.[1]));
    expect(expected).toEqual([200, 401]);
    for (const [index, command] of sends.entries()) {
      const args = payhookArgs(command, port);
      const result = await run(args, { cwd: dir });
      expect(result.stdout, result.stderr).toContain(`attempt 1: ${expected[index]}`);
      // Each answer is the one the line expects (a tampered delivery refused is the check passing): exit 0.
      expect(result.code).toBe(0);
      if (expected[index] === 401) expect(result.stdout).toContain('SIGNATURE_MISMATCH');
      // What the issue asked for: the loop signs for the registered URL.
      expect(args).toContain('--webhook-url');
    }
    // onPayment ran once, for the accepted delivery.
    expect(serverOutput().match(/_DEBIT SUCCEEDED 100/g)).toHaveLength(1);
  });

  it('the quick start without PAYHOOK_TEST_KEY keeps the production key and refuses a test-key delivery', async () => {
    const { dir, loop } = await project();
    const port = await freePort();
    await startServer(dir, {}, port);
    const result = await run(payhookArgs(loop[1]!, port), { cwd: dir });
    expect(result.stdout).toContain('attempt 1: 401');
    expect(result.code).toBe(1);
  });
});
