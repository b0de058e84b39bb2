import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestWebhook, signWebhook, TEST_KEY_PAIR, type SignedWebhook } from '../../src/testing/index.js';
import { fixtures } from '../conformance/fixtures.js';
import { run } from './run.js';

// Captured deliveries, signed with test keys (the service's private keys are
// not ours), then changed the way proxies and routers change them.
const stranger = fixtures.keys['stranger-2048']!;
let dir: string;
let testKey: string;
let strangerKey: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'payhook-verify-'));
  testKey = join(dir, 'test.public.pem');
  strangerKey = join(dir, 'beta-stand-in.public.pem');
  await writeFile(testKey, TEST_KEY_PAIR.publicKey);
  await writeFile(strangerKey, stranger.publicKeyPem);
});

let counter = 0;
async function capture(request: {
  method?: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}): Promise<string> {
  const file = join(dir, `capture-${++counter}.json`);
  await writeFile(file, JSON.stringify({ method: 'POST', ...request }, null, 2));
  return file;
}

function asCaptured(signed: SignedWebhook, url: string, headers: Record<string, string> = {}) {
  return { url, headers: { ...signed.headers, ...headers }, body: signed.body };
}

const sign = (url: string, privateKey?: string) =>
  signWebhook(createTestWebhook(), { url, ...(privateKey === undefined ? {} : { privateKey }) });

