import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  explainSignatureMismatch,
  explainVerificationFailure,
  type ExplainRequest,
  type VerificationDiagnosis,
} from '../src/explain/index.js';
import { createNodeWebhookHandler, type WebhookHandlerOptions } from '../src/node/index.js';
import {
  createTestWebhook,
  generateTestKeyPair,
  signWebhook,
  TEST_KEY_PAIR,
  type SignedWebhook,
} from '../src/testing/index.js';
import { fixtures } from './conformance/fixtures.js';
import { verifyWebhook } from '../src/verify-webhook.js';

const stranger = fixtures.keys['stranger-2048']!;
const NOW = 1763712000000;

async function delivery(
  url: string,
  options: { host?: string; privateKey?: string; headers?: Record<string, string> } = {},
) {
  return signWebhook(createTestWebhook({ now: NOW }), {
    url,
    timestamp: NOW,
    ...(options.host !== undefined ? { host: options.host } : {}),
    ...(options.privateKey !== undefined ? { privateKey: options.privateKey } : {}),
    ...(options.headers !== undefined ? { headers: options.headers } : {}),
  });
}

/** The request as the merchant's app sees it after a proxy/router changed it. */
function received(
  signed: { headers: Readonly<Record<string, string>>; body: string },
  url: string,
  headers: Record<string, string> = {},
): ExplainRequest {
  return { method: 'POST', url, headers: { ...signed.headers, ...headers }, body: signed.body };
}

const testKeys = { publicKeys: TEST_KEY_PAIR.publicKey, now: NOW };

/**
 * A WEB delivery that names `registered` as its callback URL, sent there, whose body a parser then changed (a
 * reviver turned the amount into text): no URL makes it verify.
 */
async function revivedWebDelivery(registered: string, headers: Record<string, string> = {}): Promise<ExplainRequest> {
  const signed = await signWebhook(createTestWebhook({ variant: 'web', now: NOW, webhookUrl: registered }), {
    url: registered,
    timestamp: NOW,
  });
  const { pathname, search } = new URL(registered);
  const revived = signed.body.replace(/"amount":(\d+)/, '"amount":"$1.00"');
  expect(revived).not.toBe(signed.body);
  return { ...received(signed, pathname + search, headers), body: revived };
}

