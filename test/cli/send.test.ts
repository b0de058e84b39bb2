import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { retryDelay } from '../../src/retry.js';
import { createNodeWebhookHandler } from '../../src/node/index.js';
import { TEST_KEY_PAIR } from '../../src/testing/index.js';
import { verifyWebhook } from '../../src/verify-webhook.js';
import { run } from './run.js';

interface Received {
  at: number;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server | undefined;

afterEach(() => {
  server?.close();
  server = undefined;
});

/** A real endpoint on 127.0.0.1 that answers each request with `answer(n)` (n from 1), refusals with `code`. */
async function endpoint(
  answer: (n: number) => number,
  delayMs: number | ((n: number) => number) = 0,
  code?: string | ((n: number) => string | undefined),
): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  server = createServer((req, res) => {
    const at = Date.now();
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      received.push({ at, url: req.url ?? '', headers: req.headers, body });
      const status = answer(received.length);
      setTimeout(
        () =>
          res
            .writeHead(status, {
              'content-type': 'application/json',
              ...(status >= 300 && status < 400 ? { location: '/login' } : {}),
            })
            .end(
              JSON.stringify({
                ok: status === 200,
                ...(status === 200 ? {} : { code: typeof code === 'function' ? code(received.length) : code }),
              }),
            ),
        typeof delayMs === 'number' ? delayMs : delayMs(received.length),
      );
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/webhooks/payments`, received };
}

async function verifies(delivery: Received): Promise<boolean> {
  const result = await verifyWebhook(
    { method: 'POST', url: delivery.url, headers: delivery.headers, body: delivery.body },
    { publicKeys: TEST_KEY_PAIR.publicKey },
  );
  return result.ok;
}

describe('payhook send', () => {
  it('signs with the test key and delivers; exit 0 on 200', async () => {
    const { url, received } = await endpoint(() => 200);
    const result = await run(['send', url]);
    expect(result.code).toBe(0);
    expect(received).toHaveLength(1);
    expect(await verifies(received[0]!)).toBe(true);
    expect(result.stdout).toContain("payhook's TEST key");
    expect(result.stdout).toContain('attempt 1: 200 OK');
    expect(result.stdout).toContain('1 of 1 delivery answered 200 OK');
  });

  it('builds the body from flags and a JSON file (flags win)', async () => {
    const { url, received } = await endpoint(() => 200);
    const dir = await mkdtemp(join(tmpdir(), 'payhook-send-'));
    const file = join(dir, 'body.json');
    await writeFile(
      file,
      JSON.stringify({
        variant: 'extended',
        status: 'SUCCEEDED',
        amount: 5,
        receiptNumber: 'R-1',
        // The file's fields.amount yields to --amount too: a body with two amounts would test nothing real.
        fields: { orderId: 'A-17', amount: 5 },
      }),
    );
    const result = await run([
      'send',
      url,
      '--body',
      file,
      '--status',
      'failed',
      '--amount',
      '99.99',
      '--field',
      'phone=+996 555',
      '--transaction-id',
      'tx-42',
    ]);
    expect(result.code).toBe(0);
    const body = JSON.parse(received[0]!.body) as Record<string, unknown>;
    expect(body).toMatchObject({
      status: 'failed',
      amount: 99.99,
      transactionId: 'tx-42',
      id: 'tx-42_DEBIT',
      receiptNumber: 'R-1',
      transactionType: 'DEBIT',
    });
    expect(body['fields']).toMatchObject({ amount: 99.99, orderId: 'A-17', phone: '+996 555' });
    expect(await verifies(received[0]!)).toBe(true);
    const card = await run(['send', url, '--variant', 'card']);
    expect(card.code).toBe(0);
    expect(JSON.parse(received[1]!.body)).toMatchObject({ service: { id: 'VISA' } });
    // A web payment's data.amount too.
    await writeFile(file, JSON.stringify({ variant: 'web', data: { amount: 5 }, fields: { amount: 5 } }));
    expect((await run(['send', url, '--body', file, '--amount', '7'])).code).toBe(0);
    expect(JSON.parse(received[2]!.body)).toMatchObject({ amount: 7, fields: { amount: 7 }, data: { amount: 7 } });
  });

  it('--body reads a UTF-8 file, a leading BOM ignored, and refuses one that is not UTF-8 (exit 2)', async () => {
    const { url, received } = await endpoint(() => 200);
    const dir = await mkdtemp(join(tmpdir(), 'payhook-send-'));
    const bom = join(dir, 'bom.json');
    await writeFile(bom, '\uFEFF{"fields":{"orderId":"Асель"}}');
    const read = await run(['send', url, '--body', bom]);
    expect(read.code).toBe(0);
    expect(JSON.parse(received[0]!.body)).toMatchObject({ fields: { orderId: 'Асель' } });
    // "Асель" in Windows-1251.
    const cp1251 = join(dir, 'cp1251.json');
    await writeFile(
      cp1251,
      Buffer.concat([
        Buffer.from('{"fields":{"orderId":"'),
        Buffer.from([0xc0, 0xf1, 0xe5, 0xeb, 0xfc]),
        Buffer.from('"}}'),
      ]),
    );
    const refused = await run(['send', url, '--body', cp1251]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`payhook send: the body file ${JSON.stringify(cp1251)} is not UTF-8`);
    expect(received).toHaveLength(1);
  });

  it('--repeat with --concurrency sends the same signed delivery at once', async () => {
    const { url, received } = await endpoint(() => 200, 150);
    const result = await run(['send', url, '--repeat', '3', '--concurrency', '3']);
    expect(result.code).toBe(0);
    expect(received).toHaveLength(3);
    expect(new Set(received.map((r) => r.headers['signature'])).size).toBe(1);
    expect(new Set(received.map((r) => r.body)).size).toBe(1);
    // All three arrived before the first answer (150 ms later).
    expect(received[2]!.at - received[0]!.at).toBeLessThan(150);
    expect(result.stdout).toContain('3 of 3 deliveries answered 200 OK');
  });

  it('--repeat exits 0 when the copies beside the handled one are answered 409 and a redelivery after them 200', async () => {
    // The handled copy answers after 300 ms; the two sent beside it find it in progress at once; the fourth request is
    // the redelivery sent after them all.
    const { url, received } = await endpoint(
      (n) => (n === 1 || n === 4 ? 200 : 409),
      (n) => (n === 1 ? 300 : 0),
    );
    const deduplicated = await run(['send', url, '--repeat', '3', '--concurrency', '3']);
    expect(deduplicated.code).toBe(0);
    expect(received).toHaveLength(4);
    expect(deduplicated.stdout).toContain('1 of 3 deliveries answered 200 OK');
    expect(deduplicated.stdout).toContain('redelivery after them: 200 OK');
    expect(deduplicated.stdout).toContain('the other 2 copies answered 409, found in progress, and the redelivery 200');
    server!.close();
  });

  // A store answers the copies that read the claim before it was completed 409 even when those answers arrive after
  // the 200 (one more step on their way out, as payhook/redis takes): the order of arrival proves nothing.
  it('--repeat exits 0 for 409s that arrive after the 200, once the redelivery after them gets 200', async () => {
    const { url } = await endpoint(
      (n) => (n === 1 || n === 4 ? 200 : 409),
      (n) => (n === 1 ? 0 : n === 4 ? 0 : 150),
    );
    const result = await run(['send', url, '--repeat', '3', '--concurrency', '3']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('the other 2 copies answered 409, found in progress, and the redelivery 200');
    server!.close();
  });

  // The service's document has the order updated after the 200: a receiver may complete its claim a moment later.
  it('--repeat sends the redelivery again while it is answered 409, and exits 0 once it gets 200', async () => {
    const { url, received } = await endpoint((n) => (n === 1 || n >= 6 ? 200 : 409));
    const result = await run(['send', url, '--repeat', '3', '--concurrency', '3']);
    expect(result.code).toBe(0);
    expect(received).toHaveLength(6);
    expect(result.stdout).toContain('the other 2 copies answered 409, found in progress, and the redelivery 200');
    server!.close();
  });

  // A --timestamp near the window's edge must not age out of it during the redeliveries' seconds.
  it('--repeat dates each redelivery at the age the copies had', async () => {
    const { url, received } = await endpoint((n) => (n === 1 || n >= 5 ? 200 : 409));
    const timestamp = Date.now() - 200_000;
    const result = await run(['send', url, '--repeat', '3', '--concurrency', '3', '--timestamp', String(timestamp)]);
    expect(result.code).toBe(0);
    const stamps = received.map((request) => Number(request.headers['x-api-timestamp']));
    expect(stamps.slice(0, 3)).toEqual([timestamp, timestamp, timestamp]);
    // The second redelivery went out 250 ms after the first, and its date moved on with it.
    expect(stamps[4]! - stamps[3]!).toBeGreaterThanOrEqual(200);
    expect(stamps[3]!).toBeGreaterThan(timestamp);
    server!.close();
  });

  it('--repeat says it cannot tell, and exits 1, when the redelivery is refused for another reason', async () => {
    const { url, received } = await endpoint(
      (n) => (n === 1 ? 200 : n === 4 ? 401 : 409),
      0,
      (n) => (n === 4 ? 'TIMESTAMP_OUT_OF_WINDOW' : 'DELIVERY_IN_PROGRESS'),
    );
    const result = await run(['send', url, '--repeat', '3', '--concurrency', '3']);
    expect(result.code).toBe(1);
    expect(received).toHaveLength(4);
    expect(result.stdout).toContain(
      '2 copies answered 409, found in progress, but the redelivery after them was answered 401, so whether the claim was completed is not known',
    );
    expect(result.stdout).not.toContain('never completed');
    server!.close();
  });

  it('--repeat exits 1 when the redelivery after the copies is answered 409, or no copy was handled', async () => {
    // A 409 for the redelivery is a claim never completed; no copy handled, or another refusal beside the 200, fails
    // with no redelivery sent.
    const cases: [string, (n: number) => number, number, string[]][] = [
      [
        '1',
        (n) => (n === 1 ? 200 : 409),
        9,
        [
          'redelivery after them: 409',
          '2 copies answered 409, and redeliveries after them still 409 some 8 s later: the receiver never completed the claim',
        ],
      ],
      ['3', () => 409, 3, []],
      ['3', (n) => (n === 1 ? 200 : n === 2 ? 409 : 500), 3, []],
    ];
    for (const [concurrency, answer, requests, lines] of cases) {
      const { url: other, received } = await endpoint(answer, (n) => (n === 1 ? 100 : 0));
      const result = await run(['send', other, '--repeat', '3', '--concurrency', concurrency]);
      expect(result.code).toBe(1);
      expect(received).toHaveLength(requests);
      expect(result.stdout).not.toContain('found in progress');
      for (const line of lines) expect(result.stdout).toContain(line);
      server!.close();
    }
  });

  it('--retry follows retryDelay (compressed by --speed) and stops at the first 200', async () => {
    const failures = 6;
    const speed = 400;
    const { url, received } = await endpoint((n) => (n <= failures ? 500 : 200));
    const result = await run(['send', url, '--retry', '--speed', String(speed)]);
    expect(result.code).toBe(0);
    expect(received).toHaveLength(failures + 1);
    const gaps: number[] = [];
    for (let retry = 1; retry <= failures; retry++) {
      const gap = received[retry]!.at - received[retry - 1]!.at;
      const expected = retryDelay(retry) / speed; // 75 ms five times, then 150 ms
      expect(gap).toBeGreaterThanOrEqual(expected - 2);
      gaps.push(gap - expected);
      expect(result.stdout).toContain(`retry ${retry} in ${retry <= 5 ? '30 s' : '1 min'} (×${speed}: ${expected} ms)`);
    }
    // Never much longer either: the median excess over the schedule, so that one attempt slowed by a busy machine
    // (an excess of 500 ms was seen once) does not decide; a wait that ignored --speed would exceed it by seconds.
    expect(gaps.sort((a, b) => a - b)[failures >> 1]).toBeLessThan(400);
    // Each attempt is signed afresh and verifies on its own.
    for (const delivery of received) expect(await verifies(delivery)).toBe(true);
    expect(result.stdout).toContain('attempt 7: 200 OK');
    expect(result.stdout).not.toContain('attempt 8');
  });

  it('names where a redirect points, which the service does not follow', async () => {
    const { url, received } = await endpoint(() => 302);
    const result = await run(['send', url]);
    expect(result.stdout).toContain('attempt 1: 302 Found');
    expect(result.stdout).toContain(
      'redirected to /login: the service does not follow redirects; register (and send to) the final URL',
    );
    expect(received).toHaveLength(1);
    expect(result.code).toBe(1);
  });

  it('gives up after --max-attempts with exit 1', async () => {
    const { url, received } = await endpoint(() => 503);
    const result = await run(['send', url, '--retry', '--speed', '1000', '--max-attempts', '3']);
    expect(result.code).toBe(1);
    expect(received).toHaveLength(3);
    expect(result.stdout).toContain('0 of 1 delivery answered 200 OK');
  });

  it('exits 1 when the endpoint refuses or cannot be reached', async () => {
    const { url } = await endpoint(() => 401);
    const refused = await run(['send', url]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('attempt 1: 401');
    server!.close();
    const unreachable = await run(['send', url]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stdout).toContain(
      `no answer (ECONNREFUSED): is the receiver listening at ${new URL(url).host}?`,
    );
  });

  it('takes a redirect as the answer, as the service does: a 302 to a page that answers 200 is not delivered', async () => {
    let followed = 0;
    server = createServer((req, res) => {
      req.resume();
      if (req.url === '/login') {
        followed++;
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>');
      } else {
        req.on('end', () => res.writeHead(302, { location: '/login' }).end());
      }
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const result = await run(['send', `http://127.0.0.1:${port}/webhooks/payments`]);
    expect(result.stdout).toContain('attempt 1: 302');
    expect(result.stdout).toContain('0 of 1 delivery answered 200 OK');
    expect(result.code).toBe(1);
    expect(followed).toBe(0);
  });

