// The two bare receivers payhook's handlers are measured against. Each does by hand the work a delivery needs and
// nothing more: read the body (bounded), parse it once, build the canonical string as CONTRACT §1 says (path via
// decodeURI, Host and x-api-* headers sorted, the query line, the body's top-level keys sorted by the en-US
// collator), check the x-api-timestamp window (±5 minutes), verify the RSA signature with a key imported once and
// kept, and look the delivery's id up in a Map to answer a redelivery without handling it again. Nothing is
// precomputed from the deliveries the load generator sends.
//
// One uses node:crypto (a KeyObject, synchronous verify) on node:http; the other uses Web Crypto (a CryptoKey,
// subtle.verify) as a fetch handler, served through the same @hono/node-server adaptor as payhook/web.
import { Buffer } from 'node:buffer';
import { createPublicKey, verify } from 'node:crypto';

const MAX_BODY_BYTES = 1_048_576;
const TOLERANCE_MS = 300_000;
const DIGITS = /^[0-9]+$/;
const collator = new Intl.Collator('en-US');
const encoder = new TextEncoder();
const JSON_HEADERS = { 'content-type': 'application/json' };

class Refused extends Error {
  constructor(status, code) {
    super(code);
    this.status = status;
  }
}

/**
 * The canonical string (CONTRACT §1) from the request's parts: `target` is the path with its query as received,
 * `apiHeaders` the x-api-* headers as [lower-cased name, value] pairs in any order, `parsed` the body's JSON value.
 */
export function canonicalString(method, target, host, apiHeaders, parsed) {
  const mark = target.indexOf('?');
  const rawPath = mark === -1 ? target : target.slice(0, mark);
  const rawQuery = mark === -1 ? '' : target.slice(mark + 1);
  let path;
  try {
    path = decodeURI(rawPath);
  } catch {
    throw new Refused(400, 'MALFORMED_PATH');
  }
  apiHeaders.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  let headerLine = `host:${host}`;
  for (const [name, value] of apiHeaders) headerLine += `&${name}:${value}`;
  let text = `${method.toLowerCase()}\n${path}\n${headerLine}\n`;
  if (rawQuery !== '') {
    const params = [];
    for (const part of rawQuery.split('&')) {
      if (part === '') continue;
      const eq = part.indexOf('=');
      params.push(eq === -1 ? [part, ''] : [part.slice(0, eq), part.slice(eq + 1)]);
    }
    params.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    try {
      const pairs = params.map(([name, value]) => `${encodeURI(decodeURI(name))}=${encodeURI(decodeURI(value))}`);
      text += `${pairs.join('&')}\n`;
    } catch {
      throw new Refused(400, 'MALFORMED_QUERY');
    }
  }
  const sorted = {};
  for (const key of Object.keys(parsed).sort(collator.compare)) sorted[key] = parsed[key];
  return text + JSON.stringify(sorted);
}

function parseBody(text) {
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Refused(400, 'INVALID_BODY');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Refused(400, 'INVALID_BODY');
  if (typeof parsed.id !== 'string' || parsed.id === '') throw new Refused(400, 'INVALID_PAYLOAD');
  return parsed;
}

function checkTimestamp(value) {
  if (typeof value !== 'string' || !DIGITS.test(value)) throw new Refused(401, 'STALE_TIMESTAMP');
  if (Math.abs(Date.now() - Number(value)) > TOLERANCE_MS) throw new Refused(401, 'STALE_TIMESTAMP');
}

function signatureBytes(value) {
  if (typeof value !== 'string' || value === '') throw new Refused(401, 'INVALID_SIGNATURE');
  return Buffer.from(value, 'base64');
}

/** Counts first deliveries and answers redeliveries from a Map of the ids already handled. */
export function makeLedger() {
  const seen = new Map();
  let handled = 0;
  return {
    /** True for a first delivery (now recorded), false for a redelivery. */
    claim(id) {
      if (seen.has(id)) return false;
      seen.set(id, Date.now());
      handled++;
      return true;
    },
    stats: () => ({ handled }),
    reset() {
      handled = 0;
    },
  };
}