describe('explainVerificationFailure', () => {
  it('reports a delivery that verifies as ok, with no changes', async () => {
    const signed = await delivery('https://shop.example.kg/webhooks/payments');
    const diagnosis = await explainVerificationFailure(signed, testKeys);
    expect(diagnosis).toMatchObject({ ok: true, code: null, signatureVerifies: true, changes: [], fix: null });
    expect(diagnosis.canonical).toBe(signed.canonical);
  });

  it('names the Host the service signed when a proxy rewrote it, and the fix', async () => {
    const signed = await delivery('https://shop.example.kg/webhooks/payments');
    const viaProxy = await explainVerificationFailure(
      received(signed, '/webhooks/payments', { host: 'internal:8080', 'x-forwarded-host': 'shop.example.kg' }),
      testKeys,
    );
    expect(viaProxy.ok).toBe(false);
    expect(viaProxy.code).toBe('SIGNATURE_MISMATCH');
    expect(viaProxy.changes).toEqual([{ part: 'host', received: 'internal:8080', expected: 'shop.example.kg' }]);
    expect(viaProxy.message).toContain(
      'signature would verify with Host `shop.example.kg` (your request has `internal:8080`)',
    );
    expect(viaProxy.fix).toContain('trustForwardedHeaders');
    expect(viaProxy.verifiedCanonical).toBe(signed.canonical);
    expect(viaProxy.canonical).toContain('host:internal:8080');
  });

  it('says that the request has no x-api-timestamp at all when no cause makes it verify', async () => {
    const signed = await delivery('https://shop.example.kg/webhooks/payments');
    const { 'x-api-timestamp': _dropped, ...headers } = signed.headers;
    const diagnosis = await explainVerificationFailure(
      { method: 'POST', url: '/webhooks/payments', headers, body: signed.body },
      testKeys,
    );
    expect(diagnosis.code).toBe('SIGNATURE_MISMATCH');
    expect(diagnosis.message).toContain(
      'the request has no `x-api-timestamp` header, which the service always sends and signs',
    );
    // The request's own Host is the one signed: a rewrite is one possibility, not the verdict.
    expect(diagnosis.message).toContain('may not have been tried (if a proxy rewrote Host');
  });

  // Host, path and query come from webhookUrl when it is set: the request's own are not what differs.
  it('says "your webhookUrl has" when webhookUrl is set, and keeps its scheme in the fix', async () => {
    const signed = await delivery('http://127.0.0.1:3101/webhooks/payments');
    const diagnosis = await explainVerificationFailure(received(signed, '/webhooks/payments'), {
      ...testKeys,
      webhookUrl: 'http://127.0.0.1:3000/webhooks/payments',
    });
    expect(diagnosis.changes).toEqual([{ part: 'host', received: '127.0.0.1:3000', expected: '127.0.0.1:3101' }]);
    expect(diagnosis.message).toContain(
      'signature would verify with Host `127.0.0.1:3101` (your webhookUrl has `127.0.0.1:3000`)',
    );
    // The host came from the request alone: not offered as the webhookUrl to set.
    expect(diagnosis.fix).not.toContain('http://127.0.0.1:3101');
    // Given as the registered URL, it is: with its own scheme.
    const given = await explainVerificationFailure(received(signed, '/webhooks/payments'), {
      ...testKeys,
      webhookUrl: 'http://127.0.0.1:3000/webhooks/payments',
      registeredUrl: 'http://127.0.0.1:3101/webhooks/payments',
    });
    expect(given.fix).toContain("set `webhookUrl: 'http://127.0.0.1:3101/webhooks/payments'`");
    expect(given.fix).not.toContain('https://');
  });

  // The pinned webhookUrl keeps another merchant's deliveries (one key signs for all) out: a host only the request
  // names is never offered as the webhookUrl to set; the merchant is sent to the URL registered in the dashboard.
  it('with webhookUrl set, never offers a host or URL that only the request named as the webhookUrl to set', async () => {
    const signed = await delivery('https://other.example/webhooks/payments');
    const pinned = { ...testKeys, webhookUrl: 'https://shop.example/webhooks/payments' };
    for (const headers of [{ host: 'other.example' }, { host: 'shop.example', 'x-forwarded-host': 'other.example' }]) {
      const diagnosis = await explainVerificationFailure(received(signed, '/webhooks/payments', headers), pinned);
      expect(diagnosis.changes).toEqual([{ part: 'host', received: 'shop.example', expected: 'other.example' }]);
      expect(diagnosis.message).toContain('signature would verify with Host `other.example`');
      expect(diagnosis.fix).toBe(
        'this delivery was signed for another URL (your `webhookUrl` has the host `shop.example`, but the service ' +
          "signed `other.example`): one for another endpoint (another merchant's, say), rightly refused, or your " +
          "`webhookUrl` is not the URL registered in the service's dashboard: compare the two, and if they differ " +
          "set `webhookUrl` to the dashboard's URL (never to this delivery's, unless it is the dashboard's)",
      );
    }
    // A path or query guessed from the request is no more the merchant's: another tenant on one host.
    const tenant = await delivery('https://shop.example/webhooks/payments?shop=8');
    const values = await explainVerificationFailure(received(tenant, '/webhooks/payments?shop=8'), {
      ...pinned,
      webhookUrl: 'https://shop.example/webhooks/payments?shop=7',
    });
    expect(values.changes).toEqual([{ part: 'query', received: 'shop=7', expected: 'shop=8' }]);
    expect(values.fix).toContain('this delivery was signed for another URL');
    expect(values.fix).not.toContain("set `webhookUrl` to 'https://");
  });

  it("takes the fix's scheme from X-Forwarded-Proto for a host a proxy forwarded, not from an http: registered URL", async () => {
    const signed = await delivery('https://shop.example.kg/webhooks/payments');
    const request = received(signed, '/webhooks/payments', {
      host: 'localhost:38501',
      'x-forwarded-host': 'shop.example.kg',
      'x-forwarded-proto': 'https',
    });
    const diagnosis = await explainVerificationFailure(request, {
      ...testKeys,
      registeredUrl: 'http://localhost:38501/webhooks/payments',
    });
    expect(diagnosis.changes).toEqual([{ part: 'host', received: 'localhost:38501', expected: 'shop.example.kg' }]);
    expect(diagnosis.fix).toContain("set `webhookUrl: 'https://shop.example.kg/webhooks/payments'`");
    // A proxy's inner hop (X-Forwarded-Proto: http) does not change the scheme of the registered URL's own host.
    const inner = await explainVerificationFailure(received(signed, '/payments', { 'x-forwarded-proto': 'http' }), {
      ...testKeys,
      registeredUrl: 'https://shop.example.kg/payments',
    });
    expect(inner.changes).toEqual([{ part: 'path', received: '/payments', expected: '/webhooks/payments' }]);
    expect(inner.fix).toContain("set `webhookUrl: 'https://shop.example.kg/webhooks/payments'`");
    // The proxy's header in another letter case counts the same.
    const upper = await explainVerificationFailure(
      received(signed, '/webhooks/payments', {
        host: 'localhost:38501',
        'x-forwarded-host': 'shop.example.kg',
        'x-forwarded-proto': 'HTTPS',
      }),
      { ...testKeys, registeredUrl: 'http://localhost:38501/webhooks/payments' },
    );
    expect(upper.fix).toContain("set `webhookUrl: 'https://shop.example.kg/webhooks/payments'`");
  });

  it('finds the signed Host from the callback URL a WEB delivery carries, with no proxy header', async () => {
    const body = createTestWebhook({ variant: 'web', now: NOW });
    const signed = await signWebhook(body, { url: 'https://shop.example.kg/webhooks/payments', timestamp: NOW });
    const diagnosis = await explainVerificationFailure(
      received(signed, '/webhooks/payments', { host: 'internal:8080' }),
      testKeys,
    );
    expect(diagnosis.changes).toEqual([{ part: 'host', received: 'internal:8080', expected: 'shop.example.kg' }]);
    expect(diagnosis.fix).toContain(
      "set `webhookUrl: 'https://shop.example.kg/webhooks/payments'`, the URL the service signed: something in front of your app rewrites Host",
    );
  });

  it('tries the Host in lower case and without a trailing dot', async () => {
    const signed = await delivery('https://shop.example.kg/hook');
    for (const host of ['SHOP.EXAMPLE.KG', 'shop.example.kg.', 'Shop.Example.KG.:8443']) {
      const diagnosis = await explainVerificationFailure(received(signed, '/hook', { host }), testKeys);
      expect(diagnosis.changes, host).toEqual([{ part: 'host', received: host, expected: 'shop.example.kg' }]);
    }
  });

  it('says nothing verifies when a rewritten Host left no trace', async () => {
    const signed = await delivery('https://shop.example.kg/webhooks/payments');
    const diagnosis = await explainVerificationFailure(
      received(signed, '/webhooks/payments', { host: 'internal:8080' }),
      testKeys,
    );
    expect(diagnosis.changes).toEqual([]);
    expect(diagnosis.message).toContain('Tried hosts `internal:8080`, `internal`');
  });

  it('finds a rewritten Host from the registered webhookUrl alone', async () => {
    const signed = await delivery('https://shop.example.kg/webhooks/payments');
    const request = received(signed, '/webhooks/payments', { host: 'internal:8080' });
    const diagnosis = await explainVerificationFailure(request, {
      ...testKeys,
      webhookUrl: 'https://shop.example.kg/webhooks/payments',
    });
    // With webhookUrl configured, the receiver already uses the signed host: it verifies.
    expect(diagnosis.ok).toBe(true);
  });

  it('names a stripped path prefix', async () => {
    const signed = await delivery('https://shop.example.kg/api/webhooks/payments');
    const diagnosis = await explainVerificationFailure(received(signed, '/webhooks/payments'), testKeys);
    expect(diagnosis.changes).toEqual([
      { part: 'path', received: '/webhooks/payments', expected: '/api/webhooks/payments' },
    ]);
    expect(diagnosis.fix).toContain("set `webhookUrl: 'https://shop.example.kg/api/webhooks/payments'`");
    expect(diagnosis.fix).toContain('strips the prefix `/api`');
    const custom = await delivery('https://shop.example.kg/shop-7/payhook-in');
    const viaHeader = await explainVerificationFailure(
      received(custom, '/payhook-in', { 'x-forwarded-prefix': '/shop-7' }),
      testKeys,
    );
    expect(viaHeader.changes).toEqual([{ part: 'path', received: '/payhook-in', expected: '/shop-7/payhook-in' }]);
  });

  it('names a dropped or an added query string', async () => {
    const registeredUrl = 'https://shop.example.kg/hook?token=s3cr%20et&shop=7';
    const signed = await delivery(registeredUrl);
    const dropped = await explainVerificationFailure(received(signed, '/hook'), { ...testKeys, registeredUrl });
    expect(dropped.changes).toEqual([{ part: 'query', received: '', expected: 'token=s3cr%20et&shop=7' }]);
    // The fix names the query's parameters, never their values. Pinning a webhookUrl with the query would not
    // help while a proxy drops it (payhook checks the signed query arrives): the proxy must pass it on.
    expect(dropped.fix).toContain('have it pass the query string on (the service signed `?token=…&shop=…`)');
    expect(dropped.fix).not.toContain('set `webhookUrl`');
    expect(dropped.message).toContain('signature would verify with query `?token=…&shop=…` (your request has none)');
    expect(dropped.fix).toContain('the query string does not reach payhook');
    // The signed-body variant names its callback URL in the body: no hint needed.
    const body = createTestWebhook({ variant: 'signed-body', fields: { webhook_url: registeredUrl } });
    const announced = await signWebhook(body, { url: registeredUrl, timestamp: NOW });
    const fromBody = await explainVerificationFailure(received(announced, '/hook'), testKeys);
    expect(fromBody.changes).toEqual([{ part: 'query', received: '', expected: 'token=s3cr%20et&shop=7' }]);
    // A router that rewrites the URL but keeps the original in X-Original-URI.
    const viaHeader = await explainVerificationFailure(
      received(signed, '/hook', { 'x-original-uri': '/hook?token=s3cr%20et&shop=7' }),
      testKeys,
    );
    expect(viaHeader.changes.map((c) => c.part)).toEqual(['query']);
    const plain = await delivery('https://shop.example.kg/hook');
    const added = await explainVerificationFailure(received(plain, '/hook?utm=1'), testKeys);
    expect(added.changes).toEqual([{ part: 'query', received: 'utm=1', expected: '' }]);
  });

  // verifyWebhook refuses it URL_MISMATCH before the signature; the diagnosis judges it with the pinned URL all the same.
  it('names the query or path that differs from the pinned webhookUrl for a URL_MISMATCH, without query values', async () => {
    const signed = await delivery('https://shop.example.kg/api/hook?shop=42&tag=a');
    const request = received(signed, '/api/hook?shop=42&tag=a');
    for (const registeredUrl of [undefined, 'https://shop.example.kg/api/hook?shop=42&tag=a']) {
      const diagnosis = await explainVerificationFailure(request, {
        ...testKeys,
        webhookUrl: 'https://shop.example.kg/api/hook?shop=43&tag=a',
        ...(registeredUrl === undefined ? {} : { registeredUrl }),
      });
      expect(diagnosis.code).toBe('URL_MISMATCH');
      expect(diagnosis.changes).toEqual([{ part: 'query', received: 'shop=43&tag=a', expected: 'shop=42&tag=a' }]);
      expect(diagnosis.verifiedCanonical).toBe(signed.canonical);
      expect(diagnosis.message).toContain('gives the parameter "shop" another value than the registered webhookUrl.');
      expect(diagnosis.message).toContain('query `?shop=…&tag=…` (your webhookUrl has other values)');
      expect(`${diagnosis.message} ${diagnosis.fix}`).not.toMatch(/=4[23]/);
    }
    // The same URL with a trailing slash, in a list: none fits the request, so the list's first is compared.
    for (const webhookUrl of [
      ['https://shop.example.kg/api/hook/?shop=42&tag=a'],
      ['https://shop.example.kg/api/hook/?shop=42&tag=a', 'https://shop.example.kg/other'],
    ]) {
      const diagnosis = await explainVerificationFailure(request, { ...testKeys, webhookUrl });
      expect(diagnosis.code).toBe('URL_MISMATCH');
      expect(diagnosis.changes).toEqual([{ part: 'path', received: '/api/hook/', expected: '/api/hook' }]);
      expect(diagnosis.message).toContain('fits none of the registered webhookUrl values');
      expect(diagnosis.fix).toContain(
        'your `webhookUrl` has the path `/api/hook/`, but the service signed `/api/hook`',
      );
    }
  });

  // A list is matched by path: a proxy that strips a prefix leaves the request fitting none of it. It is judged with the
  // entry for its Host, not the list's first, so the right shop's URL is tried and the prefix named.
  it('judges a URL_MISMATCH against the webhookUrl listed for the request host, and names the path changed', async () => {
    const webhookUrl = ['https://a.example/api/a', 'https://b.example/api/b?shop=7'];
    const signed = await delivery('https://b.example/api/b?shop=7');
    const explain = (url: string) =>
      explainVerificationFailure(received(signed, url, { host: 'b.example' }), { ...testKeys, webhookUrl });
    const diagnosis = await explain('/hooks/b?shop=7');
    expect(diagnosis).toMatchObject({ ok: false, code: 'URL_MISMATCH', signatureVerifies: true });
    expect(diagnosis.verifiedCanonical).toBe(signed.canonical);
    expect(diagnosis.fix).toBe(
      'the path your app sees is not the one the service called: have it pass the path on unchanged ' +
        '(a `webhookUrl` list is matched by path)',
    );
    expect(diagnosis.message).toContain('The signature verifies with the configured key, so it was sent there');
    // A prefix stripped, and the query with it: named as such.
    const stripped = await explain('/b');
    expect(stripped).toMatchObject({ ok: false, code: 'URL_MISMATCH', signatureVerifies: true });
    expect(stripped.fix).toContain('a proxy strips the prefix `/api` before your app');
    // The prefix alone (a framework's mount point) fits the entry whose path ends with the request's: it verifies.
    expect(await explain('/b?shop=7')).toMatchObject({ ok: true, code: null });
  });

  // Several shops on one host, told apart by path or query: the entry the delivery was signed for is found among the
  // host's entries, whichever of them comes first in the list.
  it('judges a URL_MISMATCH against the entry of the request host that the signature was made for', async () => {
    const cases = [
      {
        webhookUrl: ['https://shop.example.kg/hook?shop=7', 'https://shop.example.kg/hook?shop=8'],
        url: '/hook',
        fix: 'have it pass the query string on (the service signed `?shop=…`)',
      },
      {
        webhookUrl: ['https://shop.example.kg/api/a', 'https://other.example/api/b', 'https://shop.example.kg/api/b'],
        url: '/hooks/b',
        fix: 'the path your app sees is not the one the service called',
      },
    ];
    for (const { webhookUrl, url, fix } of cases) {
      const signed = await delivery(webhookUrl.at(-1)!);
      const diagnosis = await explainVerificationFailure(received(signed, url), { ...testKeys, webhookUrl });
      expect(diagnosis).toMatchObject({ ok: false, code: 'URL_MISMATCH', signatureVerifies: true });
      expect(diagnosis.verifiedCanonical).toBe(signed.canonical);
      expect(diagnosis.fix).toContain(fix);
      // Signed for none of them: judged against the host's first entry, as before.
      const other = await delivery('https://shop.example.kg/elsewhere');
      const none = await explainVerificationFailure(received(other, url), { ...testKeys, webhookUrl });
      expect(none).toMatchObject({ ok: false, code: 'URL_MISMATCH', signatureVerifies: false });
      expect(none.canonical).toContain(`\n${new URL(webhookUrl[0]!).pathname}\n`);
    }
    // However many entries the host has, the search's budget of signature checks holds.
    const many = Array.from({ length: 700 }, (_, i) => `https://shop.example.kg/hook?shop=${i}`);
    const last = await explainVerificationFailure(received(await delivery(many.at(-1)!), '/hook'), {
      ...testKeys,
      webhookUrl: many,
    });
    expect(last.checks).toBeLessThanOrEqual(600);
  });

  // Signed for the pinned URL, the request lost or changed its query on the way: verifyWebhook refuses it URL_MISMATCH,
  // and the diagnosis says where it went wrong rather than only that it verifies.
  it('names a query lost or changed on the way to a pinned webhookUrl, with the fix, for a URL_MISMATCH', async () => {
    const webhookUrl = 'https://shop.example/api/webhooks?shop=7';
    const signed = await delivery(webhookUrl);
    const dropped = await explainVerificationFailure(received(signed, '/api/webhooks'), { ...testKeys, webhookUrl });
    expect(dropped).toMatchObject({ ok: false, code: 'URL_MISMATCH', signatureVerifies: true, changes: [] });
    expect(dropped.fix).toBe(
      'the query string does not reach payhook: a proxy drops it (or a router, if your own verifyWebhook call gets ' +
        '`req.url`, not `req.originalUrl` as payhook/node): have it pass the query string on (the service signed `?shop=…`)',
    );
    expect(dropped.message).toContain(
      'Judged as if it had come to your `webhookUrl`: The signature verifies with the configured key, so it was sent ' +
        'there and changed on the way: the query string does not reach payhook',
    );
    expect(dropped.message).not.toContain('The delivery verifies');
    const changed = await explainVerificationFailure(received(signed, '/api/webhooks?shop=8'), {
      ...testKeys,
      webhookUrl,
      now: NOW + 10 * 60_000,
    });
    expect(changed).toMatchObject({ ok: false, code: 'URL_MISMATCH', signatureVerifies: true });
    expect(changed.fix).toBe(
      'the query string is changed on the way: it gives the parameter "shop" another value than the one the service ' +
        'signed (`?shop=…`): have it pass the query string on unchanged',
    );
    expect(changed.message).toContain('but the timestamp is refused');
  });

  it("never prints a registered URL's user, password or query values, and still names what to fix", async () => {
    const registeredUrl = 'https://hook:Pa55w0rd@shop.example.kg/hook?token=S3CRET';
    const signed = await delivery('https://shop.example.kg/hook?token=S3CRET');
    // webhookUrl set, the query gone on the way: URL_MISMATCH, the parameter named.
    const mismatch = await explainVerificationFailure(received(signed, '/hook'), {
      ...testKeys,
      webhookUrl: registeredUrl,
    });
    expect(mismatch.code).toBe('URL_MISMATCH');
    expect(mismatch.message).toContain('lacks the parameter "token"');
    // Judged as if it had come to the pinned URL, which the service signed: the query was lost on the way.
    expect(mismatch).toMatchObject({ ok: false, signatureVerifies: true, changes: [] });
    expect(mismatch.fix).toContain('have it pass the query string on (the service signed `?token=…`)');
    expect(`${mismatch.message} ${mismatch.fix}`).not.toMatch(/S3CRET|Pa55w0rd/);
    // The registered URL as a hint: the query is named by its parameters, the URL without its query values.
    const dropped = await explainVerificationFailure(received(signed, '/hook'), { ...testKeys, registeredUrl });
    expect(dropped.changes).toEqual([{ part: 'query', received: '', expected: 'token=S3CRET' }]);
    expect(dropped.message).toContain('signature would verify with query `?token=…` (your request has none)');
    expect(dropped.fix).toContain('have it pass the query string on (the service signed `?token=…`)');
    expect(dropped.fix).not.toContain('S3CRET');
    // Signed for another host: named, and the merchant sent to the dashboard rather than to that host.
    const elsewhere = await delivery('https://other.example.kg/hook?token=S3CRET');
    const host = await explainVerificationFailure(received(elsewhere, '/hook?token=S3CRET'), {
      ...testKeys,
      webhookUrl: registeredUrl,
    });
    expect(host.fix).toContain('but the service signed `other.example.kg`): one for another endpoint');
    // Given as the registered URL, it is the URL to set, its query hidden.
    const given = await explainVerificationFailure(received(elsewhere, '/hook?token=S3CRET'), {
      ...testKeys,
      webhookUrl: registeredUrl,
      registeredUrl: 'https://other.example.kg/hook?token=S3CRET',
    });
    expect(given.fix).toContain(
      "set `webhookUrl` to 'https://other.example.kg/hook' with the query the service signed",
    );
    // webhookUrl and the URL signed differ in query values only: said so, not "`?token=…`, but … `?token=…`".
    const otherValue = await delivery('https://shop.example.kg/hook?token=OTHERVAL');
    const values = await explainVerificationFailure(received(otherValue, '/hook?token=S3CRET'), {
      ...testKeys,
      webhookUrl: registeredUrl,
      registeredUrl: 'https://shop.example.kg/hook?token=OTHERVAL',
    });
    expect(values.fix).toContain('your `webhookUrl` has other values in the query `?token=…` than the service signed');
    expect(values.fix).not.toContain('but the service signed');
    // Nothing makes it verify: the queries tried are listed by their parameters.
    const tampered = { ...signed, body: signed.body.replace('"amount":100', '"amount":900') };
    const nothing = await explainVerificationFailure(received(tampered, '/hook'), { ...testKeys, registeredUrl });
    expect(nothing.message).toContain('queries `(none)`, `?token=…`');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    await explainSignatureMismatch({ ...testKeys, webhookUrl: registeredUrl })(
      received(elsewhere, '/hook?token=S3CRET'),
    );
    const printed = warn.mock.calls.map((call) => String(call[0]));
    warn.mockRestore();
    expect(printed).toHaveLength(1);
    for (const text of [mismatch, dropped, host, given, nothing]
      .flatMap((one) => [one.message, one.fix ?? ''])
      .concat(printed)) {
      expect(text).not.toMatch(/Pa55w0rd|S3CRET/);
    }
  });

  // A host a sender chose, with NEL in it, printed a second, forged line in viewers that split on it.
  it('prints its console line with control characters escaped', async () => {
    // A changed body: nothing makes it verify, and every host tried is listed.
    const signed = await delivery('https://shop.example.kg/hook');
    const tampered = { ...signed, body: signed.body.replace('"amount":100', '"amount":900') };
    const forged = received(tampered, '/hook', { 'x-forwarded-host': 'x\u0085payhook: handled 200 - forged' });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      await explainSignatureMismatch(testKeys)(forged);
      const printed = warn.mock.calls.map((call) => String(call[0]));
      expect(printed).toHaveLength(1);
      expect(printed[0]).not.toContain('\u0085');
      expect(printed[0]).toContain('x\\u0085payhook: handled 200 - forged');
    } finally {
      warn.mockRestore();
    }
  });

  it('names a query added to or changed on the way, which did reach payhook', async () => {
    const registeredUrl = 'https://shop.example.kg/hook?shop=7&lang=ru';
    const signed = await delivery(registeredUrl);
    const extended = await explainVerificationFailure(received(signed, '/hook?shop=7&lang=ru&utm=x'), {
      ...testKeys,
      registeredUrl,
    });
    expect(extended.changes).toEqual([{ part: 'query', received: 'shop=7&lang=ru&utm=x', expected: 'shop=7&lang=ru' }]);
    expect(extended.fix).toContain(
      'something adds to the query string on the way (the service signed `?shop=…&lang=…`)',
    );
    const changed = await explainVerificationFailure(received(signed, '/hook?shop=8&lang=ru'), {
      ...testKeys,
      registeredUrl,
    });
    expect(changed.changes).toEqual([{ part: 'query', received: 'shop=8&lang=ru', expected: 'shop=7&lang=ru' }]);
    // Not "set webhookUrl": with it, payhook would refuse the query that arrives (URL_MISMATCH).
    expect(changed.fix).toBe(
      'the query string is changed on the way: it gives the parameter "shop" another value than the one the service ' +
        'signed (`?shop=…&lang=…`): have it pass the query string on unchanged; a `webhookUrl` with that query does ' +
        'not help, as payhook checks that the query arrives as signed',
    );
    // One parameter of the signed query dropped on the way, the others kept.
    const partly = await explainVerificationFailure(received(signed, '/hook?lang=ru'), { ...testKeys, registeredUrl });
    expect(partly.changes).toEqual([{ part: 'query', received: 'lang=ru', expected: 'shop=7&lang=ru' }]);
    expect(partly.fix).toContain('it lacks the parameter "shop" of the one the service signed (`?shop=…&lang=…`)');
    expect(partly.fix).toContain('have it pass the query string on unchanged');
    expect(partly.fix).not.toContain('set `webhookUrl`');
    expect(changed.message).toContain(
      'signature would verify with query `?shop=…&lang=…` (your request has other values)',
    );
    for (const diagnosis of [extended, changed]) expect(diagnosis.fix).not.toContain('does not reach payhook');
  });

  it('tries the registered URL as a whole when its host, path and query all differ', async () => {
    const registeredUrl = 'https://shop.example.kg/api/webhooks/payments?shop=7';
    const signed = await delivery(registeredUrl);
    const diagnosis = await explainVerificationFailure(
      received(signed, '/webhooks/payments', { host: 'internal:8080' }),
      { ...testKeys, registeredUrl },
    );
    expect(diagnosis.changes).toEqual([
      { part: 'host', received: 'internal:8080', expected: 'shop.example.kg' },
      { part: 'path', received: '/webhooks/payments', expected: '/api/webhooks/payments' },
      { part: 'query', received: '', expected: 'shop=7' },
    ]);
    expect(diagnosis.verifiedCanonical).toBe(signed.canonical);
    expect(diagnosis.fix).toContain(
      "set `webhookUrl` to 'https://shop.example.kg/api/webhooks/payments' with the query the service signed",
    );
  });

  it('with webhookUrl set, names the part of it that differs from what was signed', async () => {
    const signed = await delivery('https://shop.example.kg/api/hook');
    const diagnosis = await explainVerificationFailure(received(signed, '/api/hook'), {
      ...testKeys,
      webhookUrl: 'https://shop.example.kg/hook',
    });
    expect(diagnosis.changes).toEqual([{ part: 'path', received: '/hook', expected: '/api/hook' }]);
    expect(diagnosis.fix).toContain('your `webhookUrl` has the path `/hook`');
    const wrongHost = await explainVerificationFailure(received(signed, '/api/hook'), {
      ...testKeys,
      webhookUrl: 'https://old.example.kg/api/hook',
    });
    expect(wrongHost.changes).toEqual([{ part: 'host', received: 'old.example.kg', expected: 'shop.example.kg' }]);
  });

  it('names the other environment key, using injected environment keys', async () => {
    const signed = await delivery('https://shop.example.kg/hook', { privateKey: stranger.privateKeyPem! });
    const diagnosis = await explainVerificationFailure(signed, {
      environment: 'production',
      environmentKeys: { production: TEST_KEY_PAIR.publicKey, beta: stranger.publicKeyPem },
      now: NOW,
    });
    expect(diagnosis.changes).toEqual([{ part: 'key', received: 'service-production', expected: 'service-beta' }]);
    expect(diagnosis.keyName).toBe('service-beta');
    // Never "switch to beta" bare: a production receiver taking the beta key would take sandbox payments as real.
    expect(diagnosis.fix).toContain("a test or staging receiver with `environment: 'beta'`");
    expect(diagnosis.fix).toContain('never accept the beta key where real payments arrive');
    expect(diagnosis.fix).not.toContain("set `environment: 'beta'`");
    const named = await explainVerificationFailure(signed, {
      ...testKeys,
      alternativeKeys: { 'old key': stranger.publicKeyPem },
    });
    expect(named.keyName).toBe('old key');
    expect(named.changes).toEqual([{ part: 'key', received: 'the configured key', expected: 'old key' }]);
  });

  // A sandbox delivery reaching a production receiver, and refused before its URL is read: the key is named, not
  // a mangled signature header.
  it('names the other environment key for a request refused before it is read (URL_MISMATCH)', async () => {
    const signed = await delivery('https://shop.example.kg/hook?shop=7', { privateKey: stranger.privateKeyPem! });
    const diagnosis = await explainVerificationFailure(received(signed, '/hook'), {
      environment: 'production',
      environmentKeys: { production: TEST_KEY_PAIR.publicKey, beta: stranger.publicKeyPem },
      webhookUrl: 'https://shop.example.kg/hook?shop=7',
      now: NOW,
    });
    expect(diagnosis.code).toBe('SIGNATURE_MISMATCH');
    expect(diagnosis.changes).toEqual([{ part: 'key', received: 'service-production', expected: 'service-beta' }]);
    expect(diagnosis.fix).toContain("the delivery comes from the service's beta (sandbox) environment");
    expect(diagnosis.message).toMatch(/^No configured key can have made this signature, but service-beta can/);
    expect(diagnosis.message).toContain('lacks the parameter "shop"');
  });

  it('says which keys it left out past the most it tries, instead of dropping them silently', async () => {
    const signed = await delivery('https://shop.example.kg/hook', { privateKey: stranger.privateKeyPem! });
    // The configured key and the two environments' come first; three more fill the six it tries.
    const pairs = await Promise.all(Array.from({ length: 3 }, () => generateTestKeyPair()));
    const alternativeKeys = Object.fromEntries(pairs.map((pair, index) => [`fresh ${index}`, pair.publicKey]));
    const diagnosis = await explainVerificationFailure(signed, {
      ...testKeys,
      alternativeKeys: { ...alternativeKeys, 'the stranger': stranger.publicKeyPem },
    });
    expect(diagnosis.keyName).toBeNull();
    expect(diagnosis.message).toContain('keys not tried: the stranger (not tried: at most 6 keys)');
  });

  it('combines two causes: rewritten host and stripped prefix', async () => {
    const signed = await delivery('https://shop.example.kg/api/hook');
    const diagnosis = await explainVerificationFailure(
      received(signed, '/hook', { host: '10.0.0.7:3000', 'x-forwarded-host': 'shop.example.kg' }),
      testKeys,
    );
    expect(diagnosis.changes.map((c) => c.part)).toEqual(['host', 'path']);
    expect(diagnosis.fix).toContain("set `webhookUrl: 'https://shop.example.kg/api/hook'`");
  });

  it('names an x-api header added after signing', async () => {
    const signed = await delivery('https://shop.example.kg/hook');
    const diagnosis = await explainVerificationFailure(
      received(signed, '/hook', { 'x-api-gateway': 'kong' }),
      testKeys,
    );
    expect(diagnosis.changes).toEqual([{ part: 'header', received: 'x-api-gateway', expected: '' }]);
  });

  it('names an x-api header added after four the service signed', async () => {
    const extra = { 'x-api-client': 'c', 'x-api-version': '2', 'x-api-nonce': 'n' };
    const signed = await delivery('https://shop.example.kg/hook', { headers: extra });
    const diagnosis = await explainVerificationFailure(
      received(signed, '/hook', { 'x-api-gateway': 'kong' }),
      testKeys,
    );
    expect(diagnosis.changes).toEqual([{ part: 'header', received: 'x-api-gateway', expected: '' }]);
  });

  // One gateway doing two ordinary things: adding two headers, or stripping /api and adding one.
  it('names two x-api headers added after signing, and one added by a proxy that also strips a prefix', async () => {
    const signed = await delivery('https://shop.example.kg/api/hook?shop=42');
    const two = await explainVerificationFailure(
      received(signed, '/api/hook?shop=42', { 'x-api-gateway-id': 'gw-7', 'x-api-request-id': 'r-1' }),
      testKeys,
    );
    expect(two.changes).toEqual([
      { part: 'header', received: 'x-api-gateway-id', expected: '' },
      { part: 'header', received: 'x-api-request-id', expected: '' },
    ]);
    expect(two.verifiedCanonical).toBe(signed.canonical);
    expect(two.fix).toContain('stop your proxy or gateway from adding `x-api-request-id`');
    const prefixed = await explainVerificationFailure(
      received(signed, '/hook?shop=42', { 'x-api-gateway-id': 'gw-7' }),
      testKeys,
    );
    expect(prefixed.changes).toEqual([
      { part: 'path', received: '/hook', expected: '/api/hook' },
      { part: 'header', received: 'x-api-gateway-id', expected: '' },
    ]);
    expect(prefixed.verifiedCanonical).toBe(signed.canonical);
    expect(prefixed.message).toContain('and header `x-api-gateway-id` removed');
    expect(prefixed.checks).toBeLessThanOrEqual(600);
  });

  // The service may sign x-api-* headers of its own: leaving every header out with the URL change drops those too.
  it("names a gateway's header together with a URL change when the service signed an x-api-* header of its own", async () => {
    const signed = await delivery('https://shop.example.kg/api/hook', { headers: { 'x-api-version': '2' } });
    for (const [url, extra, part] of [
      ['/hook', {}, 'path'],
      ['/api/hook', { host: '10.0.0.7:3000', 'x-forwarded-host': 'shop.example.kg' }, 'host'],
    ] as const) {
      const diagnosis = await explainVerificationFailure(
        received(signed, url, { ...extra, 'x-api-key': 'gateway-secret' }),
        testKeys,
      );
      expect(diagnosis.changes.map((change) => change.part)).toEqual([part, 'header']);
      expect(diagnosis.changes[1]).toEqual({ part: 'header', received: 'x-api-key', expected: '' });
      expect(diagnosis.verifiedCanonical).toBe(signed.canonical);
    }
  });

  /** Three more keys (six with the configured and the two environments') and six x-api-* headers to sign. */
  async function sixKeysAndHeaders() {
    const extra = Object.fromEntries(
      await Promise.all(['k1', 'k2', 'k3'].map(async (name) => [name, (await generateTestKeyPair()).publicKey])),
    ) as Record<string, string>;
    const headers = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`x-api-h${i}`, `v${i}`]));
    return { extra, headers };
  }
  // Host rewritten behind three proxies, each naming another host: every one is a candidate.
  const PROXIED_HOSTS = {
    'x-forwarded-host': 'a.example',
    forwarded: 'host=b.example',
    'x-original-host': 'c.example',
  };

  // Each header alone left out with a URL change comes after the pairs: many signed headers and keys must not spend
  // the budget before a Host and path rewritten together are tried.
  it('finds a Host and path rewritten together within the budget, however many x-api-* headers were signed', async () => {
    const { extra, headers } = await sixKeysAndHeaders();
    const signed = await delivery('https://shop.example.kg/api/hook', { headers });
    const request = received(signed, '/hook', { host: 'shop.example.kg:8080', ...PROXIED_HOSTS });
    const diagnosis = await explainVerificationFailure(request, { ...testKeys, alternativeKeys: extra });
    expect(diagnosis.changes.map((change) => change.part)).toEqual(['host', 'path']);
    expect(diagnosis.checks).toBeLessThanOrEqual(600);
  });

  // Six keys once cost every variant six checks, and a query dropped by a gateway that also added its header came
  // after the budget: the configured keys now try every variant before the other keys try any.
  it('finds a dropped query and a gateway header under the configured key with six keys and six signed headers', async () => {
    const { extra, headers } = await sixKeysAndHeaders();
    const signed = await delivery('https://shop.example.kg/hook?shop=42', { headers });
    const request = received(signed, '/hook', { 'x-api-key': 'gateway-secret', ...PROXIED_HOSTS });
    const diagnosis = await explainVerificationFailure(request, {
      ...testKeys,
      alternativeKeys: extra,
      registeredUrl: 'https://shop.example.kg/hook?shop=42',
    });
    expect(diagnosis.changes).toEqual([
      { part: 'query', received: '', expected: 'shop=42' },
      { part: 'header', received: 'x-api-key', expected: '' },
    ]);
    expect(diagnosis.verifiedCanonical).toBe(signed.canonical);
    expect(diagnosis.checks).toBeLessThanOrEqual(600);
  });

  // Fewest causes first, whatever the keys: three configured keys once put another key's find past the budget.
  it('finds another key with the registered URL behind a proxy, with three configured keys', async () => {
    const { extra, headers } = await sixKeysAndHeaders();
    const registeredUrl = 'https://shop.example.kg/api/v1/hook?shop=42&x=1';
    const signed = await delivery(registeredUrl, { privateKey: stranger.privateKeyPem!, headers });
    const request = received(signed, '/v1/hook?y=2', {
      host: 'internal:8080',
      ...PROXIED_HOSTS,
      'x-forwarded-host': 'shop.example.kg',
    });
    const [k1, k2] = Object.values(extra);
    const diagnosis = await explainVerificationFailure(request, {
      now: NOW,
      publicKeys: [TEST_KEY_PAIR.publicKey, k1!, k2!],
      alternativeKeys: { stranger: stranger.publicKeyPem },
      registeredUrl,
    });
    expect(diagnosis.keyName).toBe('stranger');
    expect(diagnosis.verifiedCanonical).toBe(signed.canonical);
    expect(diagnosis.checks).toBeLessThanOrEqual(600);
  });

  // A registered URL tried whole is one cause, however many of its parts differ from the first's.
  it('finds a gateway header on a delivery for a later webhookUrl that differs in host and path', async () => {
    const headers = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`x-api-h${i}`, `v${i}`]));
    const signed = await delivery('https://shop2.example.kg/y/hook', { headers });
    const request = received(signed, '/hook', {
      'x-api-key': 'gateway-secret',
      host: 'internal:8080',
      ...PROXIED_HOSTS,
      'x-forwarded-prefix': '/edge',
      'x-original-uri': '/orig/hook',
    });
    const diagnosis = await explainVerificationFailure(request, {
      now: NOW,
      publicKeys: [TEST_KEY_PAIR.publicKey, (await generateTestKeyPair()).publicKey],
      webhookUrl: ['https://shop1.example.kg/x/hook', 'https://shop2.example.kg/y/hook'],
    });
    expect(diagnosis.changes).toContainEqual({ part: 'header', received: 'x-api-key', expected: '' });
    expect(diagnosis.verifiedCanonical).toBe(signed.canonical);
    expect(diagnosis.checks).toBeLessThanOrEqual(600);
  });

  // The registered URL whole, like a tie, is also tried with the added headers left out.
  it('finds a gateway header on a delivery for the registered URL when its host, path and query all differ', async () => {
    const registeredUrl = 'https://shop.example.kg/api/v1/hook?shop=42';
    const signed = await delivery(registeredUrl);
    const request = received(signed, '/v1/hook?y=2', { host: 'internal:8080', 'x-api-key': 'gateway-secret' });
    const diagnosis = await explainVerificationFailure(request, { ...testKeys, registeredUrl });
    expect(diagnosis.changes.map((one) => one.part)).toEqual(['host', 'path', 'query', 'header']);
    expect(diagnosis.verifiedCanonical).toBe(signed.canonical);
  });

  // Another environment's key alone is still tried before any change under the configured key.
  it('names another key alone within a few checks, before any variant of the URL', async () => {
    const signed = await delivery('https://shop.example.kg/hook?shop=42', { privateKey: stranger.privateKeyPem! });
    const diagnosis = await explainVerificationFailure(received(signed, '/hook?shop=42'), {
      ...testKeys,
      alternativeKeys: { 'the stranger': stranger.publicKeyPem },
    });
    expect(diagnosis.changes).toEqual([{ part: 'key', received: 'the configured key', expected: 'the stranger' }]);
    expect(diagnosis.checks).toBeLessThanOrEqual(6);
  });

  it('says the signature verifies when only the timestamp is refused', async () => {
    const signed = await delivery('https://shop.example.kg/hook');
    const diagnosis = await explainVerificationFailure(signed, { ...testKeys, now: NOW + 10 * 60_000 });
    expect(diagnosis).toMatchObject({ ok: false, signatureVerifies: true, code: 'TIMESTAMP_OUT_OF_WINDOW' });
    expect(diagnosis.message).toContain('600000 ms old');
  });

  it('says what was tried when nothing matches (a tampered body)', async () => {
    const signed = await delivery('https://shop.example.kg/hook');
    const tampered = { ...received(signed, '/hook'), body: signed.body.replace('"amount":100', '"amount":1000') };
    const diagnosis = await explainVerificationFailure(tampered, testKeys);
    expect(diagnosis).toMatchObject({ ok: false, code: 'SIGNATURE_MISMATCH', changes: [], verifiedCanonical: null });
    expect(diagnosis.message).toContain('No likely cause');
    expect(diagnosis.message).toContain('changed the body before payhook read it');
    expect(diagnosis.tried.hosts).toContain('shop.example.kg');
    expect(diagnosis.tried.paths).toContain('/api/hook');
    expect(diagnosis.tried.keys).toEqual(
      expect.arrayContaining(['the configured key', 'service-production', 'service-beta']),
    );
    expect(diagnosis.checks).toBeGreaterThan(10);
    expect(diagnosis.checks).toBeLessThanOrEqual(600);
  });

  it('names an altered signature header first when no key tried opens it as an RSA signature block', async () => {
    const signed = await delivery('https://shop.example.kg/hook');
    const original = signed.headers['signature'] ?? '';
    // Lower-cased, it is still base64 of the same length (344 characters hold capitals), but not the signature.
    expect(original.toLowerCase()).not.toBe(original);
    for (const signature of [original.toLowerCase(), original.slice(0, -4)]) {
      const request = received(signed, '/hook', { signature });
      const diagnosis = await explainVerificationFailure(request, testKeys);
      expect(diagnosis.code).toBe('SIGNATURE_MISMATCH');
      expect(diagnosis.message).toMatch(
        /^No key tried opens the signature as an RSA signature block, so no change of Host, path, query, header or body makes it verify: the `signature` header was altered on the way/,
      );
      // Nothing is searched for such a signature: only the as-received check ran.
      expect(diagnosis.checks).toBe(1);
      // Whatever the body, such a signature never verifies: a body changed is not the cause to chase.
      expect(diagnosis.message).not.toContain('changed the body');
    }
  });

  it('reports bad deliveries by code instead of throwing', async () => {
    const signed = await delivery('https://shop.example.kg/hook');
    const { signature: _s, ...unsigned } = signed.headers;
    expect((await explainVerificationFailure({ ...signed, headers: unsigned }, testKeys)).code).toBe(
      'MISSING_SIGNATURE',
    );
    const { host: _h, ...hostless } = signed.headers;
    expect((await explainVerificationFailure({ ...signed, url: '/hook', headers: hostless }, testKeys)).code).toBe(
      'MISSING_HOST',
    );
    expect((await explainVerificationFailure({ ...signed, body: '{oops' }, testKeys)).code).toBe('INVALID_BODY');
    expect(
      (await explainVerificationFailure({ ...signed, headers: { ...signed.headers, signature: '!!!' } }, testKeys))
        .message,
    ).toContain('not base64');
    expect((await explainVerificationFailure(null as unknown as ExplainRequest)).code).toBe('INVALID_ARGUMENT');
    expect((await explainVerificationFailure(signed, { publicKeys: 'not a key' })).ok).toBe(false);
  });

  // CONTRACT §4: a signature no configured key can have made is SIGNATURE_MISMATCH before the body, Host, path
  // and query are read; the diagnosis gives the code verifyWebhook gives.
  it("gives verifyWebhook's code when a signature no key made comes with a bad body, no Host or a bad path", async () => {
    const signed = await delivery('https://shop.example.kg/hook');
    const forged = await delivery('https://shop.example.kg/hook', { privateKey: stranger.privateKeyPem! });
    const { host: _h, ...hostless } = signed.headers;
    const broken = (headers: Record<string, string>): ExplainRequest[] => [
      { ...signed, headers, body: '{oops' },
      { ...signed, headers: (({ host: _x, ...rest }) => rest)(headers), url: '/hook' },
      { ...signed, headers, url: 'https://shop.example.kg/h%zz' },
    ];
    const cases: Array<[string, ExplainRequest, string]> = [
      ...broken({ ...signed.headers, signature: 'c2hvcnQ=' }).map((r): [string, ExplainRequest, string] => [
        'a 5-byte signature',
        r,
        'SIGNATURE_MISMATCH',
      ]),
      ...broken({ ...signed.headers, signature: forged.headers.signature! }).map(
        (r): [string, ExplainRequest, string] => ["another key's signature", r, 'SIGNATURE_MISMATCH'],
      ),
      ['the genuine signature, no Host', { ...signed, url: '/hook', headers: hostless }, 'MISSING_HOST'],
      ['the genuine signature, a bad body', { ...signed, body: '{oops' }, 'INVALID_BODY'],
    ];
    for (const [name, request, code] of cases) {
      const verdict = await verifyWebhook(request, testKeys);
      expect(verdict.ok ? null : verdict.error.code, name).toBe(code);
      expect((await explainVerificationFailure(request, testKeys)).code, name).toBe(code);
    }
  });

  it('never throws and stays bounded for arbitrary requests', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          method: fc.string(),
          url: fc.string(),
          headers: fc.dictionary(
            fc.constantFrom(
              'host',
              'signature',
              'x-api-timestamp',
              'x-forwarded-host',
              'x-forwarded-prefix',
              'x-api-x',
              'forwarded',
            ),
            fc.string(),
          ),
          body: fc.oneof(fc.string(), fc.json(), fc.constant(null)),
        }),
        async (request) => {
          const diagnosis = await explainVerificationFailure(request, testKeys);
          expect(typeof diagnosis.message).toBe('string');
          expect(diagnosis.checks).toBeLessThanOrEqual(600);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('cuts long values short in its message and fix, and keeps them whole in tried', async () => {
    // A path as long as node:http lets through (16 KB of headers), tried under several hosts.
    const path = `/${'a'.repeat(15_000)}`;
    const signed = await delivery('https://shop.example.kg/hook');
    const diagnosis = await explainVerificationFailure(
      received(signed, path, { 'x-forwarded-host': 'b'.repeat(600), 'x-forwarded-prefix': '/p' }),
      testKeys,
    );
    expect(diagnosis.code).toBe('SIGNATURE_MISMATCH');
    expect(diagnosis.tried.paths).toContain(path);
    expect(diagnosis.message.length).toBeLessThan(8_000);
    expect(diagnosis.message).toContain(`\`${path.slice(0, 256)}…\``);
    expect(`${diagnosis.fix ?? ''}`.length).toBeLessThan(8_000);
  });
});