  it('signs stale deliveries with --age and a fixed --timestamp', async () => {
    const { url, received } = await endpoint(() => 200);
    const before = Date.now();
    await run(['send', url, '--age', '600000']);
    expect(Number(received[0]!.headers['x-api-timestamp'])).toBeLessThanOrEqual(before - 600_000 + 5_000);
    await run(['send', url, '--timestamp', '1763712000000']);
    expect(received[1]!.headers['x-api-timestamp']).toBe('1763712000000');
  });

  it('signs a delivery that starts after others finished when it starts, so it is never stale', async () => {
    // One at a time, each answered after 800 ms: a delivery that reused the first signature would carry a
    // timestamp from before the first one arrived. Judged by order, not by a time bound a loaded machine can miss.
    const { url, received } = await endpoint(() => 200, 800);
    const result = await run(['send', url, '--repeat', '3', '--concurrency', '1']);
    expect(result.code).toBe(0);
    expect(received).toHaveLength(3);
    for (const [index, delivery] of received.entries()) {
      // Signed after the one before it arrived (and was answered), not when the first one was.
      if (index > 0)
        expect(Number(delivery.headers['x-api-timestamp'])).toBeGreaterThanOrEqual(received[index - 1]!.at);
      expect(await verifies(delivery)).toBe(true);
    }
    expect(new Set(received.map((r) => r.headers['signature'])).size).toBe(3);
    expect(new Set(received.map((r) => r.body)).size).toBe(1);
  });

