// Starts a real, throw-away PostgreSQL cluster (initdb + pg_ctl) on a free
// loopback port, with its data directory and socket in a temp folder. The
// server refuses to run as root, so under root the commands run as the
// `postgres` OS user through runuser. Missing binaries fail loudly: the
// tests and the chaos run never skip. Used by both (test/helpers types it).
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A port free on 127.0.0.1 at the time of asking. */
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

function binDir() {
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
function asServerUser(binary, args) {
  const root = userInfo().uid === 0;
  return root ? run('runuser', ['-u', 'postgres', '--', binary, ...args]) : run(binary, args);
}

/**
 * Starts a cluster. `options.durable` flushes to disk on commit as a
 * production server does (off by default: the tests kill clients and stop
 * the server cleanly, never the machine; the benchmark turns it on).
 * @param {{ durable?: boolean }} [options]
 * @returns {Promise<{ port: number, url: string, stop(): Promise<void>, start(): Promise<void>, destroy(): Promise<void> }>}
 */
export async function startPostgresServer(options = {}) {
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
  const pgCtl = (args) => asServerUser(join(bin, 'pg_ctl'), ['-D', data, ...args]);
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
  // A run cut short (a watchdog's process.exit, an uncaught error) must not leave the server behind.
  const onExit = () => {
    if (!running) return;
    const args = [join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop'];
    try {
      if (userInfo().uid === 0) execFileSync('runuser', ['-u', 'postgres', '--', ...args], { stdio: 'ignore' });
      else execFileSync(args[0], args.slice(1), { stdio: 'ignore' });
    } catch {
      // Already gone.
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
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
      running = false;
      process.removeListener('exit', onExit);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
