// One receiver, several shops: webhookUrl as a list or a function of the
// request, and the registered URL a delivery was signed for in the result,
// so the app reads its tenant from the signature, never from the request.
import { describe, expect, it } from 'vitest';
import { explainVerificationFailure } from '../src/explain/index.js';
import { verifyWebhook, type VerifyWebhookOptions } from '../src/verify-webhook.js';
import { PUBLIC_KEY, signDelivery, webhookBody } from './helpers/sign.js';
import { generateTestKeyPair } from '../src/testing/index.js';

const NOW = 1_763_712_345_678;
const SHOP = 'https://shop.example.kg';

/** A delivery the service signed for `registered` (path and query), sent to `sentTo`. */
function deliveryFor(registered: string, sentTo: string = registered) {
  const url = new URL(registered);
  const sent = new URL(sentTo);
  const delivery = signDelivery(webhookBody(), {
    timestamp: NOW,
    signedTarget: url.pathname + url.search,
    target: sent.pathname + sent.search,
  });
  return { method: delivery.method, url: delivery.target, headers: delivery.headers, body: delivery.body };
}

/** A delivery the service signed for `registered` (its host, path and query), sent to `target` with Host `host`. */
function sentThrough(registered: string, host: string, target: string) {
  const url = new URL(registered);
  const delivery = signDelivery(webhookBody(), {
    timestamp: NOW,
    host,
    signedHost: url.host,
    signedTarget: url.pathname + url.search,
    target,
  });
  return { method: delivery.method, url: delivery.target, headers: delivery.headers, body: delivery.body };
}

/** What explain names as changed in `request`, for a receiver with the webhookUrl list `list`. */
async function explainedChanges(request: Parameters<typeof explainVerificationFailure>[0], list: readonly string[]) {
  return (await explainVerificationFailure(request, { publicKeys: PUBLIC_KEY, now: NOW, webhookUrl: [...list] }))
    .changes;
}

async function outcome(
  request: ReturnType<typeof deliveryFor>,
  webhookUrl: NonNullable<VerifyWebhookOptions['webhookUrl']>,
) {
  const result = await verifyWebhook(request, { publicKeys: PUBLIC_KEY, now: NOW, webhookUrl });
  return result.ok ? { ok: true, webhookUrl: result.webhookUrl } : { ok: false, code: result.error.code };
}

describe('webhookUrl with a query', () => {
  const registered = `${SHOP}/webhooks/payments?shop=7`;

  it('verifies a delivery that carries the registered query, extra parameters allowed', async () => {
    expect(await outcome(deliveryFor(registered), registered)).toEqual({ ok: true, webhookUrl: registered });
    const extra = deliveryFor(registered, `${registered}&utm=x`);
    expect(await outcome(extra, registered)).toEqual({ ok: true, webhookUrl: registered });
  });

  it('refuses a genuine delivery resent with the parameter changed or removed (URL_MISMATCH)', async () => {
    for (const sentTo of [`${SHOP}/webhooks/payments?shop=8`, `${SHOP}/webhooks/payments`, `${registered}&shop=8`]) {
      expect(await outcome(deliveryFor(registered, sentTo), registered)).toEqual({ ok: false, code: 'URL_MISMATCH' });
    }
  });

  it('is explained by the parameter at fault', async () => {
    const request = deliveryFor(registered, `${SHOP}/webhooks/payments?shop=8`);
    const diagnosis = await explainVerificationFailure(request, {
      publicKeys: PUBLIC_KEY,
      now: NOW,
      webhookUrl: registered,
    });
    expect(diagnosis.code).toBe('URL_MISMATCH');
    expect(diagnosis.message).toContain('"shop"');
  });
});