describe('payhook verify', () => {
  it('exits 0 for a delivery that verifies, from JSON', async () => {
    const signed = await sign('https://shop.example.kg/webhooks/payments');
    const result = await run([
      'verify',
      '--request',
      await capture(asCaptured(signed, '/webhooks/payments')),
      '--key',
      testKey,
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('✓ verifies: SUCCEEDED DEBIT of 100');
    expect(result.stdout).toContain('│ post');
  });

  it('says a delivery that verifies was judged by its own Host, path and query when no webhookUrl is known', async () => {
    // The receiver pinned a webhookUrl with a typo (/webhook/) and refused this delivery; its capture has no webhookUrl.
    const signed = await sign('https://shop.example.kg/webhooks/payments');
    const file = await capture(asCaptured(signed, '/webhooks/payments'));
    const own = await run(['verify', '--request', file, '--test-key']);
    expect(own.code).toBe(0);
    expect(own.stdout).toContain("judged with the request's own Host, path and query");
    expect(own.stdout).toContain("pass --webhook-url <your receiver's webhookUrl>");
    expect(JSON.parse((await run(['verify', '--request', file, '--test-key', '--json'])).stdout)).toMatchObject({
      ok: true,
      webhookUrl: null,
    });
    const pinned = ['--webhook-url', 'https://shop.example.kg/webhook/payments'];
    const refused = await run(['verify', '--request', file, '--test-key', ...pinned]);
    expect(refused.code).toBe(1);
    const given = await run(['verify', '--request', file, '--test-key', '--webhook-url', signed.url, '--json']);
    expect(JSON.parse(given.stdout)).toMatchObject({ ok: true, webhookUrl: signed.url });
    const named = await run(['verify', '--request', file, '--test-key', '--webhook-url', signed.url]);
    expect(named.stdout).not.toContain("the request's own Host");
  });

  it('--max-body-bytes judges a larger body as a receiver with a larger maxBodyBytes does', async () => {
    const signed = await signWebhook(createTestWebhook({ fields: { note: 'x'.repeat(40_000) } }), {
      url: 'https://shop.example.kg/webhooks/payments',
    });
    const file = await capture(asCaptured(signed, '/webhooks/payments'));
    const refused = await run(['verify', '--request', file, '--test-key']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('✗ does not verify: BODY_TOO_LARGE');
    expect(refused.stdout).toContain('pass it with --max-body-bytes <n>');
    expect(refused.stdout).toContain("diagnosis (the body's size aside): The delivery verifies");
    // The 40 KB body line is printed cut short.
    expect(refused.stdout).toMatch(/x… \(\d{5} characters in all; --json prints it whole\)/);
    expect(refused.stdout.length).toBeLessThan(5_000);
    const accepted = await run(['verify', '--request', file, '--test-key', '--max-body-bytes', '65536']);
    expect(accepted.code).toBe(0);
    expect(accepted.stdout).toContain('✓ verifies: SUCCEEDED DEBIT of 100');
    const json = await run(['verify', '--request', file, '--test-key', '--max-body-bytes', '65536', '--json']);
    expect((JSON.parse(json.stdout) as { canonical: string }).canonical).toContain('x'.repeat(40_000));
    const bad = await run(['verify', '--request', file, '--test-key', '--max-body-bytes', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-body-bytes must be a whole number, at least 1');
  });

  it('--test-key accepts the published test key, with no key file to write', async () => {
    const signed = await sign('https://shop.example.kg/webhooks/payments');
    const file = await capture(asCaptured(signed, '/webhooks/payments'));
    const result = await run(['verify', '--request', file, '--test-key']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('✓ verifies: SUCCEEDED DEBIT of 100');
    // Beside the beta key, as the testing guide's laptop receiver runs: it verifies, with no other key blamed.
    const both = await run(['verify', '--request', file, '--env', 'beta', '--test-key']);
    expect(both.code).toBe(0);
    expect(both.stdout).not.toContain('instead of');
    const stranger = await sign(
      'https://shop.example.kg/webhooks/payments',
      fixtures.keys['stranger-2048']!.privateKeyPem,
    );
    const other = await run([
      'verify',
      '--request',
      await capture(asCaptured(stranger, '/webhooks/payments')),
      '--test-key',
    ]);
    expect(other.code).toBe(1);
  });

  it('reads raw HTTP text, from a file or stdin', async () => {
    const signed = await sign('https://shop.example.kg/webhooks/payments?shop=7');
    const http = [
      'POST /webhooks/payments?shop=7 HTTP/1.1',
      ...Object.entries(signed.headers).map(
        ([name, value]) => `${name.replace(/^./, (c) => c.toUpperCase())}: ${value}`,
      ),
      '',
      signed.body,
      '',
    ].join('\r\n');
    const file = join(dir, 'capture.http');
    await writeFile(file, http);
    expect((await run(['verify', '--request', file, '--key', testKey])).code).toBe(0);
    expect((await run(['verify', '--request', '-', '--key', testKey], { input: http })).code).toBe(0);
  });

  // What a merchant writes from onSignatureMismatch's first argument: JSON.stringify of a Node request's parts keeps
  // the body as { type: 'Buffer', data }, of a Uint8Array as { "0": …, "1": … }, of a Web Request's headers as {}.
  it('reads a body JSON.stringify wrote from a Buffer or a Uint8Array, and names a capture with no headers', async () => {
    const signed = await sign('https://shop.example.kg/webhooks/payments');
    const bytes = new TextEncoder().encode(signed.body);
    for (const body of [Buffer.from(bytes), bytes]) {
      const file = join(dir, `stringified-${counter++}.json`);
      await writeFile(
        file,
        JSON.stringify({ method: 'POST', url: '/webhooks/payments', headers: signed.headers, body }),
      );
      const result = await run(['verify', '--request', file, '--key', testKey]);
      expect(result.stdout, body.constructor.name).toContain('✓ verifies');
    }
    const file = join(dir, 'no-headers.json');
    await writeFile(file, JSON.stringify({ method: 'POST', url: signed.url, headers: {}, body: signed.body }));
    const result = await run(['verify', '--request', file, '--key', testKey]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('"headers" is empty');
    expect(result.stderr).toContain('{ capture }');
  });

  // A packet capture's "follow stream" copied whole: the answer follows the request's body.
  it('reads raw HTTP text with the answer after it, cutting the body at its Content-Length', async () => {
    const signed = await sign('https://shop.example.kg/webhooks/payments');
    const length = Buffer.byteLength(signed.body);
    const head = ['POST /webhooks/payments HTTP/1.1', ...Object.entries(signed.headers).map(([n, v]) => `${n}: ${v}`)];
    const answer = 'HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n\r\n{"ok":false}';
    const conversation = join(dir, 'conversation.http');
    await writeFile(conversation, [...head, `content-length: ${length}`, '', signed.body + answer].join('\r\n'));
    expect((await run(['verify', '--request', conversation, '--key', testKey])).code).toBe(0);
    // A body edited since it was captured (longer than declared, nothing like an answer after) is read whole.
    const edited = join(dir, 'edited.http');
    const longer = signed.body.replace(/}$/, ',"note":"x"}');
    await writeFile(edited, [...head, `content-length: ${length}`, '', longer].join('\r\n'));
    const result = await run(['verify', '--request', edited, '--key', testKey, '--json']);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, error: { code: 'SIGNATURE_MISMATCH' } });
    expect(JSON.parse(result.stdout).diagnosis.canonical).toContain('"note":"x"');
  });

  it('reads raw HTTP text sent chunked, its chunks joined (sizes in bytes)', async () => {
    // Non-ASCII text, so that a size counted in characters would cut the body wrong.
    const resigned = await signWebhook(
      { ...createTestWebhook(), note: 'é ✓ платёж' },
      { url: 'https://shop.example.kg/webhooks/payments' },
    );
    const body = Buffer.from(resigned.body, 'utf8');
    const cut = 17;
    const chunk = (part: Buffer) => `${part.length.toString(16)};ext=1\r\n${part.toString('utf8')}\r\n`;
    const http = [
      'POST /webhooks/payments HTTP/1.1',
      ...Object.entries(resigned.headers).map(([name, value]) => `${name}: ${value}`),
      'Transfer-Encoding: chunked',
      '',
      chunk(body.subarray(0, cut)) + chunk(body.subarray(cut)) + '0\r\n\r\n',
    ].join('\r\n');
    const file = join(dir, 'chunked.http');
    await writeFile(file, http);
    const result = await run(['verify', '--request', file, '--key', testKey]);
    expect(result.stdout).toContain('✓ verifies');
    expect(result.code).toBe(0);
    await writeFile(file, http.replace(/\r\n\r\n[0-9a-f]+;ext=1/, '\r\n\r\nzz'));
    expect((await run(['verify', '--request', file, '--key', testKey])).code).toBe(2);
  });

  it('reads a conformance entry and judges an old capture at its own time with --ignore-timestamp', async () => {
    const entry = fixtures.requests.find((e) => e.name === 'valid-with-query')!;
    const file = join(dir, 'entry.json');
    await writeFile(file, JSON.stringify(entry));
    await writeFile(join(dir, 'conformance.pem'), fixtures.keys['conformance-2048']!.publicKeyPem);
    const stale = await run(['verify', '--request', file, '--key', join(dir, 'conformance.pem')]);
    expect(stale.code).toBe(1);
    expect(stale.stdout).toContain('TIMESTAMP_OUT_OF_WINDOW');
    expect(stale.stdout).toContain('The signature verifies with the configured key, but the timestamp is refused');
    // The clock is the CLI's own choice, not a merchant's fixed `now`.
    expect(stale.stdout).not.toContain('now is fixed');
    // One environment: the other's key is tried as a cause anyway, and a receiver never takes both.
    const both = await run(['verify', '--request', file, '--env', 'production', '--env', 'beta']);
    expect([both.code, both.stderr]).toEqual([2, expect.stringContaining('--env once')]);
    const ignored = await run([
      'verify',
      '--request',
      file,
      '--key',
      join(dir, 'conformance.pem'),
      '--ignore-timestamp',
    ]);
    expect(ignored.code).toBe(0);
    const atTime = await run([
      'verify',
      '--request',
      file,
      '--key',
      join(dir, 'conformance.pem'),
      '--now',
      String(entry.now),
    ]);
    expect(atTime.code).toBe(0);
  });

  it('names a rewritten Host', async () => {
    const signed = await sign('https://shop.example.kg/webhooks/payments');
    const file = await capture(
      asCaptured(signed, '/webhooks/payments', { host: 'internal:8080', 'x-forwarded-host': 'shop.example.kg' }),
    );
    const result = await run(['verify', '--request', file, '--key', testKey]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('SIGNATURE_MISMATCH');
    expect(result.stdout).toContain(
      'canonical string as received:\n    │ post\n    │ /webhooks/payments\n    │ host:internal:8080&x-api-timestamp:',
    );
    expect(result.stdout).toContain(
      'signature would verify with Host `shop.example.kg` (your request has `internal:8080`)',
    );
    expect(result.stdout).toContain('trustForwardedHeaders');
    expect(result.stdout).toContain('│ host:shop.example.kg&x-api-timestamp:');
  });

  it('names a stripped path prefix', async () => {
    const signed = await sign('https://shop.example.kg/api/webhooks/payments');
    const file = await capture(asCaptured(signed, '/webhooks/payments'));
    const result = await run(['verify', '--request', file, '--key', testKey]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'signature would verify with path `/api/webhooks/payments` (your request has `/webhooks/payments`)',
    );
    expect(result.stdout).toContain(
      "set `webhookUrl: 'https://shop.example.kg/api/webhooks/payments'`, the URL the service signed: a proxy strips the prefix `/api` before your app",
    );
    // Judged with a webhookUrl, the line says whose host and path it holds: the registered URL's, not the request's.
    const pinned = await run([
      'verify',
      '--request',
      file,
      '--key',
      testKey,
      '--webhook-url',
      'https://shop.example.kg/hook',
    ]);
    expect(pinned.stdout).toContain(
      'canonical string with host, path and query from https://shop.example.kg/hook:\n    │ post\n    │ /hook\n',
    );
  });

  it('names a dropped query string', async () => {
    const registered = 'https://shop.example.kg/webhooks/payments?token=s3cr%20et&shop=7';
    const signed = await sign(registered);
    const file = await capture(asCaptured(signed, '/webhooks/payments'));
    const result = await run(['verify', '--request', file, '--key', testKey, '--registered-url', registered]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('signature would verify with query `?token=…&shop=…` (your request has none)');
    expect(result.stdout).toContain('a proxy drops it');
    expect(result.stdout).toContain('have it pass the query string on (the service signed `?token=…&shop=…`)');
    // Without the hint there is no trace of the query: it says what it tried.
    const blind = await run(['verify', '--request', file, '--key', testKey]);
    expect(blind.code).toBe(1);
    expect(blind.stdout).toContain('No likely cause makes the signature verify. Tried hosts `shop.example.kg`');
  });

  it('names the other environment key (a test key stands in for beta)', async () => {
    // We cannot sign with the service's beta key; --also-try beta=<pem> names a
    // test key "beta", and the diagnosis reports the environment by that name.
    const signed = await sign('https://shop.example.kg/webhooks/payments', stranger.privateKeyPem);
    const file = await capture(asCaptured(signed, '/webhooks/payments'));
    const result = await run(['verify', '--request', file, '--key', testKey, '--also-try', `beta=${strangerKey}`]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('signature would verify with the beta key instead of the configured key');
    expect(result.stdout).toContain("send beta deliveries to a test or staging receiver with `environment: 'beta'`");
    // With the real environment keys (and payhook's test key), a delivery signed by a stranger matches none; all were tried.
    const real = await run(['verify', '--request', file, '--env', 'production']);
    expect(real.code).toBe(1);
    expect(real.stdout).toMatch(/keys service-production, service-beta, payhook-test/);
  });

  it('prints JSON with --json', async () => {
    const signed = await sign('https://shop.example.kg/api/webhooks/payments');
    const file = await capture(asCaptured(signed, '/webhooks/payments'));
    const result = await run(['verify', '--request', file, '--key', testKey, '--json']);
    expect(result.code).toBe(1);
    const output = JSON.parse(result.stdout) as {
      ok: boolean;
      error: { code: string };
      diagnosis: { changes: unknown[] };
    };
    expect(output.ok).toBe(false);
    expect(output.error.code).toBe('SIGNATURE_MISMATCH');
    expect(output.diagnosis.changes).toEqual([
      { part: 'path', received: '/webhooks/payments', expected: '/api/webhooks/payments' },
    ]);
  });

  it('reports a signed body that is not a webhook with its issues, exit 1', async () => {
    const signed = await signWebhook({ hello: 'world' }, { url: 'https://shop.example.kg/hook' });
    const result = await run(['verify', '--request', await capture(asCaptured(signed, '/hook')), '--key', testKey]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('INVALID_PAYLOAD');
  });

  it("--json names payhook's test key when a test delivery reaches a production receiver", async () => {
    const signed = await sign('https://shop.example.kg/webhooks/payments');
    const file = await capture(asCaptured(signed, '/webhooks/payments'));
    const result = await run(['verify', '--request', file, '--env', 'production', '--ignore-timestamp', '--json']);
    expect(result.code).toBe(1);
    const printed = JSON.parse(result.stdout) as {
      ok: boolean;
      error: { code: string };
      diagnosis: { keyName: string; fix: string };
    };
    expect(printed.ok).toBe(false);
    expect(printed.error.code).toBe('SIGNATURE_MISMATCH');
    expect(printed.diagnosis.keyName).toBe('payhook-test');
    expect(printed.diagnosis.fix).toContain('test key');
  });

  it('suggests --registered-url when Host was rewritten with no X-Forwarded-Host, and finds the host with it', async () => {
    const signed = await sign('https://shop.example.kg/webhooks/payments');
    const file = await capture(asCaptured(signed, '/webhooks/payments', { host: 'internal:8080' }));
    const blind = await run(['verify', '--request', file, '--key', testKey, '--ignore-timestamp']);
    expect(blind.code).toBe(1);
    expect(blind.stdout).toContain('--registered-url');
    const found = await run([
      'verify',
      '--request',
      file,
      '--key',
      testKey,
      '--ignore-timestamp',
      '--registered-url',
      'https://shop.example.kg/webhooks/payments',
    ]);
    expect(found.stdout).toContain('signature would verify with Host `shop.example.kg`');
  });

  it('names a webhookUrl that is not the registered URL when nothing verifies with it, and finds it with --registered-url', async () => {
    // The merchant registered www.; the receiver pins the bare host, and the capture recorded that webhookUrl.
    const registered = 'https://www.shop.example.kg/webhooks/payments';
    const signed = await sign(registered);
    const file = await capture({
      ...asCaptured(signed, '/webhooks/payments', { host: '127.0.0.1:3000' }),
      webhookUrl: 'https://shop.example.kg/webhooks/payments',
    } as never);
    const blind = await run(['verify', '--request', file, '--test-key', '--ignore-timestamp']);
    expect(blind.code).toBe(1);
    expect(blind.stdout).toContain(
      '`webhookUrl` may not be the URL registered with the service: compare the two, or give the URL registered with the service (`registeredUrl`, or `payhook verify --registered-url <url>`) so that it is tried. Remaining causes, likeliest first: a parser or middleware changed the body',
    );
    const found = await run([
      'verify',
      '--request',
      file,
      '--test-key',
      '--ignore-timestamp',
      '--registered-url',
      registered,
    ]);
    expect(found.stdout).toContain(
      "signature would verify with Host `www.shop.example.kg` (your webhookUrl has `shop.example.kg`): set `webhookUrl: 'https://www.shop.example.kg/webhooks/payments'`",
    );
  });

  it('reads the exact body bytes a capture kept as bodyBase64', async () => {
    const signed = await sign('https://shop.example.kg/webhooks/payments');
    const exact = Buffer.from(signed.body, 'utf8').toString('base64');
    const ok = await run([
      'verify',
      '--request',
      await capture({ ...asCaptured(signed, '/webhooks/payments'), body: '', bodyBase64: exact } as never),
      '--key',
      testKey,
    ]);
    expect(ok.code).toBe(0);
    // Bytes that are not UTF-8 are judged as bytes: INVALID_BODY, as the receiver answered.
    const broken = Buffer.concat([Buffer.from(signed.body, 'utf8'), Buffer.from([0xff])]).toString('base64');
    const refused = await run([
      'verify',
      '--request',
      await capture({ ...asCaptured(signed, '/webhooks/payments'), body: signed.body, bodyBase64: broken } as never),
      '--key',
      testKey,
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('INVALID_BODY');
  });

  it('judges a raw-HTTP body that is not UTF-8 as bytes, from a file or stdin: INVALID_BODY, as bodyBase64 is', async () => {
    const signed = await sign('https://shop.example.kg/webhooks/payments');
    const http = Buffer.concat([
      Buffer.from(
        `POST /webhooks/payments HTTP/1.1\r\n${Object.entries(signed.headers)
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join('')}\r\n`,
      ),
      // "é" in Latin-1: the byte 0xE9, which is not UTF-8.
      Buffer.from(signed.body.replace('}', ',"note":"caf\u00e9"}'), 'latin1'),
    ]);
    const file = join(dir, 'latin1.http');
    await writeFile(file, http);
    for (const result of [
      await run(['verify', '--request', file, '--key', testKey]),
      await run(['verify', '--request', '-', '--key', testKey], { input: http }),
    ]) {
      expect(result.stdout).toContain('INVALID_BODY: The body is not valid UTF-8');
      expect(result.code).toBe(1);
    }
  });

  it('refuses "-" for two inputs: stdin can be read once (exit 2)', async () => {
    const signed = await sign('https://shop.example.kg/hook');
    const http = `POST /hook HTTP/1.1\n${Object.entries(signed.headers)
      .map(([name, value]) => `${name}: ${value}\n`)
      .join('')}\n${signed.body}`;
    for (const args of [
      ['verify', '--request', '-', '--key', '-'],
      ['verify', '--request', '-', '--key', testKey, '--also-try', 'mine=-'],
    ]) {
      const result = await run(args, { input: http });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toContain(
        'payhook verify: stdin ("-") can be read once, and --request and',
      );
    }
  });

  it('refuses bad usage with exit 2', async () => {
    const signed = await sign('https://shop.example.kg/hook');
    const file = await capture(asCaptured(signed, '/hook'));
    const garbage = join(dir, 'garbage.pem');
    await writeFile(garbage, '-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----\n');
    const notJson = join(dir, 'not-a-request.txt');
    await writeFile(notJson, 'hello there\n');
    const oneLine = join(dir, 'one-line.txt');
    await writeFile(oneLine, 'hello there');
    // JSON is UTF-8; a body that is not goes in "bodyBase64".
    const latin1Json = join(dir, 'latin1.json');
    await writeFile(
      latin1Json,
      Buffer.from(JSON.stringify(asCaptured(signed, '/hook')).replace('}', ',"n":"\u00e9"}'), 'latin1'),
    );
    for (const args of [
      ['verify', '--key', testKey],
      ['verify', '--request', file],
      ['verify', '--request', file, '--env', 'staging'],
      ['verify', '--request', '/nonexistent.json', '--key', testKey],
      ['verify', '--request', file, '--key', '/nonexistent.pem'],
      ['verify', '--request', file, '--key', garbage],
      ['verify', '--request', notJson, '--key', testKey],
      ['verify', '--request', oneLine, '--key', testKey],
      ['verify', '--request', latin1Json, '--key', testKey],
      ['verify', '--request', file, '--key', testKey, '--also-try', 'beta'],
      // A key or URL to try as a cause that cannot be used is named, not passed over.
      ['verify', '--request', file, '--key', testKey, '--also-try', `mine=${garbage}`],
      ['verify', '--request', file, '--key', testKey, '--registered-url', 'notaurl'],
      ['verify', '--request', file, '--key', testKey, '--registered-url', 'ftp://shop.example.kg/hook'],
      ['verify', '--request', file, '--key', testKey, '--webhook-url', 'ftp://shop.example.kg/hook'],
      ['verify', '--request', file, '--key', testKey, '--now', 'yesterday'],
    ]) {
      const result = await run(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain('payhook verify:');
    }
  });
});
