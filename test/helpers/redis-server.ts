// Starts a real, throw-away redis-server on a free loopback port. A missing
// binary fails the run loudly: these tests never skip.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';

export interface RedisServer {
  port: number;
  url: string;
  process: ChildProcess;
  /** Stops the server (SIGKILL is not needed: nothing is persisted). */
  stop(): Promise<void>;
}

const CANDIDATES = ['/usr/bin/redis-server', '/usr/local/bin/redis-server', '/usr/sbin/redis-server'];

function binary(): string {
  const found = process.env.REDIS_SERVER ?? CANDIDATES.find((path) => existsSync(path));
  if (found === undefined) {
    throw new Error(
      'redis-server is not installed (looked in ' +
        CANDIDATES.join(', ') +
        '). Install it (apt-get install redis-server, or run .ci/run) — the Redis tests never skip.',
    );
  }
  return found;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    let reply = '';
    socket.setTimeout(500, () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) {
        socket.destroy();
        resolve(reply.startsWith('+PONG'));
      }
    });
  });
}

export async function startRedisServer(): Promise<RedisServer> {
  const path = binary();
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const child = spawn(path, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      output += chunk;
    });
    let exited = false;
    child.on('exit', () => {
      exited = true;
    });
    const spawnError = new Promise<Error>((resolve) => child.on('error', resolve));
    const deadline = Date.now() + 10_000;
    while (!exited && Date.now() < deadline) {
      const failed = await Promise.race([spawnError, new Promise((r) => setTimeout(r, 50, null))]);
      if (failed instanceof Error) throw new Error(`redis-server could not start: ${failed.message}`);
      if (await ping(port)) {
        return {
          port,
          url: `redis://127.0.0.1:${port}`,
          process: child,
          stop: () =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || exited) return resolve();
              child.once('exit', () => resolve());
              child.kill('SIGTERM');
            }),
        };
      }
    }
    if (!exited) child.kill('SIGKILL');
    if (!/Address already in use/.test(output)) {
      throw new Error(`redis-server did not answer on port ${port}:\n${output}`);
    }
  }
  throw new Error('redis-server: no free port after 5 attempts');
}
