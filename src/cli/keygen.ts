import { chmod, mkdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { generateTestKeyPair } from '../testing/test-keys.js';
import { EXIT, integerFlag, parse, UsageError, type Io } from './io.js';

export const KEYGEN_HELP = `Usage: payhook keygen [options]

Writes a fresh RSA test key pair for your tests: <name>.public.pem (SPKI;
give it to your receiver as publicKeys) and <name>.private.pem (PKCS#8;
sign test deliveries with it: payhook send --key, or signWebhook). It is a
test key: the payment service signs with its own key, which you never have.

Options:
  --out-dir <dir>   where to write the files, created when missing (default: the current directory)
  --name <name>     file name prefix (default: payhook-test)
  --bits <n>        modulus length (default: 2048)
  --force           overwrite existing files
  --stdout          print both keys instead of writing files (not with --out-dir, --name, --force)
  -h, --help        show this help

Exit codes: 0 written; 1 a file exists (without --force) or cannot be
written; 2 usage error.`;

export async function keygenCommand(args: readonly string[], io: Io): Promise<number> {
  const { values } = parse(args, {
    'out-dir': { type: 'string' },
    name: { type: 'string' },
    bits: { type: 'string' },
    force: { type: 'boolean' },
    stdout: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    io.out(KEYGEN_HELP);
    return EXIT.OK;
  }
  if (values.stdout) {
    const conflicting = (['out-dir', 'name', 'force'] as const).find((flag) => values[flag] !== undefined);
    if (conflicting !== undefined)
      throw new UsageError(`--stdout prints the keys and writes no file: drop --${conflicting}`);
  }
  const bits = integerFlag(values.bits, 'bits', 2048, 2048);
  if (bits % 8 !== 0 || bits > 8192) throw new UsageError('--bits must be a multiple of 8 from 2048 to 8192');
  const name = values.name ?? 'payhook-test';
  if (!/^[\w.-]+$/.test(name)) throw new UsageError('--name may hold letters, digits, ".", "-" and "_" only');
  const pair = await generateTestKeyPair({ modulusLength: bits });
  if (values.stdout) {
    io.out(pair.publicKey + pair.privateKey);
    return EXIT.OK;
  }
  const dir = values['out-dir'] ?? '.';
  const publicPath = join(dir, `${name}.public.pem`);
  const privatePath = join(dir, `${name}.private.pem`);
  const flag = values.force ? 'w' : 'wx';
  // Both targets checked before either is written: a new private key beside an old public one would not match.
  for (const path of [publicPath, privatePath]) {
    const found = await stat(path).catch(() => undefined);
    if (found !== undefined && !found.isFile()) {
      io.err(`payhook keygen: cannot write the keys: ${path} is ${found.isDirectory() ? 'a folder' : 'not a file'}`);
      return EXIT.FAILED;
    }
    if (found !== undefined && !values.force) {
      io.err(`payhook keygen: ${path} exists; pass --force to overwrite`);
      return EXIT.FAILED;
    }
  }
  try {
    await makeFolder(dir).catch(async (error: NodeJS.ErrnoException) => {
      // Not a key file in the way: --force cannot help, so this is not the EEXIST below.
      const file = error.code === 'EEXIST' || error.code === 'ENOTDIR' ? await fileInTheWay(dir) : undefined;
      throw file === undefined ? error : new Error(`${file} is a file, not a folder`);
    });
    // mode applies only to a new file: one overwritten with --force keeps its own, so narrow it before writing.
    if (values.force) await chmod(privatePath, 0o600).catch(() => {});
    await writeFile(privatePath, pair.privateKey, { flag, mode: 0o600 });
    await writeFile(publicPath, pair.publicKey, { flag });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    io.err(
      code === 'EEXIST'
        ? `payhook keygen: ${(error as NodeJS.ErrnoException).path ?? 'a key file'} exists; pass --force to overwrite`
        : `payhook keygen: cannot write the keys: ${error instanceof Error ? error.message : String(error)}`,
    );
    return EXIT.FAILED;
  }
  io.out(`wrote ${publicPath} (give it to your receiver: publicKeys)`);
  // Quoted for a shell when it needs to be, so the command can be pasted as printed.
  const pasted = /^[\w./:@%+=,-]+$/.test(privatePath) ? privatePath : `'${privatePath.replaceAll("'", "'\\''")}'`;
  io.out(`wrote ${privatePath} (sign test deliveries: payhook send <url> --key ${pasted})`);
  return EXIT.OK;
}

/** The file that stands where `dir` or one of its parents should be a folder, if there is one. */
async function fileInTheWay(dir: string): Promise<string | undefined> {
  for (let path = dir; ; path = dirname(path)) {
    const found = await stat(path).catch(() => undefined);
    if (found !== undefined) return found.isDirectory() ? undefined : path;
    if (dirname(path) === path) return undefined;
  }
}

/**
 * `dir` and its missing parents, one level at a time. Node's own
 * `mkdir(dir, { recursive: true })` loops for ever where the file system
 * refuses a folder with ENOENT under a parent that exists (/proc/x on Linux);
 * here each level is tried at most twice. An existing file fails with EEXIST.
 */
async function makeFolder(dir: string): Promise<void> {
  try {
    await mkdir(dir);
    return;
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === 'EEXIST' && (await stat(dir)).isDirectory()) return;
    const parent = dirname(dir);
    if (code !== 'ENOENT' || parent === dir) throw error;
    await makeFolder(parent);
  }
  await mkdir(dir).catch(async (error: NodeJS.ErrnoException) => {
    // Made meanwhile by someone else: as good.
    if (error.code !== 'EEXIST' || !(await stat(dir)).isDirectory()) throw error;
  });
}
