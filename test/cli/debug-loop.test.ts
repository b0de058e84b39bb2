import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { captureDelivery, type CapturedDelivery } from '../../src/capture.js';
import type { WebhookHandlerOptions } from '../../src/handler/options.js';
import { createNodeWebhookHandler } from '../../src/node/index.js';
import { BETA_PUBLIC_KEY, PRODUCTION_PUBLIC_KEY } from '../../src/service-keys.js';
import { createTestWebhook, signWebhook, TEST_KEY_PAIR } from '../../src/testing/index.js';
import { CLI, run } from './run.js';

// The debug loop through real processes: a capture that recorded the
// receiver's webhookUrl is replayed with `payhook send --request` to a real
// payhook receiver, refusals are explained from the answer's code, and the
// CLI ends quietly when its reader goes away.
const WEBHOOK_URL = 'https://shop.example.kg/webhooks/payments';
let dir: string;
const servers: Server[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'payhook-debug-loop-'));
});

afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/payments`;
}

/** A real payhook receiver pinned to WEBHOOK_URL; counts what reached onPayment. */
async function receiver(options: Partial<WebhookHandlerOptions> = {}): Promise<{ url: string; payments: string[] }> {
  const payments: string[] = [];
  const handler = createNodeWebhookHandler({
    publicKeys: TEST_KEY_PAIR.publicKey,
    webhookUrl: WEBHOOK_URL,
    logger: false,
    onPayment: (webhook) => {
      payments.push(webhook.id);
    },
    ...options,
  });
  return { url: await listen(createServer((req, res) => void handler(req, res))), payments };
}

/** A capture as a receiver with webhookUrl makes it: signed for WEBHOOK_URL, arrived on an internal host. */
async function captureFile(name: string, timestamp = Date.now()): Promise<{ file: string; capture: CapturedDelivery }> {
  const signed = await signWebhook(createTestWebhook({ amount: 250 }), { url: WEBHOOK_URL, timestamp });
  const request = new Request('http://app.internal:8080/webhooks/payments', {
    method: 'POST',
    headers: { ...signed.headers, host: 'app.internal:8080', 'x-request-id': 'abc' },
    body: signed.body,
  });
  const capture = await captureDelivery(request, { webhookUrl: WEBHOOK_URL });
  const file = join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(capture, null, 2));
  return { file, capture };
}

describe('payhook send --request: replaying a capture', () => {
  it('delivers it to a running receiver: 200 the first time, then a duplicate', async () => {
    const { url, payments } = await receiver();
    const { file } = await captureFile('fresh');
    const first = await run(['send', '--request', file, '--to', url]);
    expect(first.stdout).toContain('as captured');
    expect(first.stdout).toContain('attempt 1: 200 OK {"ok":true}');
    expect(first.code).toBe(0);
    const again = await run(['send', '--request', file, '--to', url]);
    expect(again.stdout).toContain('attempt 1: 200 OK {"ok":true,"duplicate":true}');
    expect(again.code).toBe(0);
    expect(payments).toHaveLength(1);
  });

  // The signature covers the query; --to names where to send it, usually without one.
  it('sends the query the captured request carried when --to has none', async () => {
    const withQuery = `${WEBHOOK_URL}?shop=17&lang=ky`;
    const { url, payments } = await receiver({ webhookUrl: withQuery });
    const signed = await signWebhook(createTestWebhook(), { url: withQuery });
    const request = new Request('http://app.internal:8080/webhooks/payments?shop=17&lang=ky', {
      method: 'POST',
      headers: { ...signed.headers, host: 'app.internal:8080' },
      body: signed.body,
    });
    const file = join(dir, 'query.json');
    await writeFile(file, JSON.stringify(await captureDelivery(request, { webhookUrl: withQuery })));
    const result = await run(['send', '--request', file, '--to', url]);
    expect(result.stdout).toContain('attempt 1: 200 OK {"ok":true}');
    expect(result.code).toBe(0);
    expect(payments).toHaveLength(1);
  });

  it('sends the captured method, headers (Host included) and body byte for byte', async () => {
    const received: Array<{ method: string; headers: IncomingHttpHeaders; body: Buffer }> = [];
    const url = await listen(
      createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          received.push({ method: req.method ?? '', headers: req.headers, body: Buffer.concat(chunks) });
          res.writeHead(200).end('{"ok":true}');
        });
      }),
    );
    const { file, capture } = await captureFile('exact');
    expect((await run(['send', '--request', file, url])).code).toBe(0);
    const [delivery] = received;
    expect(delivery!.method).toBe('POST');
    expect(delivery!.body.toString('utf8')).toBe(capture.body);
    const { connection: _, ...headers } = delivery!.headers;
    expect(headers).toEqual({ ...capture.headers, 'content-length': String(Buffer.byteLength(capture.body)) });
    expect(headers['host']).toBe('app.internal:8080');
  });

  it('an old capture is refused as captured, with --resign named; --resign delivers it', async () => {
    const { url, payments } = await receiver();
    const { file } = await captureFile('old', Date.now() - 3_600_000);
    const old = await run(['send', '--request', file, '--to', url]);
    expect(old.code).toBe(1);
    expect(old.stdout).toContain('"code":"TIMESTAMP_OUT_OF_WINDOW"');
    expect(old.stdout).toContain('likely cause (TIMESTAMP_OUT_OF_WINDOW): the capture is older');
    expect(old.stdout).toContain('--resign');
    const resigned = await run(['send', '--request', file, '--to', url, '--resign']);
    expect(resigned.stdout).toContain(`signed for ${WEBHOOK_URL}`);
    expect(resigned.stdout).toContain('attempt 1: 200 OK {"ok":true}');
    expect(resigned.code).toBe(0);
    expect(payments).toHaveLength(1);
  });

  // docs/troubleshooting.md's loop: verify names a webhookUrl to fix; the fixed receiver then refuses a replay signed
  // again for the URL the capture recorded (the old one), so the CLI names that first and --webhook-url signs for
  // the new one.
  it('a capture signed again for the webhookUrl it recorded names that URL first when the receiver now has another', async () => {
    const fixedUrl = 'https://shop.example.kg/api/webhooks/payments';
    const { url, payments } = await receiver({ webhookUrl: fixedUrl });
    const { file } = await captureFile('moved');
    const resigned = await run(['send', '--request', file, '--to', url, '--resign']);
    expect(resigned.stdout).toContain(`signed for ${WEBHOOK_URL} (the webhookUrl the capture recorded`);
    expect(resigned.stdout).toMatch(
      /likely causes \(SIGNATURE_MISMATCH\), most likely first:\n {4}- the receiver's webhookUrl is not/,
    );
    expect(resigned.stdout).toContain('the one the capture recorded: changed since?');
    expect(resigned.code).toBe(1);
    const fixed = await run(['send', '--request', file, '--to', url, '--resign', '--webhook-url', fixedUrl]);
    expect(fixed.stdout).toContain(`signed for ${fixedUrl}\n`);
    expect(fixed.stdout).toContain('attempt 1: 200 OK {"ok":true}');
    expect(fixed.code).toBe(0);
    expect(payments).toHaveLength(1);
  });

  it('a raw HTTP capture, which records no webhookUrl, is signed again for its own URL without saying it recorded one', async () => {
    const { url, payments } = await receiver();
    const file = join(dir, 'raw.http');
    const signed = await signWebhook(createTestWebhook(), { url: WEBHOOK_URL });
    const head = Object.entries(signed.headers).map(([name, value]) => `${name}: ${value}`);
    await writeFile(file, ['POST /webhooks/payments HTTP/1.1', ...head, '', signed.body].join('\n'));
    const result = await run(['send', '--request', file, '--to', url, '--resign']);
    expect(result.stdout).toContain(`signed for ${WEBHOOK_URL}\n`);
    expect(result.stdout).not.toContain('the capture recorded');
    expect(result.code).toBe(0);
    expect(payments).toHaveLength(1);
  });

  // A server reads header bytes as Latin-1: verify judges a raw capture as the receiver did, and send writes it back.
  it("reads a raw capture's header bytes as Latin-1, as the receiver does", async () => {
    const { url, payments } = await receiver();
    const key = join(dir, 'latin1-header.pem');
    await writeFile(key, TEST_KEY_PAIR.publicKey);
    const signed = await signWebhook(createTestWebhook(), { url: WEBHOOK_URL, headers: { 'x-api-name': 'caf\u00e9' } });
    const head = Object.entries(signed.headers).map(([name, value]) => `${name}: ${value}`);
    const file = join(dir, 'latin1-header.http');
    const text = ['POST /webhooks/payments HTTP/1.1', ...head, '', signed.body].join('\r\n');
    await writeFile(file, Buffer.from(text, 'latin1')); // "é" as the byte 0xE9, as it went over the wire
    expect((await run(['verify', '--request', file, '--key', key])).code).toBe(0);
    expect((await run(['send', '--request', file, '--to', url])).code).toBe(0);
    expect(payments).toHaveLength(1);
    // The same value as UTF-8 bytes is another value to every server ("cafÃ©"): refused here as there.
    await writeFile(file, Buffer.from(text, 'utf8'));
    expect((await run(['verify', '--request', file, '--key', key])).code).toBe(1);
  });

  // The URL signed came from the capture's own Host and path, not from the user: a receiver pinned to another
  // URL is the likelier cause than the key.
  it('a capture without a recorded webhookUrl, signed again for its own URL, names the webhookUrl before the key', async () => {
    const { url } = await receiver({ webhookUrl: 'https://shop.example.kg/api/webhooks/payments' });
    const file = join(dir, 'raw-moved.http');
    const signed = await signWebhook(createTestWebhook(), { url: WEBHOOK_URL });
    const head = Object.entries(signed.headers).map(([name, value]) => `${name}: ${value}`);
    await writeFile(file, ['POST /webhooks/payments HTTP/1.1', ...head, '', signed.body].join('\n'));
    const result = await run(['send', '--request', file, '--to', url, '--resign']);
    expect(result.stdout).toMatch(
      /likely causes \(SIGNATURE_MISMATCH\), most likely first:\n {4}- the receiver's webhookUrl is not https:\/\/shop\.example\.kg\/webhooks\/payments/,
    );
    expect(result.code).toBe(1);
  });

  // A capture made from fetch (payhook send) asks for gzip; a compressing proxy would answer in bytes not shown.
  it('replays a capture without its accept-encoding, which is not signed', async () => {
    const { capture } = await captureFile('gzip');
    const file = join(dir, 'gzip-edited.json');
    await writeFile(file, JSON.stringify({ ...capture, headers: { ...capture.headers, 'accept-encoding': 'gzip' } }));
    const seen: IncomingHttpHeaders[] = [];
    const url = await listen(
      createServer((req, res) => {
        seen.push(req.headers);
        req.resume();
        res.end('{"ok":true}');
      }),
    );
    const result = await run(['send', '--request', file, '--to', url]);
    expect(result.code).toBe(0);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.['accept-encoding']).toBeUndefined();
    expect(seen[0]?.['x-api-timestamp']).toBe(capture.headers['x-api-timestamp']);
  });

  it.each([['a\nb'], ['café ✓'], ['\ufffd']])(
    'a captured header Node cannot send (%j) is a usage error naming it, and nothing is sent',
    async (value) => {
      const { capture } = await captureFile('bad-header');
      const file = join(dir, 'bad-header-edited.json');
      await writeFile(file, JSON.stringify({ ...capture, headers: { ...capture.headers, 'x-note': value } }));
      let requests = 0;
      const url = await listen(
        createServer((req, res) => {
          requests++;
          req.resume();
          res.end();
        }),
      );
      const result = await run(['send', '--request', file, '--to', url, '--retry']);
      expect(result.stderr).toContain('the capture\'s header "x-note" holds a character HTTP cannot send');
      expect(result.stdout).not.toContain('no answer');
      expect(result.code).toBe(2);
      expect(requests).toBe(0);
    },
  );

  it('reports an answer cut off mid-body, and ends', async () => {
    const url = await listen(
      createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-length': '100' });
          res.write('partial');
          setTimeout(() => res.socket?.destroy(), 50);
        });
      }),
    );
    const { file } = await captureFile('cut-off');
    const result = await run(['send', '--request', file, '--to', url]);
    expect(result.stdout).toContain('attempt 1: 200 OK, but the body did not arrive (ECONNRESET)');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
  });

  it('ends an attempt after --timeout even while the answer trickles in', async () => {
    let trickle: ReturnType<typeof setInterval> | undefined;
    const url = await listen(
      createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200);
          trickle = setInterval(() => res.write('x'), 100);
          res.on('close', () => clearInterval(trickle));
        });
      }),
    );
    const { file } = await captureFile('trickle');
    const started = Date.now();
    const result = await run(['send', '--request', file, '--to', url, '--timeout', '800']);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.stdout).toContain('but the body did not arrive (TimeoutError)');
    expect(result.code).toBe(1);
    clearInterval(trickle);
  });

  it('keeps a raw-HTTP header named like an Object member (Constructor, __proto__) as sent', async () => {
    const received: string[][] = [];
    const url = await listen(
      createServer((req, res) => {
        received.push(req.rawHeaders);
        req.resume();
        req.on('end', () => res.writeHead(200).end('{"ok":true}'));
      }),
    );
    const file = join(dir, 'prototype-names.http');
    await writeFile(
      file,
      'POST /webhooks/payments HTTP/1.1\nHost: shop.example.kg\nConstructor: x\n__proto__: y\n\n{"id":"1"}\n',
    );
    expect((await run(['send', '--request', file, '--to', url])).code).toBe(0);
    // rawHeaders, as the server's own header object would drop __proto__ itself.
    const pairs = received[0]!.flatMap((value, index, all) => (index % 2 === 0 ? [[value, all[index + 1]]] : []));
    expect(pairs).toContainEqual(['constructor', 'x']);
    expect(pairs).toContainEqual(['__proto__', 'y']);
  });

  it('replays a raw-HTTP body that is not UTF-8 byte for byte, and refuses to sign it again', async () => {
    const received: Buffer[] = [];
    const url = await listen(
      createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          received.push(Buffer.concat(chunks));
          res.writeHead(200).end('{"ok":true}');
        });
      }),
    );
    // "é" in Latin-1: the byte 0xE9, which is not UTF-8.
    const body = Buffer.from('{"id":"1","note":"caf\u00e9"}', 'latin1');
    const file = join(dir, 'latin1.http');
    await writeFile(
      file,
      Buffer.concat([Buffer.from('POST /webhooks/payments HTTP/1.1\nHost: shop.example.kg\n\n'), body]),
    );
    const result = await run(['send', '--request', file, '--to', url]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`body: ${body.length} bytes, not UTF-8`);
    expect(received[0]).toEqual(body);
    // The line break ending the file (LF or CRLF) is not the body's; a CR alone is.
    for (const [end, sent] of [
      ['\n', body],
      ['\r\n', body],
      ['\r', Buffer.concat([body, Buffer.from('\r')])],
    ] as const) {
      const head = Buffer.from('POST /webhooks/payments HTTP/1.1\r\nHost: shop.example.kg\r\n\r\n');
      await writeFile(file, Buffer.concat([head, body, Buffer.from(end)]));
      expect((await run(['send', '--request', file, '--to', url])).code).toBe(0);
      expect(received.at(-1), JSON.stringify(end)).toEqual(sent);
    }
    const resigned = await run(['send', '--request', file, '--to', url, '--resign']);
    expect(resigned.code).toBe(2);
    expect(resigned.stderr).toContain('the captured body is not UTF-8 text');
  });

  it('refuses a capture whose recorded URL is not an http(s) URL when re-signing (exit 2, no stack)', async () => {
    const { capture } = await captureFile('bad-url');
    for (const webhookUrl of ['not a url', 'ftp://shop.example.kg/webhooks/payments']) {
      const file = join(dir, 'bad-url-edited.json');
      await writeFile(file, JSON.stringify({ ...capture, webhookUrl }));
      const result = await run(['send', '--request', file, '--to', 'http://127.0.0.1:9/x', '--resign']);
      expect(result.code, webhookUrl).toBe(2);
      expect(result.stderr).toContain('payhook send: the URL the capture was signed for');
    }
  });

  it('refuses to sign again a captured x-api-* header HTTP cannot carry (exit 2, not "no answer")', async () => {
    const { capture } = await captureFile('bad-header');
    const file = join(dir, 'bad-header-edited.json');
    await writeFile(file, JSON.stringify({ ...capture, headers: { ...capture.headers, 'x-api-client': 'a\nb' } }));
    const result = await run(['send', '--request', file, '--to', 'http://127.0.0.1:9/x', '--resign']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('payhook send: the captured header "x-api-client": not a header name and value');
  });

  it('refuses "-" for both the capture and the key: stdin can be read once (exit 2)', async () => {
    const { capture } = await captureFile('stdin-twice');
    const result = await run(['send', '--request', '-', '--resign', '--key', '-', '--to', 'http://127.0.0.1:9/x'], {
      input: JSON.stringify(capture),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('payhook send: stdin ("-") can be read once, and --request and --key both name it');
  });

  it('refuses flags that would build a new body, and signing flags without --resign', async () => {
    const { file } = await captureFile('usage');
    for (const args of [
      ['send', '--request', file, '--to', 'http://127.0.0.1:9/x', '--status', 'FAILED'],
      ['send', '--request', file, '--to', 'http://127.0.0.1:9/x', '--tamper'],
      ['send', '--request', file, '--to', 'http://127.0.0.1:9/x', '--age', '1000'],
      ['send', '--request', file, '--to', 'http://127.0.0.1:9/x', '--webhook-url', WEBHOOK_URL],
      ['send', '--request', file, 'http://127.0.0.1:9/x', '--to', 'http://127.0.0.1:9/y'],
      ['send', 'http://127.0.0.1:9/x', '--resign'],
      ['send', '--request', join(dir, 'missing.json'), '--to', 'http://127.0.0.1:9/x'],
    ]) {
      const result = await run(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain('payhook send: ');
    }
  });
});

describe('payhook send names the likely cause of a refusal', () => {
  it('a receiver without the test key', async () => {
    const { url } = await receiver({ publicKeys: PRODUCTION_PUBLIC_KEY });
    const result = await run(['send', url, '--webhook-url', WEBHOOK_URL]);
    expect(result.code).toBe(1);
    // Signed for the receiver's webhookUrl: the key comes first.
    expect(result.stdout).toContain(
      "likely causes (SIGNATURE_MISMATCH), most likely first:\n    - the receiver does not accept payhook's TEST key",
    );
    expect(result.stdout).toContain('diagnose: ');
    expect(result.stdout).toContain('payhook verify --request');
    // docs/testing.md shows this run's output: its causes as printed, every one of them.
    const doc = await readFile(new URL('../../docs/testing.md', import.meta.url), 'utf8');
    const from = doc.indexOf('likely causes (SIGNATURE_MISMATCH)');
    const sample = doc.slice(from, doc.indexOf('```', from));
    const causes = (text: string) => text.split('\n').filter((line) => line.startsWith('    - '));
    expect(causes(sample)).toEqual(causes(result.stdout));
    expect(causes(result.stdout)).toHaveLength(4);
  });

  it('a URL that differs from the receiver’s webhookUrl', async () => {
    const { url } = await receiver();
    const result = await run(['send', url]);
    expect(result.code).toBe(1);
    // Signed for the target itself: the URL comes first.
    expect(result.stdout).toContain(`most likely first:\n    - the receiver's webhookUrl is not ${url}`);
    expect(result.stdout).toContain('pass --webhook-url');
  });

  it('a clock that differs', async () => {
    const { url } = await receiver({ now: () => Date.now() + 600_000 });
    const result = await run(['send', url, '--webhook-url', WEBHOOK_URL]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("likely cause (TIMESTAMP_OUT_OF_WINDOW): this machine's clock and the receiver's");
  });

  it.each([[[]], [['--amount', '0']]])('a forged delivery is named as the expected outcome (%j)', async (amount) => {
    const { url } = await receiver();
    const result = await run(['send', url, '--webhook-url', WEBHOOK_URL, '--tamper', ...amount]);
    expect(result.stdout).toContain('likely cause (SIGNATURE_MISMATCH): expected: --tamper');
    // Refused, as a receiver must: the check passed.
    expect(result.stdout).toContain('1 of 1 delivery refused with 401 SIGNATURE_MISMATCH, as a receiver must');
    expect(result.code).toBe(0);
  });
});

