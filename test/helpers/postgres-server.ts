// Starts a real, throw-away PostgreSQL cluster (initdb + pg_ctl) on a free
// loopback port, with its data directory and socket in a temp folder. The
// server refuses to run as root, so under root the commands run as the
// `postgres` OS user through runuser. Missing binaries fail the run loudly:
// these tests never skip.
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './redis-server.js';

const run = promisify(execFile);

export interface PostgresServer {
  port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication, loopback only). */
  url: string;
  /** Stops the server, keeping its data (for restart tests). */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>;
  /** Stops the server and removes its data directory. */
  destroy(): Promise<void>;
}

export interface PostgresServerOptions {
  /**
   * Flush to disk on commit as a production server does. Off by default:
   * the tests kill clients and stop the server cleanly, never the machine,
   * so fsync only costs time there. The benchmark turns it on.
   */
  durable?: boolean;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => existsSync(join(root, name, 'bin', 'pg_ctl')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const dir = process.env.PG_BIN ?? (versions[0] === undefined ? undefined : join(root, versions[0], 'bin'));
  if (dir === undefined || !existsSync(join(dir, 'initdb'))) {
    throw new Error(
      'PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb, and PG_BIN is not set). ' +
        'Install it (apt-get install postgresql, or run scripts/setup-test-env.sh) — the PostgreSQL tests never skip.',
    );
  }
  return dir;
}

/** Runs a server binary as an unprivileged user: `postgres` when we are root. */
function asServerUser(binary: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  const root = userInfo().uid === 0;
  return root ? run('runuser', ['-u', 'postgres', '--', binary, ...args]) : run(binary, args);
}

export async function startPostgresServer(options: PostgresServerOptions = {}): Promise<PostgresServer> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'payhook-pg-'));
  if (userInfo().uid === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']).catch(() => {
      throw new Error('Running as root, but there is no `postgres` OS user to run the server as.');
    });
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  await asServerUser(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  let port = await freePort();
  const settings = () =>
    [
      `-p ${port}`,
      `-k ${dir}`,
      '-c listen_addresses=127.0.0.1',
      `-c fsync=${options.durable === true ? 'on' : 'off'}`,
      '-c max_connections=200',
    ].join(' ');
  const pgCtl = (args: string[]) => asServerUser(join(bin, 'pg_ctl'), ['-D', data, ...args]);
  const start = async () => {
    try {
      await pgCtl(['-l', log, '-w', '-t', '30', '-o', settings(), 'start']);
    } catch (error) {
      const output = existsSync(log) ? readFileSync(log, 'utf8') : '';
      throw new Error(`PostgreSQL did not start on port ${port}: ${String(error)}\n${output}`, { cause: error });
    }
  };
  try {
    await start();
  } catch (error) {
    // The port may have been taken between freePort() and the server's bind: one more try.
    if (!/Address already in use/.test(String(error))) throw error;
    port = await freePort();
    await start();
  }
  let running = true;
  const stop = async () => {
    if (!running) return;
    await pgCtl(['-w', '-m', 'fast', 'stop']);
    running = false;
  };
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop,
    async start() {
      if (running) return;
      await start();
      running = true;
    },
    async destroy() {
      await stop().catch(() => pgCtl(['-m', 'immediate', 'stop']).catch(() => {}));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