const answer = (fresh) => (fresh ? '{"ok":true}' : '{"ok":true,"duplicate":true}');
const refusal = (error) => `{"ok":false,"code":"${error.message}"}`;

/** node:http listener: node:crypto with a KeyObject made once. */
export function bareNodeReceiver(pem) {
  const key = createPublicKey(pem);
  const ledger = makeLedger();
  const listener = (req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, JSON_HEADERS).end('{"ok":false}');
      req.resume();
      return;
    }
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      try {
        if (size > MAX_BODY_BYTES) throw new Refused(413, 'BODY_TOO_LARGE');
        const { headers } = req;
        if (typeof headers.host !== 'string') throw new Refused(400, 'MISSING_HOST');
        const signature = signatureBytes(headers.signature);
        checkTimestamp(headers['x-api-timestamp']);
        const parsed = parseBody(Buffer.concat(chunks, size).toString('utf8'));
        const apiHeaders = [];
        for (const name of Object.keys(headers)) if (name.startsWith('x-api-')) apiHeaders.push([name, headers[name]]);
        const canonical = canonicalString(req.method, req.url, headers.host, apiHeaders, parsed);
        if (!verify('sha256', Buffer.from(canonical, 'utf8'), key, signature)) {
          throw new Refused(401, 'INVALID_SIGNATURE');
        }
        res.writeHead(200, JSON_HEADERS).end(answer(ledger.claim(parsed.id)));
      } catch (error) {
        if (!(error instanceof Refused)) throw error;
        res.writeHead(error.status, JSON_HEADERS).end(refusal(error));
      }
    });
  };
  return { listener, stats: ledger.stats, reset: ledger.reset };
}

/** The body's bytes read from `request.body` chunk by chunk, as a receiver that bounds its reads must. */
async function readStream(request) {
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      throw new Refused(413, 'BODY_TOO_LARGE');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

/**
 * Fetch handler (Request → Response): Web Crypto with a CryptoKey imported once. It reads the body with
 * `request.arrayBuffer()`, or with `stream: true` from `request.body` chunk by chunk (adaptors such as
 * @hono/node-server answer arrayBuffer() from the Node stream directly, but build a web stream for `body`).
 */
export async function bareWebReceiver(pem, { stream = false } = {}) {
  const spki = Buffer.from(pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''), 'base64');
  const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  const key = await globalThis.crypto.subtle.importKey('spki', spki, algorithm, false, ['verify']);
  const ledger = makeLedger();
  const respond = (status, body) => new Response(body, { status, headers: JSON_HEADERS });
  const fetch = async (request) => {
    if (request.method !== 'POST') return respond(405, '{"ok":false}');
    try {
      // A declared length over the limit is refused before the read; arrayBuffer() cannot stop part-way.
      if (Number(request.headers.get('content-length')) > MAX_BODY_BYTES) throw new Refused(413, 'BODY_TOO_LARGE');
      const bytes = stream ? await readStream(request) : new Uint8Array(await request.arrayBuffer());
      if (bytes.length > MAX_BODY_BYTES) throw new Refused(413, 'BODY_TOO_LARGE');
      const { headers } = request;
      const host = headers.get('host');
      if (host === null) throw new Refused(400, 'MISSING_HOST');
      const signature = signatureBytes(headers.get('signature') ?? '');
      checkTimestamp(headers.get('x-api-timestamp') ?? '');
      const parsed = parseBody(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8'));
      const apiHeaders = [];
      for (const [name, value] of headers) if (name.startsWith('x-api-')) apiHeaders.push([name, value]);
      const { url } = request;
      const slash = url.indexOf('/', url.indexOf('//') + 2);
      const target = slash === -1 ? '/' : url.slice(slash);
      const canonical = canonicalString(request.method, target, host, apiHeaders, parsed);
      if (!(await globalThis.crypto.subtle.verify(algorithm, key, signature, encoder.encode(canonical)))) {
        throw new Refused(401, 'INVALID_SIGNATURE');
      }
      return respond(200, answer(ledger.claim(parsed.id)));
    } catch (error) {
      if (!(error instanceof Refused)) throw error;
      return respond(error.status, refusal(error));
    }
  };
  return { fetch, stats: ledger.stats, reset: ledger.reset };
}