  it('does not count a 200 whose body never arrives', async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        // Headers now, the body never.
        res.writeHead(200, { 'content-type': 'application/json' });
        res.flushHeaders();
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    // Long enough for the headers to arrive on a loaded machine; the body never does.
    const result = await run(['send', `http://127.0.0.1:${port}/webhooks/payments`, '--timeout', '2000']);
    expect(result.stdout).toContain('attempt 1: 200 OK, but the body did not arrive (TimeoutError)');
    expect(result.stdout).toContain('0 of 1 delivery answered 200 OK');
    expect(result.code).toBe(1);
    server.closeAllConnections();
  });

  it("refuses a --timeout longer than fetch's own 5-minute limit", async () => {
    const result = await run(['send', 'http://127.0.0.1:9/x', '--timeout', '300001']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--timeout must be at most 300000 ms (5 min)');
    // The largest one is accepted (the port refuses at once).
    const largest = await run(['send', 'http://127.0.0.1:9/x', '--timeout', '300000']);
    expect(largest.code).toBe(1);
  });

  it('names the cause when a fetch fails without a system error code', async () => {
    // Port 6000 is one fetch refuses to connect to ("bad port").
    const result = await run(['send', 'http://127.0.0.1:6000/webhooks/payments']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'no answer (bad port): fetch refuses this port by policy (as browsers do): run the receiver on another port',
    );
  });

  it('--webhook-url signs for the registered host, path and query while delivering to the target', async () => {
    const { url, received } = await endpoint(() => 200);
    const registered = 'https://shop.example.kg/api/webhooks/payments?shop=17';
    // A fragment on the target is never sent; the registered query still is.
    const result = await run(['send', `${url}#section?not-a-query`, '--webhook-url', registered]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(received).toHaveLength(1);
    const delivery = received[0]!;
    // Delivered to the target (its own Host and path; the registered query, which the target lacks)…
    expect(delivery.url).toBe('/webhooks/payments?shop=17');
    expect(delivery.headers.host).toBe(new URL(url).host);
    // …and verifiable by a receiver that pins the registered URL, as the README's quick start does.
    const request = { method: 'POST', url: delivery.url, headers: delivery.headers, body: delivery.body };
    const pinned = await verifyWebhook(request, { publicKeys: TEST_KEY_PAIR.publicKey, webhookUrl: registered });
    expect(pinned).toMatchObject({ ok: true });
    const asReceived = await verifyWebhook(request, { publicKeys: TEST_KEY_PAIR.publicKey });
    expect(asReceived).toMatchObject({ ok: false, error: { code: 'SIGNATURE_MISMATCH' } });
    expect(result.stdout).toContain(`signed for ${registered}`);
  });

  it('refuses a --webhook-url no receiver takes as its webhookUrl: a query parameter named twice (exit 2)', async () => {
    const { url, received } = await endpoint(() => 200);
    const result = await run(['send', url, '--webhook-url', 'https://shop.example.kg/hook?a=1&a=1']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'payhook send: --webhook-url: webhookUrl names a query parameter more than once ("a")',
    );
    expect(received).toHaveLength(0);
    // A target URL alone is signed as it is: an allowAnyHost receiver reads the query as sent.
    const target = await run(['send', `${url}?a=1&a=1`]);
    expect(target.code).toBe(0);
    expect(received).toHaveLength(1);
  });

  it('joins the values of a --header given twice with ", ", and signs what it sends', async () => {
    const { url, received } = await endpoint(() => 200);
    const result = await run(['send', url, '--header', 'x-api-a=1', '--header', 'X-Api-A=2', '--header', 'x-api-b=3']);
    expect(result.code).toBe(0);
    expect(received[0]!.headers['x-api-a']).toBe('1, 2');
    expect(received[0]!.headers['x-api-b']).toBe('3');
    expect(await verifies(received[0]!)).toBe(true);
  });

  it('keeps --host working next to --webhook-url (it replaces the signed Host only)', async () => {
    const { url, received } = await endpoint(() => 200);
    await run(['send', url, '--webhook-url', 'https://shop.example.kg/hooks/pay', '--host', 'pay.example.kg']);
    const delivery = received[0]!;
    const request = { method: 'POST', url: delivery.url, headers: delivery.headers, body: delivery.body };
    const webhookUrl = 'https://pay.example.kg/hooks/pay';
    expect(await verifyWebhook(request, { publicKeys: TEST_KEY_PAIR.publicKey, webhookUrl })).toMatchObject({
      ok: true,
    });
  });

  it.each([
    ['web', (body: Record<string, any>) => body['data'].webhookUrl as unknown],
    ['signed-body', (body: Record<string, any>) => body['fields'].webhook_url as unknown],
  ] as const)('--variant %s carries the registered URL, else the target URL, in the body', async (variant, pick) => {
    const { url, received } = await endpoint(() => 200);
    await run(['send', url, '--variant', variant]);
    expect(pick(JSON.parse(received[0]!.body))).toBe(url);
    const registered = 'https://pay.example.kg/webhooks/payments';
    await run(['send', url, '--variant', variant, '--webhook-url', registered]);
    expect(pick(JSON.parse(received[1]!.body))).toBe(registered);
  });

  // What a receiver that verifies the key answers: the control (request 1) for its age, forgeries for their signature.
  const verifying = (n: number) => (n === 1 ? 'TIMESTAMP_OUT_OF_WINDOW' : 'SIGNATURE_MISMATCH');

  it('--tamper changes the amount after signing, so the receiver must refuse the delivery', async () => {
    const { url, received } = await endpoint(() => 401, 0, verifying);
    const result = await run(['send', url, '--amount', '5', '--tamper', '--retry', '--speed', '1000']);
    // The receiver refused it, as it must: that is the check passing, and a refusal is not retried.
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('tampered');
    expect(result.stdout).toContain('1 of 1 delivery refused with 401 SIGNATURE_MISMATCH, as a receiver must');
    expect(received).toHaveLength(2);
    // First the control: the same delivery unforged, signed for real but dated a day ago.
    const control = received[0]!;
    expect((JSON.parse(control.body) as { amount: number }).amount).toBe(5);
    const signedAt = Number(control.headers['x-api-timestamp']);
    expect(Date.now() - signedAt).toBeGreaterThan(86_000_000);
    const atItsTime = await verifyWebhook(
      { method: 'POST', url: control.url, headers: control.headers, body: control.body },
      { publicKeys: TEST_KEY_PAIR.publicKey, now: signedAt },
    );
    expect(atItsTime.ok).toBe(true);
    const body = JSON.parse(received[1]!.body) as { amount: number };
    expect(body.amount).toBe(500);
    expect(await verifies(received[1]!)).toBe(false);
  });

  it('for URL_MISMATCH, names the URL sent to when it has no query, and a proxy or router when send sent one', async () => {
    const { url, received } = await endpoint(() => 401, 0, 'URL_MISMATCH');
    const bare = await run(['send', url]);
    expect(bare.stdout).toContain('likely cause (URL_MISMATCH): the URL you send to lacks a query parameter');
    // --webhook-url's query is added to the URL sent to: it left here, so something on the way dropped or changed it.
    const withQuery = await run(['send', url, '--webhook-url', 'https://shop.example.kg/webhooks/payments?shop=7']);
    expect(received[1]?.url).toBe('/webhooks/payments?shop=7');
    expect(withQuery.stdout).toMatch(
      /likely causes \(URL_MISMATCH\), most likely first:\n {4}- the query sent did not reach payhook as sent: a proxy or router/,
    );
    // Sent with another value than the one signed for: that difference comes first.
    const otherShop = await run([
      'send',
      `${url}?shop=8`,
      '--webhook-url',
      'https://shop.example.kg/webhooks/payments?shop=7',
    ]);
    expect(received[2]?.url).toBe('/webhooks/payments?shop=8');
    expect(otherShop.stdout).toMatch(
      /likely causes \(URL_MISMATCH\), most likely first:\n {4}- the URL you send to lacks a query parameter/,
    );
  });

  it('for a receiver pinned to a query --webhook-url lacks, names --webhook-url, not the URL sent to or the key', async () => {
    const registered = 'https://shop.example.kg/webhooks/payments';
    const lacking = await endpoint(() => 401, 0, 'URL_MISMATCH');
    const first = await run(['send', lacking.url, '--webhook-url', registered]);
    expect(first.stdout).toContain(
      `likely cause (URL_MISMATCH): --webhook-url (${registered}) lacks a query parameter`,
    );
  });

  // A real payhook receiver pinned to ?shop=7: its answer names the parameter, and send reads it.
  it('for a URL_MISMATCH naming a parameter never sent, names --webhook-url first, never a proxy', async () => {
    const handler = createNodeWebhookHandler({
      publicKeys: TEST_KEY_PAIR.publicKey,
      webhookUrl: 'https://shop.example.kg/webhooks/payments?shop=7',
      onPayment: () => {},
      logger: false,
    });
    server = createServer((req, res) => void handler(req, res));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/payments`;
    for (const args of [
      [url, '--webhook-url', 'https://shop.example.kg/webhooks/payments?tenant=7'],
      [`${url}?x=1`, '--webhook-url', 'https://shop.example.kg/webhooks/payments'],
    ]) {
      const result = await run(['send', ...args]);
      expect(result.stdout, args.join(' ')).toMatch(/likely cause \(URL_MISMATCH\): --webhook-url \(https:/);
      expect(result.stdout, args.join(' ')).not.toContain('did not reach payhook');
    }
  });

  // A receiver that refuses every delivery (without the test key, another webhookUrl, a proxy's 401) would refuse
  // the forgery SIGNATURE_MISMATCH too: the control shows it, and no forgery is sent.
  it.each([['SIGNATURE_MISMATCH'], ['URL_MISMATCH']])(
    '--tamper stops after a control the receiver did not refuse for its age (code %s)',
    async (code) => {
      const { url, received } = await endpoint(() => 401, 0, code);
      const result = await run(['send', url, '--tamper']);
      expect(result.stdout).toContain('✗ the control was not refused for its age');
      // The control was not forged: its refusal is blamed on the key or the URL, never on --tamper.
      expect(result.stdout).not.toContain('expected: --tamper');
      expect(received).toHaveLength(1);
      expect(result.code).toBe(1);
    },
  );

  // A receiver not built on payhook may verify correctly and answer a bare 401: its refusal of the control says
  // neither that it verifies nor that it does not.
  it.each([[undefined], ['invalid_signature']])(
    '--tamper says it cannot tell when the control is refused 401 without a payhook code (%s), and sends no forgery',
    async (code) => {
      const { url, received } = await endpoint(() => 401, 0, code);
      const result = await run(['send', url, '--tamper']);
      expect(result.stdout).toContain('✗ the control was refused 401 without a payhook code');
      expect(result.stdout).toContain('cannot be told');
      expect(result.stdout).not.toContain('does not verify deliveries');
      expect(received).toHaveLength(1);
      expect(result.code).toBe(1);
    },
  );

  // No code and no cause to print: the message names the status instead of "the cause above".
  it.each([[500], [302]])('--tamper names the status when the control is answered %i', async (status) => {
    const { url, received } = await endpoint(() => status);
    const result = await run(['send', url, '--tamper']);
    expect(result.stdout).toContain('✗ the control was not refused for its age');
    expect(result.stdout).toContain(`find why it answered ${status}`);
    if (status === 302) expect(result.stdout).toContain('redirected to /login: the service does not follow redirects');
    expect(result.stdout).not.toContain('fix the cause above');
    expect(received).toHaveLength(1);
    expect(result.code).toBe(1);
  });

  it('says to send http:// when an https:// URL reaches a plain HTTP receiver', async () => {
    const { url, received } = await endpoint(() => 200);
    const result = await run(['send', url.replace('http://', 'https://')]);
    expect(result.stdout).toContain('speak plain HTTP? Then send to an http:// URL');
    expect(received).toHaveLength(0);
    expect(result.code).toBe(1);
  });

  it('shows a long body cut short on its summary line', async () => {
    const { url, received } = await endpoint(() => 200);
    const result = await run(['send', url, '--field', `note=${'x'.repeat(5_000)}`]);
    expect(result.code).toBe(0);
    const line = result.stdout.split('\n').find((text) => text.startsWith('  body: '))!;
    expect(line.length).toBeLessThan(2_100);
    expect(line).toContain(`… (${received[0]!.body.length} characters in all)`);
  });

  it('reads only the start of a huge answer and closes the connection, signed or replayed as captured', async () => {
    // 64 MiB, sent as fast as the client reads it: reading it all is what must not happen.
    const total = 64 * 1024 * 1024;
    const answers: { sent: number; finished: boolean }[] = [];
    server = createServer((req, res) => {
      const answer = { sent: 0, finished: false };
      answers.push(answer);
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"ok":true,"padding":"');
        const chunk = Buffer.alloc(65_536, 'x');
        const pump = (): void => {
          while (answer.sent < total) {
            answer.sent += chunk.byteLength;
            if (!res.write(chunk)) {
              res.once('drain', pump);
              return;
            }
          }
          answer.finished = true;
          res.end('"}');
        };
        pump();
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/payments`;
    const capture = join(await mkdtemp(join(tmpdir(), 'payhook-send-')), 'capture.http');
    await writeFile(capture, 'POST /webhooks/payments HTTP/1.1\nHost: shop.example.kg\n\n{"id":"1"}\n');
    for (const args of [
      ['send', url],
      ['send', '--request', capture, '--to', url],
    ]) {
      const result = await run(args);
      expect(result.stdout, args.join(' ')).toMatch(/attempt 1: 200 OK \{"ok":true,"padding":"x{178} \(\d+ ms\)/);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    }
    expect(answers).toHaveLength(2);
    for (const answer of answers) {
      // The client closed the connection after a few KB: only what the socket buffers took was sent.
      expect(answer.finished).toBe(false);
      expect(answer.sent).toBeLessThan(total / 4);
    }
  });

  // A capture replayed as captured carries its own Host: TLS is still with the --to host (its name sent and its
  // certificate checked), not with the captured Host's. tls/: a certificate for localhost and 127.0.0.1, to 2126.
  it('names a receiver that speaks https only among the causes when plain HTTP sent to it got the connection closed', async () => {
    const tls = (name: string) => fileURLToPath(new URL(`tls/${name}`, import.meta.url));
    const secure = createHttpsServer(
      { key: await readFile(tls('localhost.key')), cert: await readFile(tls('localhost.crt')) },
      (_req, res) => res.end(),
    );
    await new Promise<void>((resolve) => secure.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = secure.address() as AddressInfo;
      const target = `http://127.0.0.1:${port}/webhooks/payments`;
      const capture = join(await mkdtemp(join(tmpdir(), 'payhook-send-')), 'capture.http');
      await writeFile(capture, 'POST /webhooks/payments HTTP/1.1\nHost: shop.example.kg\n\n{"id":"1"}\n');
      // fetch for a new delivery, node:http for a capture replayed as captured.
      for (const args of [[target], ['--request', capture, '--to', target]]) {
        const result = await run(['send', ...args]);
        expect(result.stdout, args[0]).toContain(
          `the connection closed before any answer: the receiver at 127.0.0.1:${port} crashed or dropped the request (see its log), or it speaks https only (then send to an https:// URL)`,
        );
        expect(result.code).toBe(1);
      }
    } finally {
      secure.close();
    }
  });

  it('replays a capture to an https receiver whose name is not the captured Host', async () => {
    const tls = (name: string) => fileURLToPath(new URL(`tls/${name}`, import.meta.url));
    const hosts: (string | undefined)[] = [];
    const secure = createHttpsServer(
      { key: await readFile(tls('localhost.key')), cert: await readFile(tls('localhost.crt')) },
      (req, res) => {
        hosts.push(req.headers.host);
        req.resume();
        req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
      },
    );
    await new Promise<void>((resolve) => secure.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = secure.address() as AddressInfo;
      const capture = join(await mkdtemp(join(tmpdir(), 'payhook-send-')), 'capture.http');
      await writeFile(capture, 'POST /webhooks/payments HTTP/1.1\nHost: shop.example.kg\n\n{"id":"1"}\n');
      for (const host of ['localhost', '127.0.0.1']) {
        const result = await run(['send', '--request', capture, '--to', `https://${host}:${port}/webhooks/payments`], {
          env: { NODE_EXTRA_CA_CERTS: tls('localhost.crt') },
        });
        expect(result.stdout, host).toMatch(/attempt 1: 200 OK \{"ok":true\}/);
        expect(result.code).toBe(0);
      }
      expect(hosts).toEqual(['shop.example.kg', 'shop.example.kg']);
    } finally {
      secure.close();
    }
  });

  it('--tamper fails when the receiver accepts the control dated a day ago, or the forgery', async () => {
    const stale = await endpoint(() => 200);
    const accepted = await run(['send', stale.url, '--tamper']);
    expect(accepted.stdout).toContain('✗ the receiver ACCEPTED a delivery dated a day ago');
    expect(stale.received).toHaveLength(1);
    expect(accepted.code).toBe(1);
    server?.close();
    const forged = await endpoint((n) => (n === 1 ? 401 : 200), 0, verifying);
    const result = await run(['send', forged.url, '--tamper']);
    expect(result.stdout).toContain('✗ the receiver ACCEPTED a forged delivery: it must answer 401');
    expect(result.stdout).toContain('0 of 1 delivery refused with 401 SIGNATURE_MISMATCH, as a receiver must');
    expect(result.code).toBe(1);
  });

  // Exit 0 for an insecure receiver would make `payhook send --tamper && echo ok` pass exactly when it should not.
  it.each([[['--age', '600000']], [['--age', '-400000']]])(
    'fails loudly when the receiver accepts a delivery it must refuse (%j)',
    async (flags) => {
      const { url } = await endpoint(() => 200);
      const result = await run(['send', url, ...flags]);
      // Old or future-dated alike: "stale" would misname a date ahead.
      expect(result.stdout).toContain(
        '✗ the receiver ACCEPTED a delivery dated outside the 5-minute window: it must answer 401',
      );
      expect(result.stdout).toContain('0 of 1 delivery refused with 401 TIMESTAMP_OUT_OF_WINDOW, as a receiver must');
      expect(result.code).toBe(1);
    },
  );

  // A 401 for another reason would refuse a genuine delivery too: it shows nothing about the check asked for,
  // so `payhook send --age 600000 && echo ok` must not pass against a receiver that refuses everything.
  it.each([
    [['--age', '600000'], undefined, 'the answer names no check'],
    [['--age', '600000'], 'SIGNATURE_MISMATCH', 'SIGNATURE_MISMATCH would refuse this delivery unforged and fresh too'],
    [['--tamper'], 'URL_MISMATCH', 'URL_MISMATCH would refuse this delivery unforged and fresh too'],
    [['--tamper', '--age', '600000'], 'TIMESTAMP_OUT_OF_WINDOW', 'the receiver judged the date you set first'],
  ])('fails when a delivery it must refuse is refused for another reason (%j, code %s)', async (flags, code, why) => {
    // The control, when --tamper sends one, is refused for its age, as it must be.
    const { url } = await endpoint(
      () => 401,
      0,
      (n) => (flags[0] === '--tamper' && n === 1 ? 'TIMESTAMP_OUT_OF_WINDOW' : code),
    );
    const result = await run(['send', url, ...flags]);
    expect(result.stdout).toContain(`✗ refused, but not with`);
    expect(result.stdout).toContain(why);
    expect(result.stdout).toMatch(/0 of 1 delivery refused with 401 \w+, as a receiver must/);
    expect(result.code).toBe(1);
  });

  it('explains a --timestamp refused on a retry by the age the date has then, not at the start', async () => {
    // Dated 288 s ago: inside the window at the first attempt (answered 500), past it at the retry 15 s later. The
    // CLI refuses a date within 5 s of the window's edge at its start, so this leaves 7 s for it to start (294 s, with
    // a retry 7.5 s later, left 1 s, which a loaded machine took: the CLI refused the date, printing nothing here).
    const { url } = await endpoint(
      (n) => (n === 1 ? 500 : 401),
      0,
      (n) => (n === 1 ? undefined : 'TIMESTAMP_OUT_OF_WINDOW'),
    );
    const dated = String(Date.now() - 288_000);
    const result = await run(['send', url, '--timestamp', dated, '--retry', '--speed', '2', '--max-attempts', '2'], {
      timeoutMs: 40_000,
    });
    expect(result.stdout).toContain('expected: --age or --timestamp dated it outside the 5-minute window');
    expect(result.stdout).not.toContain("the receiver's toleranceMs is smaller");
  }, 45_000);

  it('passes a stale delivery refused for its timestamp', async () => {
    const { url } = await endpoint(() => 401, 0, 'TIMESTAMP_OUT_OF_WINDOW');
    const result = await run(['send', url, '--age', '600000']);
    expect(result.stdout).toContain('1 of 1 delivery refused with 401 TIMESTAMP_OUT_OF_WINDOW, as a receiver must');
    expect(result.code).toBe(0);
  });

  it('names what is wrong with a port out of range or an age before 1970', async () => {
    const port = await run(['send', 'http://127.0.0.1:99999/x']);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('a port up to 65535');
    const age = await run(['send', 'http://127.0.0.1:9/x', '--age', '99999999999999']);
    expect(age.code).toBe(2);
    expect(age.stderr).toContain('--age 99999999999999 dates the delivery before 1970');
  });

  // Stands for a timestamp 295.5 s ago, taken when the case runs.
  const NEAR_EDGE = '<295.5 s ago>';
  // One test per case: thirty CLI starts in one test took more than 20 s at load 10.
  it.each(
    [
      ['send'],
      ['send', 'not-a-url'],
      ['send', 'ftp://127.0.0.1/x'],
      ['send', 'http://127.0.0.1:9/x', '--variant', 'nope'],
      ['send', 'http://127.0.0.1:9/x', '--amount', 'lots'],
      ['send', 'http://127.0.0.1:9/x', '--amount', '0x10'],
      // A value given twice: which one was meant? (parseArgs alone keeps the last.)
      ['send', 'http://127.0.0.1:9/x', '--status', 'FAILED', '--status', 'SUCCEEDED'],
      ['send', 'http://127.0.0.1:9/x', '--age', '300020'],
      ['send', 'http://127.0.0.1:9/x', '--age', '-298000'],
      // 295.5 s ago when written: the CLI reads its clock after it starts, which only moves the date further into
      // the 295–305 s band, so a slow start (up to 9.5 s) cannot carry it out as 302 s did (3 s under load in CI).
      ['send', 'http://127.0.0.1:9/x', '--timestamp', NEAR_EDGE],
      ['send', 'http://127.0.0.1:9/x', '--repeat', '0'],
      ['send', 'http://127.0.0.1:9/x', '--field', 'novalue'],
      ['send', 'http://127.0.0.1:9/x', '--body', '/nonexistent.json'],
      ['send', 'http://127.0.0.1:9/x', '--key', '/nonexistent.pem'],
      ['send', 'http://127.0.0.1:9/x', '--timestamp', 'soon'],
      ['send', 'http://127.0.0.1:9/x', 'extra'],
      ['send', 'http://127.0.0.1:9/x', '--webhook-url', '/webhooks/payments'],
      ['send', 'http://127.0.0.1:9/x', '--webhook-url', 'ftp://shop.example.kg/x'],
      // A value HTTP strips (signed with the whitespace, it would not verify), or a header fetch cannot send.
      ['send', 'http://127.0.0.1:9/x', '--header', 'x-api-client= c1'],
      ['send', 'http://127.0.0.1:9/x', '--header', 'x-api-client=c1 '],
      ['send', 'http://127.0.0.1:9/x', '--header', 'bad name=1'],
      ['send', 'http://127.0.0.1:9/x', '--header', 'x-api-a=€'],
      // Control characters: fetch refuses them too (they passed a check with new Headers()).
      ['send', 'http://127.0.0.1:9/x', '--header', 'x-api-note=a\u0001b'],
      ['send', 'http://127.0.0.1:9/x', '--header', 'x-api-note=a\u007fb'],
      // fetch refuses a URL with credentials.
      ['send', 'http://u:p@127.0.0.1:9/x'],
      // Headers payhook send sets itself: a value given here would be overwritten or contradict what it signs.
      ['send', 'http://127.0.0.1:9/x', '--header', 'Host=evil.example'],
      ['send', 'http://127.0.0.1:9/x', '--header', 'signature=bogus'],
      ['send', 'http://127.0.0.1:9/x', '--header', 'X-Api-Timestamp=123'],
      ['send', 'http://127.0.0.1:9/x', '--header', 'content-length=5'],
      ['send', 'http://127.0.0.1:9/x', '--header', 'transfer-encoding=chunked'],
      ['send', 'http://127.0.0.1:9/x', '--header', 'Connection=upgrade'],
      ['send', 'http://127.0.0.1:9/x', '--header', 'expect=100-continue'],
      // They only tell --retry how to retry.
      ['send', 'http://127.0.0.1:9/x', '--max-attempts', '3'],
      ['send', 'http://127.0.0.1:9/x', '--speed', '100'],
    ].map((args) => ({ line: args.join(' '), args })),
  )('refuses bad usage with exit 2: $line', async ({ args }) => {
    const result = await run(args.map((arg) => (arg === NEAR_EDGE ? String(Date.now() - 295_500) : arg)));
    expect(result.code).toBe(2);
  });
});