describe('payhook send dates deliveries in the past and the future', () => {
  it.each([
    ['--age', '-400000'],
    ['--age=-400000', undefined],
  ])('%s %s signs 400 s ahead, which the receiver refuses', async (flag, value) => {
    const { url } = await receiver();
    const result = await run([
      'send',
      url,
      '--webhook-url',
      WEBHOOK_URL,
      flag,
      ...(value === undefined ? [] : [value]),
    ]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('"code":"TIMESTAMP_OUT_OF_WINDOW"');
    expect(result.stdout).toContain('expected: --age or --timestamp');
    expect(result.code).toBe(0);
  });

  it('--age -1000 is inside the window and accepted; a future --timestamp past it is refused', async () => {
    const { url } = await receiver();
    const near = await run(['send', url, '--webhook-url', WEBHOOK_URL, '--age', '-1000']);
    expect(near.stdout).toContain('attempt 1: 200 OK');
    expect(near.code).toBe(0);
    const future = await run(['send', url, '--webhook-url', WEBHOOK_URL, '--timestamp', String(Date.now() + 400_000)]);
    expect(future.stdout).toContain('"code":"TIMESTAMP_OUT_OF_WINDOW"');
    expect(future.code).toBe(0);
  });

  it("names the receiver's window, not the date, when a date inside 5 minutes is refused", async () => {
    const { url } = await receiver({ toleranceMs: 60_000 });
    const result = await run(['send', url, '--webhook-url', WEBHOOK_URL, '--age', '120000']);
    expect(result.stdout).toContain('"code":"TIMESTAMP_OUT_OF_WINDOW"');
    expect(result.stdout).not.toContain('expected:');
    expect(result.stdout).toContain(
      "--age or --timestamp dated it 2 min ago, inside the service's 5-minute window: the receiver's toleranceMs is smaller",
    );
    expect(result.code).toBe(1);
  });

  it('still refuses an --age that is not a whole number', async () => {
    for (const age of ['-', '-1.5', 'soon', '--1']) {
      const result = await run(['send', 'http://127.0.0.1:9/x', '--age', age]);
      expect(result.code, age).toBe(2);
    }
  });
});

/** Runs `node dist/cli.js … | head -1` with pipefail: the exit code is the CLI's. */
function pipedToHead(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const quoted = [process.execPath, CLI, ...args].map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
    const child = spawn('bash', ['-o', 'pipefail', '-c', `${quoted} | head -1`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a closed pipe', () => {
  it('payhook send … | head -1 exits 0 with no stack, and the delivery still happens', async () => {
    let answered = 0;
    // The answer waits, so head has exited before the CLI writes again.
    const url = await listen(
      createServer((req, res) => {
        req.resume();
        req.on('end', () => setTimeout(() => res.writeHead(200).end('{"ok":true}', () => answered++), 300));
      }),
    );
    const result = await pipedToHead(['send', url]);
    expect(result.stdout).toBe(`→ POST ${url}\n`);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(answered).toBe(1);
  });

  it('payhook verify … | head -1 exits with its own code and no stack', async () => {
    const { file } = await captureFile('piped');
    const key = join(dir, 'test.public.pem');
    await writeFile(key, TEST_KEY_PAIR.publicKey);
    const result = await pipedToHead(['verify', '--request', file, '--key', key]);
    expect(result.stdout).toMatch(/^✓ verifies: /);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});

describe('payhook verify --request on a capture that recorded webhookUrl', () => {
  it("runs the README's command as written: --env production --ignore-timestamp, no --webhook-url", async () => {
    // Signed with payhook's test key, an hour ago, for the registered URL; received on an internal host.
    const { file } = await captureFile('readme', Date.now() - 3_600_000);
    const result = await run(['verify', '--request', file, '--env', 'production', '--ignore-timestamp', '--json']);
    expect(result.code).toBe(1);
    const output = JSON.parse(result.stdout) as {
      ok: boolean;
      error: { code: string };
      diagnosis: { keyName: string; changes: Array<{ part: string }>; message: string };
    };
    expect(output.ok).toBe(false);
    expect(output.error.code).toBe('SIGNATURE_MISMATCH');
    // The only cause left is the key: the host and path came from the recorded webhookUrl.
    expect(output.diagnosis.keyName).toMatch(/test/i);
    expect(output.diagnosis.changes.map((change) => change.part)).toEqual(['key']);
    expect(output.diagnosis.message).not.toContain('Host was rewritten');
    const text = await run(['verify', '--request', file, '--env', 'production', '--ignore-timestamp']);
    expect(text.stdout).toContain(`judged with webhookUrl ${WEBHOOK_URL} (recorded in the capture`);
  });

  it('refuses a recorded webhookUrl that is not a URL as a usage error, and lets --webhook-url override it', async () => {
    const { capture } = await captureFile('bad-url');
    for (const webhookUrl of ['', 'shop.example.kg/webhooks/payments']) {
      const file = join(dir, 'bad-url-edited.json');
      await writeFile(file, JSON.stringify({ ...capture, webhookUrl }));
      const result = await run(['verify', '--request', file, '--env', 'beta']);
      expect(result.code, webhookUrl).toBe(2);
      expect(result.stderr).toContain('payhook verify: ');
      const key = join(dir, 'test.public.pem');
      await writeFile(key, TEST_KEY_PAIR.publicKey);
      const overridden = await run(['verify', '--request', file, '--key', key, '--webhook-url', WEBHOOK_URL]);
      expect(overridden.code, webhookUrl).toBe(webhookUrl === '' ? 2 : 0);
    }
  });

  it('suggests --ignore-timestamp for an old capture, and names the clock for one from the future', async () => {
    const key = join(dir, 'test.public.pem');
    await writeFile(key, TEST_KEY_PAIR.publicKey);
    const { file: old } = await captureFile('hint-old', Date.now() - 7_200_000);
    const stale = await run(['verify', '--request', old, '--key', key]);
    expect(stale.code).toBe(1);
    expect(stale.stdout).toMatch(/hint: the capture's timestamp is 2 h old, .*add --ignore-timestamp/);
    const json = JSON.parse((await run(['verify', '--request', old, '--key', key, '--json'])).stdout) as {
      hint: string;
    };
    expect(json.hint).toContain('--ignore-timestamp');
    expect((await run(['verify', '--request', old, '--key', key, '--ignore-timestamp'])).code).toBe(0);
    const { file: ahead } = await captureFile('hint-future', Date.now() + 600_000);
    const future = await run(['verify', '--request', ahead, '--key', key]);
    expect(future.stdout).toMatch(/hint: the capture's timestamp is 10 min ahead of this machine's clock/);
    // Six minutes old: an old capture, or a fresh one from a receiver whose clock is off.
    const { file: recent } = await captureFile('hint-recent', Date.now() - 360_000);
    const skewed = await run(['verify', '--request', recent, '--key', key]);
    expect(skewed.stdout).toMatch(
      /hint: the capture's timestamp is 6 min old, .*captured just now\? then a clock is off/,
    );
    expect(stale.stdout).not.toContain('captured just now');
  });

  it('names a timestamp in seconds, in the hint and in the diagnosis, instead of an old capture or the clock', async () => {
    const key = join(dir, 'test.public.pem');
    await writeFile(key, TEST_KEY_PAIR.publicKey);
    const { file } = await captureFile('hint-seconds', Math.floor(Date.now() / 1000));
    const result = await run(['verify', '--request', file, '--key', key, '--json']);
    const json = JSON.parse(result.stdout) as { hint: string; diagnosis: { fix: string; message: string } };
    expect(json.hint).toContain('in seconds, not milliseconds');
    expect(json.diagnosis.message).toContain('It looks like seconds, not milliseconds.');
    expect(json.diagnosis.fix).toContain('date it in milliseconds (Date.now())');
    expect(json.diagnosis.fix).not.toContain('NTP');
    // --ignore-timestamp judges a capture at its own time, but never one in seconds: no receiver takes it.
    const ignored = await run(['verify', '--request', file, '--key', key, '--ignore-timestamp']);
    expect(ignored.code).toBe(1);
    expect(ignored.stdout).not.toContain('✓');
    expect(ignored.stdout).toContain('in seconds, not milliseconds');
    const { file: old } = await captureFile('hint-seconds-old', Math.floor(Date.now() / 1000) - 86_400 * 30);
    const aged = await run(['verify', '--request', old, '--key', key, '--ignore-timestamp']);
    expect([aged.code, aged.stdout.includes('in seconds, not milliseconds')]).toEqual([1, true]);
  });
});

describe('the tunnel recipe of docs/testing.md, with a local stand-in for the tunnel', () => {
  it('a receiver pinned to the tunnel URL accepts a delivery signed for it, whatever Host the tunnel forwards', async () => {
    const tunnelUrl = 'https://random-words.trycloudflare.com/webhooks/payments';
    const { url: local, payments } = await receiver({
      publicKeys: [BETA_PUBLIC_KEY, TEST_KEY_PAIR.publicKey],
      webhookUrl: tunnelUrl,
    });
    // Forwards path and query to the receiver, as a tunnel does, with the public Host and its own headers.
    const target = new URL(local);
    const tunnel = await listen(
      createServer((req, res) => {
        const headers = {
          ...req.headers,
          host: 'random-words.trycloudflare.com',
          'x-forwarded-for': '203.0.113.7',
          'x-forwarded-proto': 'https',
          'cf-connecting-ip': '203.0.113.7',
        };
        const forward = request(
          { host: target.hostname, port: target.port, path: req.url, method: req.method, headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        req.pipe(forward);
      }),
    );
    const result = await run(['send', tunnel, '--webhook-url', tunnelUrl]);
    expect(result.stdout).toContain('attempt 1: 200 OK {"ok":true}');
    expect(result.code).toBe(0);
    expect(payments).toHaveLength(1);
  });
});
