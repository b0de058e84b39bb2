// Realistic signed deliveries for the benchmarks, made with node:crypto and
// the `conformance-2048` test key pair (a key made for tests; never a real
// service key). The canonical string is built here by a small reference
// implementation of CONTRACT §1, independent of payhook, and the benchmark
// checks that payhook builds the same string for every delivery.
import { randomUUID, createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';

const fixture = (name) => JSON.parse(readFileSync(new URL(`../test/fixtures/${name}`, import.meta.url), 'utf8'));

const keys = fixture('keys.json');
/** The public half of the signing key, as PEM (what a merchant configures). */
export const PUBLIC_KEY_PEM = keys['conformance-2048'].publicKeyPem;
const privateKey = createPrivateKey(keys['conformance-2048'].privateKeyPem);
/** The public key as a cached node:crypto KeyObject (the raw baseline's key). */
export const PUBLIC_KEY_OBJECT = createPublicKey(PUBLIC_KEY_PEM);

/** A genuine signature (base64) of `canonical`: what the service would send for that delivery. */
export function signatureOf(canonical) {
  return sign('sha256', Buffer.from(canonical, 'utf8'), privateKey).toString('base64');
}

/** The Host the service signs for, i.e. the host of the merchant's webhook URL. */
export const HOST = 'shop.example.kg';

/**
 * The bodies of the conformance suite's valid deliveries (every variant of
 * spec §2: plain, signed-body with clientId, extended, card acceptance, WEB
 * data), as parsed templates with their request path and query.
 */
const TEMPLATES = fixture('requests.json')
  .filter((entry) => entry.expect.ok === true)
  .map((entry) => {
    const url = new URL(entry.request.url, `https://${HOST}`);
    return { path: url.pathname, query: url.search.slice(1), body: JSON.parse(entry.request.body) };
  });

const collator = new Intl.Collator('en-US');

/** CONTRACT §1, for the shapes used here: method, path, host and x-api-*, query, sorted body. */
export function referenceCanonical({ method, path, query, headers, body }) {
  const apiHeaders = Object.keys(headers)
    .map((name) => [name.toLowerCase(), headers[name]])
    .filter(([name]) => name.startsWith('x-api-'))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  let headerLine = `host:${headers.host}`;
  for (const [name, value] of apiHeaders) headerLine += `&${name}:${value}`;
  const lines = [method.toLowerCase(), decodeURI(path), headerLine];
  if (query !== '') {
    const params = new Map(new URLSearchParams(query));
    const names = [...params.keys()].sort();
    lines.push(names.map((n) => `${encodeURI(decodeURI(n))}=${encodeURI(decodeURI(params.get(n)))}`).join('&'));
  }
  const parsed = JSON.parse(body);
  const sorted = {};
  for (const key of Object.keys(parsed).sort(collator.compare)) sorted[key] = parsed[key];
  lines.push(JSON.stringify(sorted));
  return lines.join('\n');
}

/** A fresh delivery body from template `index`: new ids, dates near `now`. */
function freshBody(index, now) {
  const template = TEMPLATES[index % TEMPLATES.length];
  const body = structuredClone(template.body);
  const transactionId = randomUUID();
  const suffix = String(body.id).endsWith('_CREDIT') ? 'CREDIT' : 'DEBIT';
  body.id = `${transactionId}_${suffix}`;
  body.transactionId = transactionId;
  if (body.fields && typeof body.fields === 'object') body.fields.paymentId = randomUUID();
  body.transactionDate = now - 1000;
  if ('requestDate' in body) body.requestDate = now - 30_000;
  // The service sends compact JSON in its own key order (not sorted).
  return { template, transactionId, text: JSON.stringify(body) };
}

function assemble(index, now, signOne) {
  const { template, transactionId, text } = freshBody(index, now);
  const headers = {
    host: HOST,
    'content-type': 'application/json',
    'user-agent': 'payment-service',
    'x-api-timestamp': String(now),
  };
  const request = { method: 'POST', path: template.path, query: template.query, headers, body: text };
  const canonical = referenceCanonical(request);
  const canonicalBytes = Buffer.from(canonical, 'utf8');
  return signOne(canonicalBytes).then((signatureBytes) => {
    const signature = signatureBytes.toString('base64');
    headers.signature = signature;
    return {
      transactionId,
      method: 'POST',
      path: template.path,
      query: template.query,
      url: template.query === '' ? template.path : `${template.path}?${template.query}`,
      headers,
      body: text,
      bodyBytes: Buffer.from(text, 'utf8'),
      canonical,
      // The sorted query line with its newline ('' for none), for the floor figure.
      queryLine: template.query === '' ? '' : `${canonical.split('\n')[3]}\n`,
      canonicalBytes,
      signature,
      signatureBytes,
    };
  });
}

/**
 * `count` distinct signed deliveries cycling through every valid variant,
 * all with `x-api-timestamp` = `now`. Signing runs on libuv's thread pool
 * (node:crypto's async sign), so a large pool is made in parallel.
 */
export async function makeDeliveries(count, now = Date.now()) {
  const signAsync = (data) =>
    new Promise((resolve, reject) =>
      sign('sha256', data, privateKey, (error, signature) => (error ? reject(error) : resolve(signature))),
    );
  const out = new Array(count);
  const batch = 256;
  for (let start = 0; start < count; start += batch) {
    const jobs = [];
    for (let i = start; i < Math.min(count, start + batch); i++) {
      jobs.push(assemble(i, now, signAsync).then((delivery) => (out[i] = delivery)));
    }
    await Promise.all(jobs);
  }
  return out;
}

/** How many distinct body variants the deliveries cycle through. */
export const VARIANT_COUNT = TEMPLATES.length;
