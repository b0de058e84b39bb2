// What every runtime launcher runs: the conformance suite (test/conformance/
// suite.js) plus a smoke test of the Web handler, against the package the
// launcher loaded by its name. Runtime-neutral ESM: JSON fixtures come in
// through import attributes (Node ≥ 20.10, Deno, Bun, Chromium; esbuild
// inlines them for workerd), crypto from `globalThis.crypto.subtle`.
import canonical from '../fixtures/canonical.json' with { type: 'json' };
import keys from '../fixtures/keys.json' with { type: 'json' };
import requests from '../fixtures/requests.json' with { type: 'json' };
import signatures from '../fixtures/signatures.json' with { type: 'json' };
import { allCases, runCases } from '../conformance/suite.js';

export const fixtures = { canonical, signatures, requests, keys };

export const WEBHOOK_URL = 'https://shop.example.kg/webhooks/payments';

function derLength(length) {
  if (length < 0x80) return [length];
  const bytes = [];
  for (let rest = length; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return [0x80 | bytes.length, ...bytes];
}

function pemBytes(pem) {
  const base64 = pem.replace(/-----[^-]+-----|\s+/g, '');
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

/**
 * Imports the fixture's PKCS#1 (`BEGIN RSA PRIVATE KEY`) signing key: Web
 * Crypto reads only PKCS#8, so the PKCS#1 DER is wrapped in a PrivateKeyInfo
 * (version 0, rsaEncryption with NULL parameters, the key as OCTET STRING).
 */
export async function importSigningKey(privateKeyPem) {
  let der = pemBytes(privateKeyPem);
  if (privateKeyPem.includes('BEGIN RSA PRIVATE KEY')) {
    const algorithm = [0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00];
    const inner = [0x02, 0x01, 0x00, ...algorithm, 0x04, ...derLength(der.length)];
    const head = [0x30, ...derLength(inner.length + der.length), ...inner];
    const wrapped = new Uint8Array(head.length + der.length);
    wrapped.set(head, 0);
    wrapped.set(der, head.length);
    der = wrapped;
  }
  return crypto.subtle.importKey('pkcs8', der, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign']);
}

function toBase64(bytes) {
  let binary = '';
  for (const byte of new Uint8Array(bytes)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** A body the service could send: the first valid delivery of requests.json. */
export function sampleBody() {
  const vector = fixtures.requests.find((v) => v.expect.ok === true);
  if (!vector) throw new Error('requests.json holds no valid delivery');
  return vector.request.body;
}

/**
 * Signs a delivery the way the service does, with the `conformance-2048` test
 * key and the current time. The canonical string comes from the package's
 * `buildCanonicalString`, which the conformance cases check byte for byte.
 * @returns {Promise<{ url: string, method: string, headers: Record<string, string>, body: string }>}
 */
export async function signDelivery(api, body, { url = WEBHOOK_URL, timestamp = Date.now() } = {}) {
  const target = new URL(url);
  const headers = { host: target.host, 'content-type': 'application/json', 'x-api-timestamp': String(timestamp) };
  const canonicalString = api.buildCanonicalString({
    method: 'POST',
    path: target.pathname,
    headers,
    query: target.search,
    body,
  });
  const key = await importSigningKey(fixtures.keys['conformance-2048'].privateKeyPem);
  const signature = await crypto.subtle.sign('RSASSA-PKCS1-v1_5', key, new TextEncoder().encode(canonicalString));
  return { url, method: 'POST', headers: { ...headers, signature: toBase64(signature) }, body };
}

/** The same delivery with its amount changed after signing. */
export function tamper(delivery) {
  const parsed = JSON.parse(delivery.body);
  parsed.amount = Number(parsed.amount) + 1;
  return { ...delivery, body: JSON.stringify(parsed) };
}

function fail(message) {
  throw new Error(message);
}

async function answer(handler, delivery) {
  const response = await handler(
    new Request(delivery.url, { method: delivery.method, headers: delivery.headers, body: delivery.body }),
  );
  if (!(response instanceof Response)) fail(`the handler resolved ${String(response)}, not a Response`);
  return { status: response.status, text: await response.text() };
}

/**
 * The Web handler (`payhook/web`) in this runtime: a signed delivery is
 * answered 200 and handled once, its repetition 200 without a second run, a
 * tampered copy 401.
 */
export function webHandlerCases(api, web) {
  const calls = [];
  let handler;
  const publicKeys = fixtures.keys['conformance-2048'].publicKeyPem;
  const getHandler = () => {
    if (typeof web.createWebhookHandler !== 'function') fail('payhook/web exports no createWebhookHandler');
    handler ??= web.createWebhookHandler({
      publicKeys,
      webhookUrl: WEBHOOK_URL,
      onPayment: (webhook) => void calls.push(webhook.id),
    });
    return handler;
  };
  let signed;
  const delivery = async () => (signed ??= await signDelivery(api, sampleBody()));
  return [
    {
      name: 'web handler: a signed delivery is answered 200 and handled once',
      run: async () => {
        const { status, text } = await answer(getHandler(), await delivery());
        if (status !== 200) fail(`expected 200, got ${status}: ${text}`);
        if (calls.length !== 1) fail(`onPayment ran ${calls.length} times, expected once`);
      },
    },
    {
      name: 'web handler: the same delivery again is answered 200 without a second run',
      run: async () => {
        const { status, text } = await answer(getHandler(), await delivery());
        if (status !== 200) fail(`expected 200, got ${status}: ${text}`);
        if (calls.length !== 1) fail(`onPayment ran ${calls.length} times, expected once`);
      },
    },
    {
      name: 'web handler: a tampered delivery is answered 401 and not handled',
      run: async () => {
        const before = calls.length;
        const { status, text } = await answer(getHandler(), tamper(await delivery()));
        if (status !== 401) fail(`expected 401, got ${status}: ${text}`);
        if (calls.length !== before) fail('onPayment ran for a tampered delivery');
      },
    },
  ];
}

/** Counts the `JSON.parse` calls `run` makes (the global is put back after). */
async function parseCalls(run) {
  const parse = JSON.parse;
  let calls = 0;
  JSON.parse = (...args) => {
    calls++;
    return parse(...args);
  };
  try {
    return { result: await run(), calls };
  } finally {
    JSON.parse = parse;
  }
}

/**
 * A body over 8,192 characters is parsed only once its signature may
 * verify: the RSA public operation (BigInt, the key's modulus read through
 * `crypto.subtle.exportKey`) must pass a genuine signature in this runtime,
 * and rule out a random one without a parse.
 */
export function largeBodyCases(api) {
  const options = { publicKeys: fixtures.keys['conformance-2048'].publicKeyPem, webhookUrl: WEBHOOK_URL };
  const body = JSON.stringify({ ...JSON.parse(sampleBody()), pad: 'x'.repeat(9_000) });
  const random = () => toBase64(crypto.getRandomValues(new Uint8Array(256)));
  const verify = (delivery) => api.verifyWebhook({ ...delivery, url: delivery.url }, options);
  return [
    {
      name: 'large body: a signed one verifies',
      run: async () => {
        const result = await verify(await signDelivery(api, body));
        if (!result.ok) fail(`expected ok, got ${result.error.code}: ${result.error.message}`);
      },
    },
    {
      name: 'large body: a random signature is SIGNATURE_MISMATCH without a JSON.parse',
      run: async () => {
        const signed = await signDelivery(api, body);
        await verify(signed); // the keys are imported, and their numbers read, before counting
        const { result, calls } = await parseCalls(() =>
          verify({ ...signed, headers: { ...signed.headers, signature: random() } }),
        );
        if (result.ok || result.error.code !== 'SIGNATURE_MISMATCH') fail(`expected SIGNATURE_MISMATCH`);
        if (calls !== 0) fail(`JSON.parse ran ${calls} times for a signature no key can have made`);
      },
    },
    {
      name: 'large body: not JSON, with a random signature, is SIGNATURE_MISMATCH (the signature comes first)',
      run: async () => {
        const signed = await signDelivery(api, body);
        const result = await verify({
          ...signed,
          body: `${body},`,
          headers: { ...signed.headers, signature: random() },
        });
        if (result.ok || result.error.code !== 'SIGNATURE_MISMATCH') fail(`expected SIGNATURE_MISMATCH`);
      },
    },
    {
      name: 'large body: not JSON, with a signature the key made, is INVALID_BODY',
      run: async () => {
        const signed = await signDelivery(api, body);
        const result = await verify({ ...signed, body: `${body},` });
        if (result.ok || result.error.code !== 'INVALID_BODY') fail(`expected INVALID_BODY`);
      },
    },
    {
      name: 'a body nested 65 levels is INVALID_BODY before it is parsed',
      run: async () => {
        const signed = await signDelivery(api, body);
        const deep = `{"a":${'['.repeat(64)}${']'.repeat(64)}}`;
        const result = await verify({ ...signed, body: deep });
        if (result.ok || result.error.code !== 'INVALID_BODY') fail(`expected INVALID_BODY`);
      },
    },
  ];
}

/**
 * A `CryptoKey` this runtime's own Web Crypto imported is taken as a key, extractable or not: it is told from a
 * look-alike object by its class string, which workerd before compatibility date 2024-09-26 does not give.
 */
export function cryptoKeyCases(api) {
  return [false, true].map((extractable) => ({
    name: `a ${extractable ? '' : 'non-'}extractable CryptoKey of this runtime verifies a signed delivery`,
    run: async () => {
      const der = pemBytes(fixtures.keys['conformance-2048'].publicKeyPem);
      const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
      const key = await crypto.subtle.importKey('spki', der, algorithm, extractable, ['verify']);
      const signed = await signDelivery(api, sampleBody());
      const result = await api.verifyWebhook(signed, { publicKeys: key, webhookUrl: WEBHOOK_URL });
      if (!result.ok) fail(`expected ok, got ${result.error.code}: ${result.error.message}`);
    },
  }));
}

// Printable ASCII in the order of Node's en-US collator (the service's signer sorts top-level keys so).
const ASCII_IN_COLLATION_ORDER =
  ' _-,;:!?.\'"()[]{}@*/\\&#%`^+<=>|~$0123456789aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpPqQrRsStTuUvVwWxXyYzZ';

/**
 * Top-level keys are sorted by the runtime's own `en-US` collator, so a canonical string is the service's only where
 * that collator orders as Node's does: for printable ASCII, the characters of real deliveries' keys, it must.
 */
export function keyOrderCases(api) {
  return [
    {
      name: "top-level keys of printable ASCII sort as Node's en-US collator sorts them",
      run: () => {
        // `k` first: JavaScript puts integer-like keys (`"0"`) before the others in an object.
        const reversed = [...ASCII_IN_COLLATION_ORDER].reverse().map((char) => [`k${char}`, 0]);
        const head = { method: 'POST', path: '/', headers: { host: 'h' }, query: null };
        const line = api.buildCanonicalString({ ...head, body: JSON.stringify(Object.fromEntries(reversed)) });
        const order = Object.keys(JSON.parse(line.split('\n').at(-1)))
          .map((key) => key.slice(1))
          .join('');
        if (order !== ASCII_IN_COLLATION_ORDER) fail(`printable ASCII sorts as ${JSON.stringify(order)}`);
      },
    },
  ];
}

/** Every case a runtime runs: conformance vectors, large bodies, CryptoKeys, key order, then the Web handler. */
export function runtimeCases(api, web) {
  return [
    ...allCases(api, fixtures),
    ...largeBodyCases(api),
    ...cryptoKeyCases(api),
    ...keyOrderCases(api),
    ...webHandlerCases(api, web),
  ];
}

/** Runs every case and prints `<label>: N passed, N failed`. */
export function runAll(api, web, label, log = console.log) {
  return runCases(runtimeCases(api, web), { label, log });
}