describe('explainSignatureMismatch (the handler debug hook)', () => {
  /**
   * A real Node handler with the hook, on loopback; `send` POSTs a signed delivery's body and headers (its Host
   * dropped, as a proxy's) with `extra` headers, and resolves the status once the hook has reported.
   */
  async function hookedServer(
    options: WebhookHandlerOptions,
    explainOptions: Parameters<typeof explainSignatureMismatch>[0] = options,
  ) {
    const reports: VerificationDiagnosis[] = [];
    let reported!: () => void;
    const done = new Promise<void>((resolve) => (reported = resolve));
    const handler = createNodeWebhookHandler({
      ...options,
      onSignatureMismatch: explainSignatureMismatch(explainOptions, {
        report: (d) => {
          reports.push(d);
          reported();
        },
      }),
    });
    const server = createServer((req, res) => void handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const send = async (signed: SignedWebhook, extra: Record<string, string>): Promise<number> => {
      const { host: _host, ...headers } = signed.headers;
      const response = await fetch(`http://127.0.0.1:${port}/webhooks/payments`, {
        method: 'POST',
        headers: { ...headers, ...extra },
        body: signed.body,
      });
      await done;
      return response.status;
    };
    return { port, reports, send, close: () => server.close() };
  }

  it('explains a refused delivery in a real Node handler, after answering 401', async () => {
    const options = { publicKeys: TEST_KEY_PAIR.publicKey, onPayment: () => {} };
    // Host as received, so the proxy's rewrite shows as a mismatch to explain.
    const server = await hookedServer({ ...options, allowAnyHost: true }, options);
    try {
      // Signed for the public URL; it reaches the app through a "proxy" on 127.0.0.1.
      const signed = await signWebhook(createTestWebhook(), { url: 'https://shop.example.kg/webhooks/payments' });
      expect(await server.send(signed, { 'x-forwarded-host': 'shop.example.kg' })).toBe(401);
      expect(server.reports).toHaveLength(1);
      expect(server.reports[0]!.changes).toEqual([
        { part: 'host', received: `127.0.0.1:${server.port}`, expected: 'shop.example.kg' },
      ]);
      expect(server.reports[0]!.message).toContain('signature would verify with Host `shop.example.kg`');
    } finally {
      server.close();
    }
  });

  // One key signs for every merchant: the pinned webhookUrl is what keeps another merchant's deliveries out, so the
  // diagnosis never offers a host or URL only the request named as the webhookUrl to set.
  it("never tells a pinned handler to set webhookUrl to another endpoint's host that the request named", async () => {
    const server = await hookedServer({
      ...testKeys,
      webhookUrl: 'https://shop.example/webhooks/payments',
      onPayment: () => {},
    });
    try {
      // A genuine delivery for another merchant's endpoint, replayed with an X-Forwarded-Host the handler does not trust.
      const signed = await delivery('https://attacker.example/webhooks/payments');
      expect(await server.send(signed, { 'x-forwarded-host': 'attacker.example' })).toBe(401);
      const [report] = server.reports;
      expect(report!.changes).toEqual([{ part: 'host', received: 'shop.example', expected: 'attacker.example' }]);
      expect(report!.fix).not.toContain("set `webhookUrl: '");
      expect(report!.fix).not.toContain('https://attacker.example');
      expect(report!.fix).toContain('this delivery was signed for another URL');
      expect(report!.fix).toContain("compare the two, and if they differ set `webhookUrl` to the dashboard's URL");
    } finally {
      server.close();
    }
  });

  it('passes on the rejection of an async report, so a handler logs it instead of leaving it unhandled', async () => {
    const options = { publicKeys: TEST_KEY_PAIR.publicKey };
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- an async one, as a merchant may pass despite the type
    const hook = explainSignatureMismatch(options, { report: () => Promise.reject(new Error('report sink down')) });
    const signed = await signWebhook(createTestWebhook(), { url: 'https://shop.example.kg/webhooks/payments' });
    const forged = { ...signed, headers: { ...signed.headers, signature: 'A'.repeat(344) } };
    await expect(hook(forged)).rejects.toThrow('report sink down');
  });

  it('does not hold up the next diagnosis while a report is still pending', async () => {
    const options = { publicKeys: TEST_KEY_PAIR.publicKey };
    let reported = 0;
    const hook = explainSignatureMismatch(options, {
      // eslint-disable-next-line @typescript-eslint/no-misused-promises -- an async one, as a merchant may pass despite the type
      report: () => {
        reported++;
        return new Promise<void>(() => {}); // a report that never settles (a fetch without a timeout)
      },
    });
    const signed = await signWebhook(createTestWebhook(), { url: 'https://shop.example.kg/webhooks/payments' });
    const forged = { ...signed, headers: { ...signed.headers, signature: 'A'.repeat(344) } };
    for (let call = 0; call < 3; call++) void hook(forged);
    await vi.waitFor(() => expect(reported).toBeGreaterThan(0));
    void hook(forged);
    await vi.waitFor(() => expect(reported).toBe(2));
  });

  it('refuses a limit that would not limit, and a report that is not a function, at creation', () => {
    const options = { publicKeys: TEST_KEY_PAIR.publicKey };
    for (const maxPerMinute of [Number.NaN, 1.5, -1, Number.POSITIVE_INFINITY]) {
      expect(() => explainSignatureMismatch(options, { maxPerMinute }), String(maxPerMinute)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
    }
    expect(() => explainSignatureMismatch(options, { report: 'log' as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    expect(() => explainSignatureMismatch(options, { maxPerMinute: 0 })).not.toThrow();
  });

  it('is rate-limited and runs one diagnosis at a time', async () => {
    const reports: VerificationDiagnosis[] = [];
    const hook = explainSignatureMismatch(testKeys, { report: (d) => reports.push(d), maxPerMinute: 2 });
    const signed = await delivery('https://shop.example.kg/hook');
    const bad = received(signed, '/other');
    await Promise.all([hook(bad), hook(bad)]); // the second overlaps the first: skipped
    await hook(bad);
    await hook(bad); // over the limit of 2 a minute
    expect(reports).toHaveLength(2);
  });
});

describe('explainVerificationFailure names the one cause that was introduced', () => {
  const prefixes = ['/api', '/v1', '/api/v1', '/webhooks', '/hooks'] as const;
  const segment = fc.stringMatching(/^[a-z0-9-]{1,8}$/);
  it('for a rewritten Host (forwarded), a stripped prefix, a dropped query or the other key', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('host', 'path', 'query', 'key'),
        fc.array(segment, { minLength: 1, maxLength: 3 }),
        fc.constantFrom(...prefixes),
        segment,
        fc.integer({ min: 1024, max: 65535 }),
        async (cause, parts, prefix, token, port) => {
          const path = `/${parts.join('/')}`;
          const signedPath = cause === 'path' ? `${prefix}${path}` : path;
          const query = cause === 'query' ? `?token=${token}` : '';
          const url = `https://shop.example.kg${signedPath}${query}`;
          const signed = await delivery(url, cause === 'key' ? { privateKey: stranger.privateKeyPem! } : {});
          const headers: Record<string, string> =
            cause === 'host' ? { host: `10.0.0.1:${port}`, 'x-forwarded-host': 'shop.example.kg' } : {};
          const diagnosis = await explainVerificationFailure(received(signed, path, headers), {
            ...testKeys,
            ...(cause === 'query' ? { registeredUrl: url } : {}),
            environmentKeys: { production: TEST_KEY_PAIR.publicKey, beta: stranger.publicKeyPem },
          });
          expect(diagnosis.ok).toBe(false);
          expect(diagnosis.changes.map((change) => change.part)).toEqual([cause]);
          expect(diagnosis.verifiedCanonical).toBe(signed.canonical);
          expect(diagnosis.checks).toBeLessThanOrEqual(600);
        },
      ),
      { numRuns: 40 },
    );
  });
});

// Issue 14's explain findings: payhook's own test key is named, an unknown
// host asks for the registered URL, and a prefix stripped by a proxy is
// worded apart from one stripped by the app's router.
describe("payhook's published test key", () => {
  it('is named when a test delivery reaches a production receiver, with the fix', async () => {
    const signed = await delivery('https://shop.example.kg/webhooks/payments');
    const diagnosis = await explainVerificationFailure(signed, { environment: 'production', now: NOW });
    expect(diagnosis.code).toBe('SIGNATURE_MISMATCH');
    expect(diagnosis.keyName).toBe('payhook-test');
    expect(diagnosis.changes).toEqual([{ part: 'key', received: 'service-production', expected: 'payhook-test' }]);
    expect(diagnosis.fix).toContain("payhook's published test key");
    expect(diagnosis.fix).toContain('never accept that key in production');
    expect(diagnosis.tried.keys).toContain('payhook-test');
  });

  it('is found together with a URL change, and the service keys go by their conformance names', async () => {
    const signed = await delivery('https://shop.example.kg/api/hook');
    const diagnosis = await explainVerificationFailure(received(signed, '/hook'), {
      environment: ['production', 'beta'],
      now: NOW,
    });
    expect(diagnosis.keyName).toBe('payhook-test');
    expect(diagnosis.changes).toEqual([
      { part: 'path', received: '/hook', expected: '/api/hook' },
      { part: 'key', received: 'service-production, service-beta', expected: 'payhook-test' },
    ]);
  });
});

describe('an unknown host', () => {
  it('asks for the registered URL when Host was rewritten with no X-Forwarded-Host', async () => {
    const signed = await delivery('https://shop.example.kg/webhooks/payments');
    const diagnosis = await explainVerificationFailure(
      received(signed, '/webhooks/payments', { host: 'internal:8080' }),
      testKeys,
    );
    expect(diagnosis.changes).toEqual([]);
    expect(diagnosis.message).toContain('--registered-url');
    expect(diagnosis.fix).toContain('registeredUrl');
    // Given it, the search finds the host at once.
    const withUrl = await explainVerificationFailure(
      received(signed, '/webhooks/payments', { host: 'internal:8080' }),
      { ...testKeys, registeredUrl: 'https://shop.example.kg/webhooks/payments' },
    );
    expect(withUrl.changes).toEqual([{ part: 'host', received: 'internal:8080', expected: 'shop.example.kg' }]);
  });

  it('takes the registered URL it is given over a webhookUrl naming another host', async () => {
    const signed = await delivery('https://shop.example.kg/webhooks/payments');
    const diagnosis = await explainVerificationFailure(
      received(signed, '/webhooks/payments', { host: 'internal:8080' }),
      {
        ...testKeys,
        webhookUrl: 'https://www.shop.example.kg/webhooks/payments',
        registeredUrl: 'https://shop.example.kg/webhooks/payments',
      },
    );
    expect(diagnosis.changes).toEqual([{ part: 'host', received: 'www.shop.example.kg', expected: 'shop.example.kg' }]);
  });

  it('names a pinned webhookUrl that is not the registered URL first when nothing verifies, and finds it given that URL', async () => {
    // Registered (and signed) with www., or at a path no prefix guess reaches; the receiver pins another URL.
    for (const registered of [
      'https://www.shop.example.kg/webhooks/payments',
      'https://shop.example.kg/hooks/finik-cb',
    ]) {
      const signed = await delivery(registered);
      const request = received(signed, '/webhooks/payments', { host: '127.0.0.1:3000' });
      const pinned = { ...testKeys, webhookUrl: 'https://shop.example.kg/webhooks/payments' };
      const diagnosis = await explainVerificationFailure(request, pinned);
      expect(diagnosis.changes, registered).toEqual([]);
      const advice =
        '`webhookUrl` may not be the URL registered with the service: compare the two, or give the URL registered with the service (`registeredUrl`, or `payhook verify --registered-url <url>`) so that it is tried';
      expect(diagnosis.fix, registered).toBe(advice);
      // Named before the body, header and key causes.
      expect(diagnosis.message, registered).toContain(
        `${advice}. Remaining causes, likeliest first: a parser or middleware changed the body`,
      );
      const given = await explainVerificationFailure(request, { ...pinned, registeredUrl: registered });
      expect(given.verifiedCanonical, registered).toBe(signed.canonical);
    }
  });

  it('does not name the pinned webhookUrl once the registered URL given was tried (the body was tampered)', async () => {
    const signed = await delivery('https://shop.example.kg/webhooks/payments');
    const tampered = { ...signed, body: signed.body.replace('"amount":100', '"amount":1000') };
    const diagnosis = await explainVerificationFailure(tampered, {
      ...testKeys,
      webhookUrl: 'https://shop.example.kg/webhooks/payments',
      registeredUrl: 'https://shop.example.kg/webhooks/payments',
    });
    expect(diagnosis.changes).toEqual([]);
    expect(diagnosis.message).not.toContain('registered with the service');
    expect(diagnosis.fix).toBeNull();
  });

  it('does not name the pinned webhookUrl when the body names it as its callback URL (the body was tampered)', async () => {
    const body = createTestWebhook({ variant: 'web', now: NOW });
    const signed = await signWebhook(body, { url: 'https://shop.example.kg/webhooks/payments', timestamp: NOW });
    const tampered = { ...signed, body: signed.body.replace('"amount":100', '"amount":1000') };
    expect(tampered.body).not.toBe(signed.body);
    const diagnosis = await explainVerificationFailure(received(tampered, '/webhooks/payments'), {
      ...testKeys,
      webhookUrl: 'https://shop.example.kg/webhooks/payments',
    });
    expect(diagnosis.changes).toEqual([]);
    expect(diagnosis.message).not.toContain('registered with the service');
    expect(diagnosis.fix).toBeNull();
  });

  // An ingress rewrites /payments-svc/(.*) to /$1 and webhookUrl was set to the URL the app sees: the body's callback
  // URL is the registered one, and the lead, not the body or its parser.
  it('takes the callback URL a WEB delivery names over a pinned webhookUrl that differs from it', async () => {
    const registered = 'https://shop.example.kg/payments-svc/webhooks/payments';
    const body = createTestWebhook({ variant: 'web', now: NOW, webhookUrl: registered });
    const signed = await signWebhook(body, { url: registered, timestamp: NOW });
    const diagnosis = await explainVerificationFailure(received(signed, '/webhooks/payments'), {
      ...testKeys,
      webhookUrl: 'https://shop.example.kg/webhooks/payments',
    });
    expect(diagnosis.verifiedCanonical).toBe(signed.canonical);
    expect(diagnosis.changes).toEqual([
      { part: 'path', received: '/webhooks/payments', expected: '/payments-svc/webhooks/payments' },
    ]);
    expect(diagnosis.message).not.toContain('came to your `webhookUrl` unchanged');
  });

  // Arrived at the pinned URL itself, but the body names another callback URL: the pin may not be the registered one,
  // so that stays the advice, not "came to your webhookUrl unchanged" (which points at body parsers alone).
  it('keeps the webhookUrl advice when the body names another callback URL than the pin it arrived at', async () => {
    const pin = 'https://shop.example.kg/webhooks/payments';
    const body = createTestWebhook({ variant: 'web', now: NOW, webhookUrl: 'https://pay.example.kg/hooks/payments' });
    const signed = await signWebhook(body, { url: pin, timestamp: NOW });
    const altered = {
      ...received(signed, '/webhooks/payments'),
      body: signed.body.replace('"amount":100', '"amount":1001'),
    };
    expect(altered.body).not.toBe(signed.body);
    const diagnosis = await explainVerificationFailure(altered, { ...testKeys, webhookUrl: pin });
    expect(diagnosis.fix).toMatch(/^`webhookUrl` may not be the URL registered with the service/);
    expect(diagnosis.message).not.toContain('came to your `webhookUrl` unchanged');
  });

  it('takes a pinned webhookUrl spelled otherwise (port 443, letter case) for the callback URL the body names', async () => {
    const registered = 'https://shop.example.kg/webhooks/payments';
    const revived = await revivedWebDelivery(registered);
    for (const webhookUrl of [
      registered,
      'https://shop.example.kg:443/webhooks/payments',
      'https://Shop.Example.KG/webhooks/payments',
    ]) {
      const diagnosis = await explainVerificationFailure(revived, { ...testKeys, webhookUrl });
      expect(diagnosis.message, webhookUrl).toContain('The request came to your `webhookUrl` unchanged.');
      expect(diagnosis.fix, webhookUrl).toBeNull();
      // Through a proxy that rewrote Host: not at the pin, but the body names it, so it is no lead either.
      const proxied = { ...revived, headers: { ...revived.headers, host: 'internal:8080' } };
      expect((await explainVerificationFailure(proxied, { ...testKeys, webhookUrl })).fix, webhookUrl).toBeNull();
    }
  });

  // A query written otherwise but signed alike (+ for a space, an escaped digit, a trailing &) is the same URL.
  it('takes a pinned query written otherwise but signed alike for the one the body names', async () => {
    const registered = 'https://shop.example.kg/webhooks/payments?shop=7&ref=a+b';
    const revived = await revivedWebDelivery(registered, { host: 'internal:8080' });
    for (const query of ['ref=a+b&shop=7', 'shop=7&ref=a%20b', 'shop=%37&ref=a+b', 'shop=7&ref=a+b&']) {
      const webhookUrl = `https://shop.example.kg/webhooks/payments?${query}`;
      expect((await explainVerificationFailure(revived, { ...testKeys, webhookUrl })).fix, query).toBeNull();
    }
  });

  // express.json({ reviver }) turned a number into text, or express.urlencoded({ type: '*/*' }) read the JSON as a form:
  // the request arrived at the pinned URL itself, so the URL is no lead and the body comes first.
  it('names a body a parser changed first, not the pinned webhookUrl, when the request arrived at that URL', async () => {
    const url = 'https://shop.example.kg/api/webhooks/payments?shop=42&tag=a';
    const signed = await delivery(url);
    const revived = signed.body.replace('"amount":100', '"amount":"100.00"');
    const asForm = JSON.stringify({ [signed.body]: '' });
    expect(revived).not.toBe(signed.body);
    for (const [body, headers] of [
      [revived, {}],
      [asForm, {}],
      // Behind a proxy that forwards the host it rewrote.
      [revived, { host: '127.0.0.1:3000', 'x-forwarded-host': 'shop.example.kg' }],
    ] as const) {
      const request = { ...received(signed, '/api/webhooks/payments?shop=42&tag=a', headers), body };
      const diagnosis = await explainVerificationFailure(request, { ...testKeys, webhookUrl: url });
      expect(diagnosis.code).toBe('SIGNATURE_MISMATCH');
      expect(diagnosis.changes).toEqual([]);
      expect(diagnosis.fix).toBeNull();
      expect(diagnosis.message).not.toContain('may not be the URL registered');
      expect(diagnosis.message).toContain(
        'The request came to your `webhookUrl` unchanged. Remaining causes, likeliest first: a parser or middleware changed the body before payhook read it (express.json() with a reviver,',
      );
      expect(diagnosis.message).toContain('a proxy changed or dropped an x-api-* header');
      expect(diagnosis.message).toContain(
        "or it was signed for another URL (another merchant's delivery, replayed to you)",
      );
    }
  });

  it('asks for it when there is no Host at all', async () => {
    const signed = await delivery('https://shop.example.kg/webhooks/payments');
    const { host: _host, ...hostless } = signed.headers;
    const diagnosis = await explainVerificationFailure(
      { ...signed, url: '/webhooks/payments', headers: hostless },
      testKeys,
    );
    expect(diagnosis.code).toBe('MISSING_HOST');
    expect(diagnosis.message).toContain('--registered-url');
  });

  it('does not ask for it when a forwarding header named a host (the body was tampered)', async () => {
    const signed = await delivery('https://shop.example.kg/webhooks/payments');
    const request = received(signed, '/webhooks/payments', {
      host: 'internal:8080',
      'x-forwarded-host': 'shop.example.kg',
    });
    const tampered = { ...request, body: signed.body.replace('"amount":100', '"amount":1000') };
    const diagnosis = await explainVerificationFailure(tampered, testKeys);
    expect(diagnosis.changes).toEqual([]);
    expect(diagnosis.message).not.toContain('--registered-url');
    expect(diagnosis.fix).toBeNull();
  });
});

describe('a stripped path prefix', () => {
  it('stripped by a proxy that says so (X-Forwarded-Prefix) is the proxy, without req.originalUrl', async () => {
    const signed = await delivery('https://shop.example.kg/shop-7/payhook-in');
    const diagnosis = await explainVerificationFailure(
      received(signed, '/payhook-in', { 'x-forwarded-prefix': '/shop-7' }),
      testKeys,
    );
    expect(diagnosis.changes).toEqual([{ part: 'path', received: '/payhook-in', expected: '/shop-7/payhook-in' }]);
    expect(diagnosis.fix).toContain('your proxy strips the prefix `/shop-7`');
    expect(diagnosis.fix).toContain("set `webhookUrl: 'https://shop.example.kg/shop-7/payhook-in'`");
    expect(diagnosis.fix).not.toContain('originalUrl');
    expect(diagnosis.fix).not.toContain('router');
  });

  it('stripped by a proxy that keeps the original in X-Original-URI is the proxy too', async () => {
    const signed = await delivery('https://shop.example.kg/api/hook');
    const diagnosis = await explainVerificationFailure(
      received(signed, '/hook', { 'x-original-uri': '/api/hook' }),
      testKeys,
    );
    expect(diagnosis.changes).toEqual([{ part: 'path', received: '/hook', expected: '/api/hook' }]);
    expect(diagnosis.fix).toContain('your proxy strips the prefix `/api`');
    expect(diagnosis.fix).not.toContain('originalUrl');
  });

  // payhook/node verifies req.originalUrl, so there a prefix (or a query) is lost before the app: a proxy. A router
  // loses it only for verifyWebhook code of your own given req.url.
  it('with no proxy trace names a proxy first, and a router only for your own verifyWebhook given req.url', async () => {
    const signed = await delivery('https://shop.example.kg/api/hook');
    const diagnosis = await explainVerificationFailure(received(signed, '/hook'), testKeys);
    expect(diagnosis.changes).toEqual([{ part: 'path', received: '/hook', expected: '/api/hook' }]);
    expect(diagnosis.fix).toContain('a proxy strips the prefix `/api` before your app');
    expect(diagnosis.fix).toContain(
      'or a router, if your own verifyWebhook call gets `req.url`, not `req.originalUrl` as payhook/node',
    );
    expect(diagnosis.fix).not.toContain('your router strips');
    const query = await delivery('https://shop.example.kg/hook?shop=7');
    const dropped = await explainVerificationFailure(received(query, '/hook'), {
      ...testKeys,
      registeredUrl: 'https://shop.example.kg/hook?shop=7',
    });
    expect(dropped.fix).toContain('the query string does not reach payhook: a proxy drops it');
    expect(dropped.fix).toContain('or a router, if your own verifyWebhook call gets `req.url`');
  });
});