describe('several registered URLs', () => {
  const seven = `${SHOP}/webhooks/payments?shop=7`;
  const eight = `${SHOP}/webhooks/payments?shop=8`;

  it('as a list: each delivery verifies for its own shop, and the result names it', async () => {
    expect(await outcome(deliveryFor(seven), [seven, eight])).toEqual({ ok: true, webhookUrl: seven });
    expect(await outcome(deliveryFor(eight), [seven, eight])).toEqual({ ok: true, webhookUrl: eight });
  });

  it("as a list: a delivery signed for shop 7 sent to shop 8's URL, or with no shop, is refused", async () => {
    expect(await outcome(deliveryFor(seven, eight), [seven, eight])).toEqual({ ok: false, code: 'SIGNATURE_MISMATCH' });
    const bare = deliveryFor(seven, `${SHOP}/webhooks/payments`);
    expect(await outcome(bare, [seven, eight])).toEqual({ ok: false, code: 'URL_MISMATCH' });
  });

  it('as a list: of several URLs that fit, the one with the most parameters, then the one for the Host', async () => {
    const bare = `${SHOP}/webhooks/payments`;
    // Whatever the order: `?shop=7` is the more specific fit of a request carrying shop=7.
    for (const list of [
      [bare, seven],
      [seven, bare],
    ]) {
      expect(await outcome(deliveryFor(seven), list)).toEqual({ ok: true, webhookUrl: seven });
      expect(await outcome(deliveryFor(bare), list)).toEqual({ ok: true, webhookUrl: bare });
    }
    // One path on two hosts: the request's Host picks.
    const a = 'https://a.example.kg/hook';
    const b = 'https://b.example.kg/hook';
    for (const [host, registered, headers] of [
      ['a.example.kg', a, {}],
      ['b.example.kg', b, {}],
      ['B.Example.kg', b, {}],
      ['b.example.kg:443', b, {}],
      // Behind a proxy: the forwarded host picks (the signature must still be one made for b).
      ['localhost:3000', b, { 'x-forwarded-host': 'b.example.kg' }],
    ] as const) {
      const delivery = signDelivery(webhookBody(), {
        timestamp: NOW,
        host,
        signedHost: new URL(registered).host,
        headers,
        target: '/hook',
      });
      const request = { method: delivery.method, url: delivery.target, headers: delivery.headers, body: delivery.body };
      expect(await outcome(request, [a, b])).toEqual({ ok: true, webhookUrl: registered });
    }
  });

  // A proxy that rewrites Host and adds no X-Forwarded-Host: nothing in the request tells a from b or c, the
  // signature does. Checked against the first alone, every delivery for b or c was refused, for days of retries.
  it('as a list: of URLs the request does not tell apart, the one the delivery was signed for', async () => {
    // Each registers one parameter the request carries: none outranks another.
    const a = 'https://a.example.kg/hook?shop=7';
    const b = 'https://b.example.kg/hook?x=1';
    const c = 'https://c.example.kg/hook?shop=7';
    const list = [a, b, c];
    const signedFor = (registered: string, host = 'localhost:3000') =>
      sentThrough(registered, host, '/hook?shop=7&x=1');
    for (const registered of list) {
      expect(await outcome(signedFor(registered), list), registered).toEqual({ ok: true, webhookUrl: registered });
      expect(await outcome(signedFor(registered), [...list].reverse()), registered).toEqual({
        ok: true,
        webhookUrl: registered,
      });
    }
    // Signed for none of them (another host), or forged: still refused.
    expect(await outcome(signedFor('https://d.example.kg/hook?shop=7'), list)).toEqual({
      ok: false,
      code: 'SIGNATURE_MISMATCH',
    });
    const forged = signedFor(b);
    expect(await outcome({ ...forged, body: forged.body.replace('"SUCCEEDED"', '"FAILED"') }, list)).toEqual({
      ok: false,
      code: 'SIGNATURE_MISMATCH',
    });
  });

  it('as a list: explain judges URLs the request does not tell apart as verifyWebhook does', async () => {
    const list = ['https://a.example.kg/hook', 'https://b.example.kg/hook'];
    const forB = (timestamp: number) => {
      const delivery = signDelivery(webhookBody(), {
        timestamp,
        host: 'localhost:3000',
        signedHost: 'b.example.kg',
        target: '/hook',
      });
      return { method: delivery.method, url: delivery.target, headers: delivery.headers, body: delivery.body };
    };
    const options = { publicKeys: PUBLIC_KEY, now: NOW, webhookUrl: list };
    const fresh = await explainVerificationFailure(forB(NOW), options);
    expect([fresh.ok, fresh.code]).toEqual([true, null]);
    // Stale: verifyWebhook says so, and so does explain (not SIGNATURE_MISMATCH, judged against a alone).
    const stale = forB(NOW - 600_000);
    expect(await outcome(stale, list)).toEqual({ ok: false, code: 'TIMESTAMP_OUT_OF_WINDOW' });
    expect((await explainVerificationFailure(stale, options)).code).toBe('TIMESTAMP_OUT_OF_WINDOW');
  });

  // The search for what changed tries each tie's host too: a delivery for b that a proxy also changed (an added
  // x-api-* header) is explained, not "no likely cause" from a's host alone, nor as signed for another URL.
  it('as a list: explain finds what changed in a delivery for a later URL the request does not tell apart', async () => {
    const list = ['https://a.example.kg/hook', 'https://b.example.kg/hook'];
    const delivery = signDelivery(webhookBody(), {
      timestamp: NOW,
      host: 'localhost:3000',
      signedHost: 'b.example.kg',
      target: '/hook',
    });
    const request = {
      method: delivery.method,
      url: delivery.target,
      headers: { ...delivery.headers, 'x-api-trace': 'added-by-proxy' },
      body: delivery.body,
    };
    expect(await outcome(request, list)).toEqual({ ok: false, code: 'SIGNATURE_MISMATCH' });
    const explained = await explainVerificationFailure(request, { publicKeys: PUBLIC_KEY, now: NOW, webhookUrl: list });
    // b is registered: its host is no change, and nothing tells the merchant to replace webhookUrl.
    expect(explained.changes).toEqual([{ part: 'header', received: 'x-api-trace', expected: '' }]);
    expect(explained.fix).toMatch(/^stop your proxy or gateway from adding `x-api-trace`/);
  });

  // Entries whose paths end alike tie on one host once a framework strips the mount point (/b for /a/b and /c/b):
  // explain searches each tie's path too, and judges from the one found.
  it('as a list: explain finds what changed in a delivery for a later entry whose path ends alike', async () => {
    const a = `${SHOP}/a/b`;
    const c = `${SHOP}/c/b`;
    const d = `${SHOP}/d/b`;
    for (const [signedFor, list] of [
      [c, [a, c]],
      [a, [c, a]],
      [d, [a, c, d]],
    ] as const) {
      const delivery = deliveryFor(signedFor, `${SHOP}/b`);
      const request = { ...delivery, headers: { ...delivery.headers, 'x-api-trace': 'gw' } };
      expect(await outcome(request, [...list])).toEqual({ ok: false, code: 'SIGNATURE_MISMATCH' });
      expect(await explainedChanges(request, list), signedFor).toEqual([
        { part: 'header', received: 'x-api-trace', expected: '' },
      ]);
    }
  });

  // Each tie is also tried whole, past the caps of hosts, paths and queries tried one by one: ties that differ by host
  // and path at once (behind a proxy naming neither), by query alone, or the ninth host on one path.
  it('as a list: explain finds what changed in a delivery for any URL the request does not tell apart', async () => {
    const many = Array.from({ length: 9 }, (_, n) => `https://s${n}.example/hook`);
    for (const [signedFor, list, url, host] of [
      ['https://c.example/y/hook', ['https://a.example/x/hook', 'https://c.example/y/hook'], '/hook', 'internal:8080'],
      [`${SHOP}/hook?b=2`, [`${SHOP}/hook?a=1`, `${SHOP}/hook?b=2`], '/hook?a=1&b=2', 'shop.example.kg'],
      [
        `${SHOP}/hook?c=3`,
        [`${SHOP}/hook?a=1`, `${SHOP}/hook?b=2`, `${SHOP}/hook?c=3`],
        '/hook?a=1&b=2&c=3',
        'shop.example.kg',
      ],
      [many[8]!, many, '/hook', 'internal:8080'],
    ] as const) {
      const delivery = sentThrough(signedFor, host, url);
      const request = { ...delivery, headers: { ...delivery.headers, 'x-api-trace': 'gw' } };
      expect(await outcome(request, [...list]), signedFor).toEqual({ ok: false, code: 'SIGNATURE_MISMATCH' });
      expect(await outcome(delivery, [...list]), signedFor).toEqual({ ok: true, webhookUrl: signedFor });
      expect(await explainedChanges(request, list), signedFor).toEqual([
        { part: 'header', received: 'x-api-trace', expected: '' },
      ]);
    }
  });

  // Trying each of nine ties whole must not spend the 600 checks before a common cause: a query dropped on the way
  // with six x-api-* headers a gateway added, and the configured key, both service keys, the test key and three more.
  it('as a list: explain still finds a dropped query and added headers within its budget, nine ties and seven keys', async () => {
    const list = Array.from({ length: 9 }, (_, n) => `https://s${n}.example/hook`);
    const signedFor = 'https://s0.example/hook?ref=1';
    const delivery = signDelivery(webhookBody({ fields: { amount: 100, webhook_url: signedFor } }), {
      timestamp: NOW,
      host: 'internal:8080',
      signedHost: 's0.example',
      signedTarget: '/hook?ref=1',
      target: '/hook',
    });
    const added = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`x-api-gw${i}`, 'v']));
    const request = {
      method: delivery.method,
      url: delivery.target,
      headers: { ...delivery.headers, ...added },
      body: delivery.body,
    };
    const alternativeKeys = Object.fromEntries(
      await Promise.all(['k1', 'k2', 'k3'].map(async (name) => [name, (await generateTestKeyPair()).publicKey])),
    ) as Record<string, string>;
    const explained = await explainVerificationFailure(request, {
      publicKeys: PUBLIC_KEY,
      now: NOW,
      webhookUrl: list,
      alternativeKeys,
    });
    expect(explained.changes.map((change) => change.part)).toEqual([
      'query',
      ...Object.keys(added).map(() => 'header'),
    ]);
    expect(explained.checks).toBeLessThanOrEqual(600);
  });

  // Each tie costs a signature check and the sender picks the Host: a forged request must not cost one per shop.
  it('as a list: tries no more than nine URLs the request does not tell apart', async () => {
    const list = Array.from({ length: 12 }, (_, n) => `https://shop${n}.example.kg/hook`);
    const signedFor = (registered: string) => {
      const delivery = signDelivery(webhookBody(), {
        timestamp: NOW,
        host: 'localhost:3000',
        signedHost: new URL(registered).host,
        target: '/hook',
      });
      return { method: delivery.method, url: delivery.target, headers: delivery.headers, body: delivery.body };
    };
    expect(await outcome(signedFor(list[8]!), list)).toEqual({ ok: true, webhookUrl: list[8] });
    expect(await outcome(signedFor(list[9]!), list)).toEqual({ ok: false, code: 'SIGNATURE_MISMATCH' });
    // Explained by the cap, not as a webhookUrl to replace with one URL.
    const explained = await explainVerificationFailure(signedFor(list[9]!), {
      publicKeys: PUBLIC_KEY,
      now: NOW,
      webhookUrl: list,
    });
    expect(explained.fix).toBe(
      '12 registered webhookUrl values share this path and the request names none of them by Host or X-Forwarded-Host, so only the first 9 are tried: have the proxy send X-Forwarded-Host, or give each shop a path of its own',
    );
    // Named by the Host (or X-Forwarded-Host), any of them is checked first, at no extra cost.
    const named = signDelivery(webhookBody(), { timestamp: NOW, host: 'shop11.example.kg', target: '/hook' });
    const request = { method: named.method, url: named.target, headers: named.headers, body: named.body };
    expect(await outcome(request, list)).toEqual({ ok: true, webhookUrl: list[11] });
  });

  it('as a list: a URL the request does not tell apart whose own escape is malformed is passed over, not thrown', async () => {
    const a = 'https://a.example.kg/hook?shop=7';
    const broken = 'https://b.example.kg/hook?x=%ZZ';
    const delivery = signDelivery(webhookBody(), {
      timestamp: NOW,
      host: 'localhost:3000',
      signedHost: 'a.example.kg',
      signedTarget: '/hook?shop=7',
      target: '/hook?shop=7&x=%ZZ',
    });
    const request = { method: delivery.method, url: delivery.target, headers: delivery.headers, body: delivery.body };
    const forged = { ...request, body: request.body.replace('"SUCCEEDED"', '"FAILED"') };
    expect(await outcome(forged, [a, broken])).toEqual({ ok: false, code: 'SIGNATURE_MISMATCH' });
    expect(await outcome(request, [a, broken])).toEqual({ ok: true, webhookUrl: a });
  });

  it('as a list: the parameters outrank the Host, and a Host with a port other than the default keeps it', async () => {
    const send = (host: string, signedFor: string, target: string) => {
      const delivery = signDelivery(webhookBody(), {
        timestamp: NOW,
        host,
        signedHost: new URL(signedFor).host,
        target,
      });
      return { method: delivery.method, url: delivery.target, headers: delivery.headers, body: delivery.body };
    };
    // Signed for a's ?shop=7, arriving with b's Host: a registers more of the request's parameters.
    const a = 'https://a.example.kg/hook?shop=7';
    const b = 'https://b.example.kg/hook';
    expect(await outcome(send('b.example.kg', a, '/hook?shop=7'), [b, a])).toEqual({ ok: true, webhookUrl: a });
    // Port 8080 is not stripped as :80 would be: the request's Host still names b.
    const a8080 = 'https://a.example.kg:8080/hook';
    const b8080 = 'https://b.example.kg:8080/hook';
    expect(await outcome(send('b.example.kg:8080', b8080, '/hook'), [a8080, b8080])).toEqual({
      ok: true,
      webhookUrl: b8080,
    });
  });

  it('as a list: a URL fits only a request to its own path, whatever the order of the list', async () => {
    const hook = `${SHOP}/hook`;
    const other = `${SHOP}/other`;
    for (const list of [
      [hook, other],
      [other, hook],
    ]) {
      expect(await outcome(deliveryFor(hook), list)).toEqual({ ok: true, webhookUrl: hook });
      expect(await outcome(deliveryFor(other), list)).toEqual({ ok: true, webhookUrl: other });
      // Paths no URL registers: another one, and one with an escape decodeURI refuses.
      for (const sentTo of [`${SHOP}/third`, `${SHOP}/hook%E0%A4%A`]) {
        expect(await outcome(deliveryFor(hook, sentTo), list)).toEqual({ ok: false, code: 'URL_MISMATCH' });
      }
    }
  });

  // Next.js basePath and Hono's app.mount hand the route the path without its mount point: one webhookUrl works
  // (its path is taken whatever the request's), and so does a list, each entry matched by the path it ends with.
  it('as a list: a request whose mount point a framework stripped fits the entry ending with its path', async () => {
    const a = `${SHOP}/api/shops/a`;
    const b = `${SHOP}/api/shops/b`;
    for (const list of [
      [a, b],
      [b, a],
    ]) {
      expect(await outcome(deliveryFor(b, `${SHOP}/shops/b`), list)).toEqual({ ok: true, webhookUrl: b });
      expect(await outcome(deliveryFor(a, `${SHOP}/a`), list)).toEqual({ ok: true, webhookUrl: a });
      // Signed for a, sent to what is left of b's path: checked against b, refused.
      expect(await outcome(deliveryFor(a, `${SHOP}/shops/b`), list)).toEqual({ ok: false, code: 'SIGNATURE_MISMATCH' });
      // Whole segments only, and never the root alone.
      for (const sentTo of [`${SHOP}/hops/b`, `${SHOP}/`, `${SHOP}/api/shops/b/c`]) {
        expect(await outcome(deliveryFor(b, sentTo), list), sentTo).toEqual({ ok: false, code: 'URL_MISMATCH' });
      }
    }
    // Escapes compared decoded, as an exact path's are.
    const accented = `${SHOP}/api/h%C3%A9`;
    expect(await outcome(deliveryFor(accented, `${SHOP}/h%c3%a9`), [accented, a])).toEqual({
      ok: true,
      webhookUrl: accented,
    });
    // A request path without its leading slash (not whole segments), or the root of an entry ending with one.
    const slashed = `${SHOP}/base/`;
    for (const [registered, url] of [
      [`${SHOP}/hook`, 'ook'],
      [slashed, '/'],
    ] as const) {
      const request = { ...deliveryFor(registered), url };
      expect(await outcome(request, [registered, `${SHOP}/other`]), url).toEqual({ ok: false, code: 'URL_MISMATCH' });
    }
    // An exact entry wins over one that only ends with the path.
    const short = `${SHOP}/shops/b`;
    expect(await outcome(deliveryFor(short), [b, short])).toEqual({ ok: true, webhookUrl: short });
  });

  it('as a list: a path escaped in other letter case is the same path', async () => {
    const registered = `${SHOP}/h%C3%A9`;
    const delivery = signDelivery(webhookBody(), { timestamp: NOW, signedTarget: '/h%C3%A9', target: '/h%c3%a9' });
    const request = { method: delivery.method, url: delivery.target, headers: delivery.headers, body: delivery.body };
    expect(await outcome(request, [registered, `${SHOP}/other`])).toEqual({ ok: true, webhookUrl: registered });
  });

  it('as a function of the request: one handler for /webhooks/payments/:shop', async () => {
    const webhookUrl = (request: { url: string }) => {
      const shop = /^\/webhooks\/payments\/(\d+)$/.exec(new URL(request.url, SHOP).pathname)?.[1];
      return shop === undefined ? undefined : `${SHOP}/webhooks/payments/${shop}`;
    };
    const for7 = `${SHOP}/webhooks/payments/7`;
    expect(await outcome(deliveryFor(for7), webhookUrl)).toEqual({ ok: true, webhookUrl: for7 });
    const resent = deliveryFor(for7, `${SHOP}/webhooks/payments/8`);
    expect(await outcome(resent, webhookUrl)).toEqual({ ok: false, code: 'SIGNATURE_MISMATCH' });
    const elsewhere = deliveryFor(for7, `${SHOP}/other`);
    expect(await outcome(elsewhere, webhookUrl)).toEqual({ ok: false, code: 'URL_MISMATCH' });
    // null, like undefined, is "no registered URL", not a misuse.
    expect(await outcome(deliveryFor(for7), () => null as unknown as undefined)).toEqual({
      ok: false,
      code: 'URL_MISMATCH',
    });
  });

  it('says the function returned no URL, not that none of a list fits', async () => {
    const result = await verifyWebhook(deliveryFor(seven), {
      publicKeys: PUBLIC_KEY,
      now: NOW,
      webhookUrl: () => undefined,
    });
    expect(result.ok ? undefined : result.error.message).toBe('The webhookUrl function returned no URL.');
    const listed = await verifyWebhook(deliveryFor(seven), {
      publicKeys: PUBLIC_KEY,
      now: NOW,
      webhookUrl: [`${SHOP}/x`],
    });
    expect(listed.ok ? undefined : listed.error.message).toMatch(/fits none of the registered webhookUrl values/);
  });

  it('refuses a function answer that is not a URL as a misuse', async () => {
    const request = deliveryFor(seven);
    await expect(
      verifyWebhook(request, { publicKeys: PUBLIC_KEY, webhookUrl: () => 'not a url' }),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(
      verifyWebhook(request, { publicKeys: PUBLIC_KEY, webhookUrl: (() => 7) as unknown as () => string }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(verifyWebhook(request, { publicKeys: PUBLIC_KEY, webhookUrl: [] })).rejects.toThrow(
      /at least one URL/,
    );
  });

  it('refuses a URL that names a query parameter twice: no delivery, not even to that URL, could match it', async () => {
    // The service signs the query as a map; such a URL answered every genuine delivery URL_MISMATCH.
    for (const twice of [`${SHOP}/hook?a=1&a=2`, `${SHOP}/hook?a=1&a=1`]) {
      for (const webhookUrl of [twice, [seven, twice], () => twice]) {
        await expect(verifyWebhook(deliveryFor(twice), { publicKeys: PUBLIC_KEY, webhookUrl })).rejects.toThrow(
          /names a query parameter more than once/,
        );
      }
    }
  });
});
