// Helpers for the example tests: start an example as a user would (its own
// runtime, the package installed by name), sign deliveries with the
// conformance-2048 test key, and read what the example logged.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestWebhook, signWebhook, type SignedWebhook } from 'payhook/testing';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const examplesDir = join(root, 'examples');

interface KeyFixture {
  publicKeyPem: string;
  privateKeyPem?: string;
}
const keys = JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'keys.json'), 'utf8')) as Record<
  string,
  KeyFixture
>;
const testKey = keys['conformance-2048'];
if (!testKey?.privateKeyPem) throw new Error('keys.json has no conformance-2048 private key');

/** The test public key, handed to each example as PAYHOOK_PUBLIC_KEY_PEM. */
export const TEST_PUBLIC_KEY_PEM = testKey.publicKeyPem;
const TEST_PRIVATE_KEY_PEM = testKey.privateKeyPem;

/** What the examples log once per handled payment. */
export const PAYMENT_LINE = /^payment \S+ (SUCCEEDED|FAILED|PROCESSING|UNKNOWN) \S+$/;

export interface RunningExample {
  url: string;
  lines: string[];
  output: () => string;
  stop: () => Promise<void>;
}

/**
 * Starts an example and resolves once it logs `listening on <url>`. Rejects
 * (with everything it printed) if it exits or stays silent for 30 s.
 */
export function startExample(
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<RunningExample> {
  const child: ChildProcess = spawn(command, args, {
    cwd: options.cwd ?? examplesDir,
    env: {
      ...process.env,
      NO_COLOR: '1',
      HOST: '127.0.0.1',
      PORT: '0',
      PAYHOOK_PUBLIC_KEY_PEM: TEST_PUBLIC_KEY_PEM,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let output = '';
  let pending = '';
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  return new Promise((resolveStart, rejectStart) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rejectStart(new Error(`${command} ${args.join(' ')} did not start within 30 s:\n${output}`));
    }, 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      pending += chunk.toString();
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line.trimEnd());
        const match = /listening on (https?:\/\/[^\s/]+)/.exec(line);
        if (match?.[1]) {
          clearTimeout(timer);
          resolveStart({
            url: match[1],
            lines,
            output: () => output,
            stop: async () => {
              if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
              await exited;
            },
          });
        }
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', (error) => {
      clearTimeout(timer);
      rejectStart(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      rejectStart(new Error(`${command} ${args.join(' ')} exited (${code ?? signal}) before listening:\n${output}`));
    });
  });
}

/** A delivery signed with the conformance-2048 test key for `url`. */
export function signedDelivery(
  url: string,
  overrides: Parameters<typeof createTestWebhook>[0] = {},
): Promise<SignedWebhook> {
  return signWebhook(createTestWebhook(overrides), { privateKey: TEST_PRIVATE_KEY_PEM, url });
}

/** The same delivery with its amount changed after signing. */
export function tampered(signed: SignedWebhook): SignedWebhook {
  const body = JSON.parse(signed.body) as { amount: number };
  return { ...signed, body: JSON.stringify({ ...body, amount: body.amount + 1 }) };
}

/**
 * The public URL the server examples are started with (PAYHOOK_WEBHOOK_URL)
 * and deliveries are signed for; they reach the example on 127.0.0.1, as
 * through a proxy.
 */
export const PUBLIC_WEBHOOK_URL = 'https://shop.example.kg/webhooks/payments';

/**
 * Sends a delivery over real HTTP (to `to`, by default the URL it was signed
 * for); resolves with status and parsed answer.
 */
export async function send(signed: SignedWebhook, to: string = signed.url): Promise<{ status: number; body: unknown }> {
  const { host: _host, ...headers } = signed.headers;
  const response = await fetch(to, { method: signed.method, headers, body: signed.body });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: response.status, body };
}

/** Polls until `predicate` holds or 5 s pass (log lines arrive over a pipe). */
export async function eventually(predicate: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!predicate() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}
