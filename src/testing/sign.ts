import { buildCanonicalString } from '../canonical.js';
import { PayhookError } from '../errors.js';
import { encodeBase64 } from '../lib/base64.js';
import { isThenable } from '../lib/callback.js';
import { dateToMillis } from '../lib/clock.js';
import { importPrivateKey, type PrivateKeyInput } from './private-key.js';
import { TEST_KEY_PAIR } from './test-keys.js';

/**
 * Options for {@link signWebhook}.
 *
 * @example
 * ```ts
 * import type { SignWebhookOptions } from 'payhook/testing';
 *
 * const options: SignWebhookOptions = {
 *   url: 'https://shop.example.kg/webhooks/payments',
 *   timestamp: Date.now() - 10 * 60_000, // a stale delivery
 * };
 * ```
 */
export interface SignWebhookOptions {
  /**
   * Where the delivery goes: the callback URL registered with the service
   * (absolute), or a path with query when `host` is given. Its path and query
   * are signed.
   */
  url: string;
  /**
   * The key to sign with.
   * @defaultValue `TEST_KEY_PAIR.privateKey`
   */
  privateKey?: PrivateKeyInput | undefined;
  /**
   * The `x-api-timestamp` header: a time (milliseconds or `Date`), a string
   * sent and signed as given (to test malformed timestamps), or `null` to
   * send none. HTTP strips whitespace around a header value, so a padded
   * string (`' 1763712000000'`) only works with `verifyWebhook` directly;
   * {@link toRequest} and {@link sendWebhook} refuse it. Over HTTP, test a
   * malformed timestamp with one like `'12:00'`. Give the timestamp here or
   * as an `x-api-timestamp` in `headers`, not both: both is `INVALID_ARGUMENT`.
   * @defaultValue the `x-api-timestamp` of `headers` when it has one, else `Date.now()`
   */
  timestamp?: number | Date | string | null | undefined;
  /**
   * The `Host` header to sign. A `Host` in `headers` is signed as given
   * instead; both is `INVALID_ARGUMENT`.
   * @defaultValue the host (with port, when not the default one) of `url`
   */
  host?: string | undefined;
  /** The HTTP method. @defaultValue `'POST'` */
  method?: string | undefined;
  /**
   * More headers to send; the `x-api-*` ones are signed, as the service does.
   * An `x-api-timestamp` here is sent and signed as given, as a string
   * `timestamp` is, and may not be given with the `timestamp` option as well
   * (`INVALID_ARGUMENT`: which one was meant?).
   */
  headers?: Readonly<Record<string, string>> | undefined;
}

/**
 * A signed delivery: what the service would send. It has the shape
 * `verifyWebhook` accepts, so it can be verified directly, turned into a
 * `Request` ({@link toRequest}) or sent ({@link sendWebhook}).
 *
 * @example
 * ```ts
 * import { createTestWebhook, signWebhook, type SignedWebhook } from 'payhook/testing';
 *
 * const signed: SignedWebhook = await signWebhook(createTestWebhook(), { url: 'https://shop.example.kg/hook' });
 * console.log(signed.headers['signature']);
 * ```
 */
export interface SignedWebhook {
  /** The HTTP method (`POST`). */
  readonly method: string;
  /** The absolute URL the delivery is for. */
  readonly url: string;
  /**
   * Lower-cased header names: `host`, `content-type`, `x-api-timestamp`
   * (unless `timestamp: null`), `signature`, and any extra ones.
   */
  readonly headers: Readonly<Record<string, string>>;
  /** The JSON body, as sent. */
  readonly body: string;
  /** The canonical string that was signed (for debugging). */
  readonly canonical: string;
}

function resolveTimestamp(timestamp: SignWebhookOptions['timestamp']): string | undefined {
  if (timestamp === null) return undefined;
  if (timestamp === undefined) return String(Date.now());
  if (typeof timestamp === 'string') return timestamp;
  const ms = dateToMillis(timestamp);
  if (typeof ms !== 'number' || !Number.isSafeInteger(Math.round(ms)) || ms < 0) {
    throw new PayhookError(
      'INVALID_ARGUMENT',
      'The "timestamp" option must be a non-negative time in milliseconds, a Date, a string or null.',
    );
  }
  return String(Math.round(ms));
}

