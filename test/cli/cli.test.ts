import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/signature.js';
import { createTestWebhook, signWebhook } from '../../src/testing/index.js';
import { run } from './run.js';

describe('payhook (no command, help, version)', () => {
  it('prints the usage and exits 2 without a command, 0 with --help', async () => {
    const bare = await run([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toContain('Usage: payhook <command>');
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    for (const command of ['demo', 'send', 'keygen', 'verify']) expect(help.stdout).toContain(`  ${command} `);
    expect(help.stdout).toContain('Exit codes');
  });

  it('prints the version of the package', async () => {
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    const result = await run(['--version']);
    expect(result).toMatchObject({ code: 0 });
    expect(result.stdout.trim()).toBe(pkg.version);
  });

  it('refuses an unknown command with exit 2', async () => {
    const result = await run(['frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown command "frobnicate"');
  });

  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'])(
    'refuses %s (a name on Object.prototype) as an unknown command with exit 2 and the usage',
    async (name) => {
      const result = await run([name]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`unknown command ${JSON.stringify(name)}`);
      expect(result.stderr).toContain('Usage: payhook <command>');
      expect(result.stderr).not.toContain('TypeError');
    },
  );

  it('help with an unknown command (a prototype name too) refuses it with exit 2 and the usage', async () => {
    for (const name of ['constructor', 'bogus']) {
      const result = await run(['help', name]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`unknown command ${JSON.stringify(name)}`);
      expect(result.stderr).toContain('Usage: payhook <command>');
    }
    // Asking help for help prints the general usage.
    for (const name of ['help', '--help', '-h']) {
      const result = await run(['help', name]);
      expect(result.code, name).toBe(0);
      expect(result.stdout, name).toContain('Usage: payhook <command>');
    }
  });

  it.each(['demo', 'send', 'keygen', 'verify'])(
    '%s --help prints its usage, options and exit codes, exit 0',
    async (command) => {
      for (const flag of ['--help', '-h']) {
        const result = await run([command, flag]);
        expect(result.code).toBe(0);
        expect(result.stdout).toContain(`Usage: payhook ${command}`);
        expect(result.stdout).toContain('Exit codes');
      }
      expect((await run(['help', command])).stdout).toContain(`Usage: payhook ${command}`);
    },
  );

  it.each(['demo', 'send', 'keygen', 'verify'])('%s refuses an unknown option with exit 2', async (command) => {
    const result = await run([command, '--no-such-option']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`payhook ${command}:`);
    expect(result.stderr).toContain(`payhook ${command} --help`);
  });
});

describe('payhook demo', () => {
  it('plays every scenario against a local receiver and exits 0, in a few seconds', async () => {
    const started = Date.now();
    const result = await run(['demo']);
    const elapsed = Date.now() - started;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/listens on http:\/\/127\.0\.0\.1:\d+\/webhooks\/payments/);
    for (const scenario of [
      'successful payment',
      'failed payment',
      'twice at once',
      'tampered body',
      'stale timestamp',
      'handler failure',
    ]) {
      expect(result.stdout).toContain(scenario);
    }
    expect(result.stdout).toContain('409 {"ok":false,"code":"DELIVERY_IN_PROGRESS"');
    expect(result.stdout).toContain('401 {"ok":false,"code":"SIGNATURE_MISMATCH"');
    expect(result.stdout).toContain('401 {"ok":false,"code":"TIMESTAMP_OUT_OF_WINDOW"');
    expect(result.stdout).toContain('retry 6 after 1 min');
    expect(result.stdout).not.toContain('UNEXPECTED');
    expect(result.stdout).toContain('All 6 scenarios answered as expected');
    expect(elapsed).toBeLessThan(10_000);
  });

  it('takes --speed and refuses a bad one with exit 2', async () => {
    expect((await run(['demo', '--speed', '0'])).code).toBe(2);
    expect((await run(['demo', '--speed', 'fast'])).code).toBe(2);
  });
});

describe('payhook keygen', () => {
  it('writes a working key pair, private file readable by the owner only', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'payhook-keygen-'));
    const result = await run(['keygen', '--out-dir', dir, '--name', 'merchant']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('merchant.public.pem');
    const publicKey = await readFile(join(dir, 'merchant.public.pem'), 'utf8');
    const privateKey = await readFile(join(dir, 'merchant.private.pem'), 'utf8');
    expect((await stat(join(dir, 'merchant.private.pem'))).mode & 0o077).toBe(0);
    const signed = await signWebhook(createTestWebhook(), { url: 'https://shop.example.kg/hook', privateKey });
    expect(await verifySignature(signed.canonical, signed.headers['signature']!, publicKey)).toBe(true);
  });

  it('quotes a path with spaces in the send command it prints, so it can be pasted', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'payhook-keygen-')), "a b's");
    const result = await run(['keygen', '--out-dir', dir, '--name', 'x']);
    expect(result.code).toBe(0);
    const printed = /--key (.+)\)$/m.exec(result.stdout)?.[1] ?? '';
    const { stdout } = spawnSync('sh', ['-c', `printf %s ${printed}`], { encoding: 'utf8' });
    expect(stdout).toBe(join(dir, 'x.private.pem'));
  });

  it('creates --out-dir (and its parents) when it does not exist', async () => {
    const root = await mkdtemp(join(tmpdir(), 'payhook-keygen-'));
    const dir = join(root, 'test', 'keys');
    const result = await run(['keygen', '--out-dir', dir]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(await readFile(join(dir, 'payhook-test.public.pem'), 'utf8')).toContain('BEGIN PUBLIC KEY');
    expect(await readFile(join(dir, 'payhook-test.private.pem'), 'utf8')).toContain('BEGIN PRIVATE KEY');
  });

  it('says an --out-dir that is a file is not a folder, with or without --force (exit 1)', async () => {
    const root = await mkdtemp(join(tmpdir(), 'payhook-keygen-'));
    const file = join(root, 'afile');
    await writeFile(file, 'x');
    for (const args of [
      ['keygen', '--out-dir', file],
      ['keygen', '--out-dir', file, '--force'],
    ]) {
      const result = await run(args);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('is a file, not a folder');
      expect(result.stderr).not.toContain('--force');
    }
  });

  it('--force leaves an overwritten private key readable by the owner only', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'payhook-keygen-'));
    const privatePath = join(dir, 'payhook-test.private.pem');
    await writeFile(privatePath, 'old key', { mode: 0o644 });
    await chmod(privatePath, 0o644);
    expect((await run(['keygen', '--out-dir', dir, '--force'])).code).toBe(0);
    expect(await readFile(privatePath, 'utf8')).toContain('BEGIN PRIVATE KEY');
    expect((await stat(privatePath)).mode & 0o077).toBe(0);
  });

  it('refuses to overwrite without --force (exit 1), overwrites with it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'payhook-keygen-'));
    await writeFile(join(dir, 'payhook-test.public.pem'), 'keep me');
    const refused = await run(['keygen', '--out-dir', dir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('--force');
    expect(await readFile(join(dir, 'payhook-test.public.pem'), 'utf8')).toBe('keep me');
    await expect(stat(join(dir, 'payhook-test.private.pem'))).rejects.toMatchObject({ code: 'ENOENT' });
    const forced = await run(['keygen', '--out-dir', dir, '--force']);
    expect(forced.code).toBe(0);
    expect(await readFile(join(dir, 'payhook-test.public.pem'), 'utf8')).toContain('BEGIN PUBLIC KEY');
  });

  it('prints the pair with --stdout, and refuses weak or odd sizes with exit 2', async () => {
    const printed = await run(['keygen', '--stdout']);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toContain('-----BEGIN PUBLIC KEY-----');
    expect(printed.stdout).toContain('-----BEGIN PRIVATE KEY-----');
    expect((await run(['keygen', '--stdout', '--bits', '1024'])).code).toBe(2);
    expect((await run(['keygen', '--stdout', '--bits', '2049'])).code).toBe(2);
    expect((await run(['keygen', '--name', '../escape'])).code).toBe(2);
  });

  it('fails with exit 1 when the directory cannot be created', async () => {
    // A folder inside a regular file cannot be made, even by root (who may write anywhere else).
    const root = await mkdtemp(join(tmpdir(), 'payhook-keygen-'));
    await writeFile(join(root, 'a-file'), '');
    const result = await run(['keygen', '--out-dir', join(root, 'a-file', 'keys')]);
    expect(result.code).toBe(1);
    // The file in the way is named, not the folder asked for, and no "Error:" is printed.
    expect(result.stderr).toBe(
      `payhook keygen: cannot write the keys: ${join(root, 'a-file')} is a file, not a folder\n`,
    );
  });

  it('--force writes nothing when either target cannot be written (a folder where a key file goes)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'payhook-keygen-'));
    await writeFile(join(dir, 'payhook-test.private.pem'), 'old private key');
    await mkdir(join(dir, 'payhook-test.public.pem'));
    const result = await run(['keygen', '--out-dir', dir, '--force']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${join(dir, 'payhook-test.public.pem')} is a folder`);
    expect(await readFile(join(dir, 'payhook-test.private.pem'), 'utf8')).toBe('old private key');
  });

  it('refuses --stdout with a flag that names files (exit 2)', async () => {
    for (const flag of [['--out-dir', '.'], ['--name', 'x'], ['--force']]) {
      const result = await run(['keygen', '--stdout', ...flag]);
      expect(result.code, flag[0]).toBe(2);
      expect(result.stderr, flag[0]).toContain(`--stdout prints the keys and writes no file: drop ${flag[0]}`);
      expect(result.stdout).toBe('');
    }
  });

  it.runIf(process.platform === 'linux')(
    'fails with exit 1, without hanging, where the file system refuses a folder under one that exists',
    async () => {
      // /proc refuses mkdir with ENOENT, on which Node's recursive mkdir retries for ever.
      for (const dir of ['/proc/payhook-keys', '/proc/payhook-a/keys']) {
        const result = await run(['keygen', '--out-dir', dir]);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain('cannot write the keys');
      }
    },
  );
});
