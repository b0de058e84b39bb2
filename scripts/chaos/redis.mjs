// A throw-away redis-server on a free loopback port, which the chaos run can
// kill (SIGKILL), restart on the same port, and slow down with DEBUG SLEEP.
// A missing binary is a loud failure: the run never skips its Redis stores.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'node:net';
import { freePort } from './net.mjs';

const CANDIDATES = ['/usr/bin/redis-server', '/usr/local/bin/redis-server', '/usr/sbin/redis-server'];

function binary() {
  const found = process.env.REDIS_SERVER ?? CANDIDATES.find((path) => existsSync(path));
  if (found === undefined) {
    throw new Error(
      `redis-server is not installed (looked in ${CANDIDATES.join(', ')}; or set REDIS_SERVER). ` +
        'The chaos run needs a real one and never skips its Redis stores.',
    );
  }
  return found;
}

/**
 * Sends one inline command on a fresh connection and resolves with the first
 * reply line, or rejects after `timeoutMs`.
 */
export function redisCommand(port, command, timeoutMs = 5_000) {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    let reply = '';
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      reject(new Error(`redis ${command}: no reply within ${timeoutMs} ms`));
    });
    socket.on('error', reject);
    socket.on('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) {
        socket.destroy();
        resolve(reply.slice(0, reply.indexOf('\r\n')));
      }
    });
  });
}

async function waitForPong(port, child, deadline) {
  while (Date.now() < deadline && child.exitCode === null) {
    const reply = await redisCommand(port, 'PING', 500).catch(() => '');
    if (reply === '+PONG') return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

function launch(port, dir) {
  // A dedup store that forgot its records on a crash would let any redelivery
  // run twice, whatever payhook does: so the server persists every write
  // (AOF, fsync always), as a production dedup Redis should, and a SIGKILL
  // loses nothing it acknowledged. DEBUG SLEEP needs enabling on Redis 7.
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''];
  args.push('--appendonly', 'yes', '--appendfsync', 'always', '--enable-debug-command', 'yes');
  const child = spawn(binary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return { child, output: () => output };
}

/** Starts redis-server; returns { port, url, kill(), restart(), debugSleep(seconds), stop() }. */
export async function startRedis() {
  let port = 0;
  let current;
  const dir = mkdtempSync(join(tmpdir(), 'payhook-chaos-redis-'));
  for (let attempt = 0; attempt < 5 && current === undefined; attempt++) {
    port = await freePort();
    const started = launch(port, dir);
    if (await waitForPong(port, started.child, Date.now() + 10_000)) current = started;
    else {
      started.child.kill('SIGKILL');
      if (!/Address already in use/.test(started.output())) {
        throw new Error(`redis-server did not answer on port ${port}:\n${started.output()}`);
      }
    }
  }
  if (current === undefined) throw new Error('redis-server: no free port after 5 attempts');

  const exited = (child) =>
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise((resolve) => child.once('exit', resolve));

  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    /** SIGKILL: clients see their connections drop mid-command. */
    async kill() {
      current.child.kill('SIGKILL');
      await exited(current.child);
    },
    /** Starts redis-server again on the same port, from what it persisted. */
    async restart() {
      for (let attempt = 0; attempt < 20; attempt++) {
        const started = launch(port, dir);
        if (await waitForPong(port, started.child, Date.now() + 5_000)) {
          current = started;
          return;
        }
        started.child.kill('SIGKILL');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`redis-server could not be restarted on port ${port}`);
    },
    /** Blocks the server for `seconds` (resolves when the sleep is over). */
    debugSleep(seconds) {
      return redisCommand(port, `DEBUG SLEEP ${seconds}`, seconds * 1000 + 5_000).then((reply) => {
        if (reply !== '+OK') throw new Error(`DEBUG SLEEP answered ${reply}`);
      });
    },
    async stop() {
      current.child.kill('SIGTERM');
      await exited(current.child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