function resolveUrl(url: unknown, host: unknown): URL {
  if (typeof url !== 'string' || url === '') {
    throw new PayhookError(
      'INVALID_ARGUMENT',
      'signWebhook needs the "url" option: the callback URL registered with the service.',
    );
  }
  if (host !== undefined && typeof host !== 'string') {
    throw new PayhookError('INVALID_ARGUMENT', 'The "host" option must be a string: the Host header to sign.');
  }
  const absolute = /^[a-z][a-z0-9+.-]*:\/\//i.test(url);
  if (!absolute && host === undefined) {
    throw new PayhookError(
      'INVALID_ARGUMENT',
      `The url ${JSON.stringify(url)} is not absolute; give an absolute URL or the "host" option.`,
    );
  }
  let base: URL | undefined;
  try {
    // Only a relative url is resolved against the host; with an absolute one, host is just the Host header signed.
    if (!absolute) {
      // The URL parser would read a path, query, fragment or user out of it, none of which is a Host header.
      if (/[/?#@]/.test(host as string)) throw new TypeError('a host holds no "/", "?", "#" or "@"');
      base = new URL(`https://${host}`);
    }
  } catch (cause) {
    throw new PayhookError(
      'INVALID_ARGUMENT',
      `The "host" option ${JSON.stringify(host)} is not a host: give a name or address, with a port or not ("shop.example.kg:8443").`,
      { cause },
    );
  }
  try {
    return absolute ? new URL(url) : new URL(url.startsWith('/') ? url : `/${url}`, base);
  } catch (cause) {
    throw new PayhookError('INVALID_ARGUMENT', `The url ${JSON.stringify(url)} is not a valid URL.`, { cause });
  }
}

let encoder: TextEncoder | undefined;

/**
 * Signs a delivery exactly as the service does: builds the canonical string
 * of the request (with the same code the receiver uses, so it is
 * byte-identical), signs it with RSASSA-PKCS1-v1_5 / SHA-256 and returns the
 * request with its `signature`, `x-api-timestamp`, `Host` and
 * `content-type` headers and the body.
 *
 * The body may be an object (written with `JSON.stringify`) or JSON text
 * (sent byte for byte, so unusual spacing or number spelling can be tested).
 * `''`, `null` or `'null'` sign a delivery without a body: the canonical
 * string's body line is then empty, as the service signs one.
 *
 * What is signed is not checked for HTTP: a header value with whitespace
 * around it, for instance, verifies when given to `verifyWebhook` directly,
 * and {@link toRequest} and {@link sendWebhook} refuse it.
 *
 * @throws PayhookError `INVALID_ARGUMENT` for a missing or bad `url`,
 * `host` or `timestamp` (or one given both as an option and in `headers`),
 * `INVALID_KEY` for a key that cannot sign as the service does (a `CryptoKey`
 * must use SHA-256), `INVALID_BODY` for a body that is JSON but not an object (an array, a string), that is not
 * JSON, that `JSON.stringify` cannot write (a `BigInt`, a cycle), or that is
 * past the bounds every receiver holds bodies to (nested more than 64 levels
 * deep, more than 1,000 top-level members or 4,096 characters of top-level
 * names), `MALFORMED_PATH` / `MALFORMED_QUERY` for a URL the receiver could
 * not read either.
 *
 * @example
 * ```ts
 * import { createTestWebhook, signWebhook, TEST_KEY_PAIR } from 'payhook/testing';
 *
 * const signed = await signWebhook(createTestWebhook({ status: 'FAILED' }), {
 *   privateKey: TEST_KEY_PAIR.privateKey,
 *   url: 'https://shop.example.kg/webhooks/payments',
 *   timestamp: Date.now() - 6 * 60_000, // outside the 5-minute window
 * });
 * ```
 */
export async function signWebhook(delivery: object | string, options: SignWebhookOptions): Promise<SignedWebhook> {
  if (typeof options !== 'object' || options === null) {
    throw new PayhookError('INVALID_ARGUMENT', 'signWebhook needs options with at least "url".');
  }
  const url = resolveUrl(options.url, options.host);
  const host = options.host ?? url.host;
  const method = options.method ?? 'POST';
  if (isThenable(delivery)) {
    throw new PayhookError('INVALID_ARGUMENT', 'signWebhook takes the body, not a promise of it (await it first).');
  }
  let body: string | undefined;
  try {
    body = typeof delivery === 'string' ? delivery : JSON.stringify(delivery);
  } catch (cause) {
    // A BigInt, a cycle or a throwing toJSON: JSON.stringify's TypeError, which would otherwise escape as it is.
    throw new PayhookError('INVALID_BODY', `The delivery cannot be written as JSON: ${String(cause)}.`, { cause });
  }
  if (typeof body !== 'string') {
    throw new PayhookError('INVALID_BODY', 'The delivery must be a JSON object or JSON text.');
  }
  const headers: Record<string, string> = { host, 'content-type': 'application/json' };
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (options.host !== undefined && name.toLowerCase() === 'host') {
      throw new PayhookError(
        'INVALID_ARGUMENT',
        'The Host is given twice: as the "host" option and in "headers". Give one.',
      );
    }
    headers[name.toLowerCase()] = String(value);
  }
  if (headers['x-api-timestamp'] === undefined) {
    const timestamp = resolveTimestamp(options.timestamp);
    if (timestamp !== undefined) headers['x-api-timestamp'] = timestamp;
  } else if (options.timestamp !== undefined) {
    throw new PayhookError(
      'INVALID_ARGUMENT',
      'The timestamp is given twice: as the "timestamp" option and as an x-api-timestamp header in "headers". Give one.',
    );
  }
  delete headers['signature'];
  const canonical = buildCanonicalString({ method, path: url.pathname, headers, query: url.search, body });
  const key = await importPrivateKey(options.privateKey ?? TEST_KEY_PAIR.privateKey);
  encoder ??= new TextEncoder();
  const signature = await globalThis.crypto.subtle.sign('RSASSA-PKCS1-v1_5', key, encoder.encode(canonical));
  headers['signature'] = encodeBase64(new Uint8Array(signature));
  return { method, url: url.href, headers, body, canonical };
}

const notSendable = (problem: string, cause?: unknown): PayhookError =>
  new PayhookError(
    'INVALID_ARGUMENT',
    `The signed delivery cannot be sent over HTTP as it is: ${problem}. Pass it to verifyWebhook directly instead.`,
    cause === undefined ? undefined : { cause },
  );

/** A delivery as signWebhook resolves it, in an environment that can send it; else `INVALID_ARGUMENT` saying why. */
function checkSendable(signed: SignedWebhook): void {
  const given = signed as Partial<SignedWebhook> | null | undefined;
  if (typeof given?.url !== 'string' || typeof given.headers !== 'object' || given.headers === null) {
    const what = isThenable(given) ? 'a promise' : typeof given;
    throw new PayhookError(
      'INVALID_ARGUMENT',
      `Pass what signWebhook resolves to (await it), not ${what}: { method, url, headers, body }.`,
    );
  }
  // Jest's jsdom environment has no Request: the delivery is not at fault.
  if (typeof Request !== 'function') {
    throw new PayhookError(
      'INVALID_ARGUMENT',
      "No global Request in this environment (Jest's jsdom has none: run the test in the node environment).",
    );
  }
}

/**
 * What `Request` and `fetch` would refuse with a bare `TypeError`, or send
 * changed so that the signature no longer verifies, refused with
 * `INVALID_ARGUMENT` and a message that says why.
 */
function sendableInit(signed: SignedWebhook, url: string): RequestInit & { headers: Record<string, string> } {
  for (const [name, value] of Object.entries(signed.headers)) {
    if (!/^[\w!#$%&'*+.^`|~-]+$/.test(name)) {
      throw notSendable(`the header name ${JSON.stringify(name)} is not an HTTP token (no spaces or separators)`);
    }
    // HTTP carries bytes: a character above U+00FF (Cyrillic, say) or a control character has no place in a value.
    if (/[^\t\x20-\x7e\x80-\xff]/.test(value)) {
      throw notSendable(
        `the header ${JSON.stringify(name)} holds a character HTTP cannot carry (a control character such as NUL or a line break, or one above U+00FF); percent-encode text that is not Latin-1`,
      );
    }
    // HTTP strips whitespace around a value (`Headers` does too), so the signature would not verify on arrival.
    if (/^[\t ]|[\t ]$/.test(value)) {
      throw notSendable(
        `the header ${JSON.stringify(name)} has whitespace around its value, which HTTP strips; to test a malformed timestamp over HTTP, use a value such as "12:00"`,
      );
    }
  }
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(url)) {
    throw notSendable(
      'its URL holds credentials (user:password@), which fetch refuses to send; sign for the URL without them and pass an Authorization header in "headers"',
    );
  }
  const noBody = /^(?:GET|HEAD)$/i.test(signed.method);
  if (noBody && signed.body !== '') {
    throw notSendable(`a ${signed.method.toUpperCase()} request cannot carry a body; sign it with the body ''`);
  }
  return { method: signed.method, headers: { ...signed.headers }, ...(noBody ? {} : { body: signed.body }) };
}

function withoutHost(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (name !== 'host') out[name] = value;
  return out;
}

/** `new Request`, with what a runtime still refuses (a method such as `TRACE`) as `INVALID_ARGUMENT`. */
function newRequest(url: string, init: RequestInit): Request {
  try {
    return new Request(url, init);
  } catch (cause) {
    throw notSendable(String(cause), cause);
  }
}

/**
 * Turns a signed delivery into a Web `Request`, to call a fetch-style
 * handler (`payhook/web`, Hono, Next.js route handlers, Workers) directly.
 * Its URL is `signed.url`, so the handler sees the signed host and path.
 *
 * Where a `Request` cannot carry a Host header (browsers drop it), the
 * handler sees the URL's host: a delivery signed for another Host (the
 * `host` option) then verifies only at a receiver that pins `webhookUrl`.
 * Sign for the URL there, or pin `webhookUrl`.
 *
 * @throws PayhookError `INVALID_ARGUMENT` for what would not arrive
 * as signed: a header value with whitespace around it (which `Request`
 * strips, so the signature would never verify), a control character or one
 * above U+00FF in a header value, a header name that is not an HTTP token, a
 * body on a `GET` or `HEAD` (a delivery signed with the body `''` is sent
 * without one), a URL with credentials, or a method the runtime refuses.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from 'payhook/web';
 * import { createTestWebhook, signWebhook, toRequest, TEST_KEY_PAIR } from 'payhook/testing';
 *
 * const handler = createWebhookHandler({
 *   publicKeys: TEST_KEY_PAIR.publicKey,
 *   webhookUrl: 'https://shop.example.kg/webhooks/payments',
 *   onPayment: () => {},
 * });
 * const signed = await signWebhook(createTestWebhook(), { url: 'https://shop.example.kg/webhooks/payments' });
 * const response = await handler(toRequest(signed));
 * ```
 */
export function toRequest(signed: SignedWebhook): Request {
  checkSendable(signed);
  const init = sendableInit(signed, signed.url);
  try {
    return new Request(signed.url, init);
  } catch {
    // Runtimes that forbid setting Host (some throw; browsers drop it silently) carry the URL's host instead.
    return newRequest(signed.url, { ...init, headers: withoutHost(init.headers) });
  }
}

/**
 * Sends a signed delivery with `fetch` and resolves with the endpoint's
 * `Response`. With `baseUrl`, the delivery goes to that scheme, host and port
 * instead (the signed path and query stay): handy to reach a local server.
 * `fetch` then sends the target's own `Host`, just as a proxy in front of
 * your app would, so sign for the URL you send to — or configure the
 * receiver's `webhookUrl` with the signed one. A redirect is not followed:
 * the service does not follow one either, so a 3xx answer is what it would
 * get (and retry); a browser's `fetch` gives it as an opaque response of
 * status 0. `options.signal` bounds or cancels the request, as it
 * does `fetch`'s: `{ signal: AbortSignal.timeout(5_000) }` fails a test whose
 * endpoint never answers in 5 seconds instead of leaving it hanging until
 * the test runner's own timeout.
 *
 * @throws PayhookError `INVALID_ARGUMENT` for a `baseUrl` that is
 * not an absolute URL, a `signal` that is not an `AbortSignal`, or for what
 * would not arrive as signed, as {@link toRequest} refuses it (a header value
 * with whitespace around it, a header value or name HTTP cannot carry, a body
 * on a `GET` or `HEAD`, a URL with credentials when there is no `baseUrl`);
 * network errors reject as `fetch` rejects, and an aborted `signal` with its
 * reason (a `TimeoutError` `DOMException` for `AbortSignal.timeout`).
 *
 * @example
 * ```ts
 * import { createTestWebhook, sendWebhook, signWebhook } from 'payhook/testing';
 *
 * const signed = await signWebhook(createTestWebhook(), { url: 'http://127.0.0.1:3000/webhooks/payments' });
 * const response = await sendWebhook(signed, undefined, { signal: AbortSignal.timeout(5_000) });
 * console.log(response.status); // 200 when your endpoint accepted it
 * ```
 */
export async function sendWebhook(
  signed: SignedWebhook,
  baseUrl?: string,
  options?: { signal?: AbortSignal | undefined },
): Promise<Response> {
  checkSendable(signed);
  const signal = options?.signal;
  // As fetch tells an AbortSignal (by shape, so one from another realm passes), but with a coded error.
  if (signal !== undefined && (typeof signal?.aborted !== 'boolean' || typeof signal.addEventListener !== 'function')) {
    throw new PayhookError(
      'INVALID_ARGUMENT',
      'The "signal" option must be an AbortSignal, such as AbortSignal.timeout(5_000).',
    );
  }
  let target = signed.url;
  if (baseUrl !== undefined) {
    let base: URL;
    try {
      base = new URL(baseUrl);
    } catch (cause) {
      throw new PayhookError('INVALID_ARGUMENT', `The baseUrl ${JSON.stringify(baseUrl)} is not an absolute URL.`, {
        cause,
      });
    }
    const signedUrl = new URL(signed.url);
    target = `${base.origin}${signedUrl.pathname}${signedUrl.search}`;
  }
  const init = sendableInit(signed, target);
  // Built first so that what fetch would refuse is told apart from a network error (both a TypeError).
  return fetch(
    newRequest(target, { ...init, headers: withoutHost(init.headers), redirect: 'manual', signal: signal ?? null }),
  );
}
