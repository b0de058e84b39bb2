/**
 * verifyWebhook: the spec's receiver checks (signature, timestamp window,
 * payload) on one delivery, in order, reporting the first failure by code.
 *
 * @module
 */
import { isPayhookError, PayhookError, type PayhookIssue } from './errors.js';
import { checkTimestamp, type FreshnessOptions } from './freshness.js';
import type { KeyInput, KeyOptions } from './keys.js';
import { assembleCanonical } from './lib/canonical.js';
import { resolveClock } from './lib/clock.js';
import { forEachHeader, getHeader } from './lib/headers.js';
import { parseJsonBody, type JsonObject } from './lib/json-body.js';
import { importVerificationKeys } from './lib/key-import.js';
import type { BodyInput, HeadersInput, HeadersLike } from './request.js';
import { SERVICE_PUBLIC_KEYS, type ServiceEnvironment } from './service-keys.js';
import { verifySignature } from './signature.js';
import { validateWebhookObject } from './webhook/parse.js';
import type { PaymentWebhook } from './webhook/types.js';

/**
 * One delivery as it reached your server. `url` is absolute
 * (`https://shop.example.kg/hook?x=1`) or the request target (`/hook?x=1`,
 * what Node's `req.url` holds), still percent-encoded.
 *
 * @example
 * ```ts
 * import type { WebhookRequest } from 'payhook';
 *
 * const request: WebhookRequest = {
 *   method: req.method,
 *   url: req.url,
 *   headers: req.headers,
 *   body: rawBody,
 * };
 * ```
 */
export interface WebhookRequest {
  /** The HTTP method; the service sends `POST`. */
  method: string;
  /** Absolute URL, or path plus query. */
  url: string;
  /** All request headers: a `Headers` or a plain object (any letter case). */
  headers: HeadersInput;
  /**
   * The body: raw text or bytes as received, or the object a body parser
   * (`express.json()`, `await request.json()`) already produced.
   */
  body: BodyInput;
}

/**
 * Options of {@link verifyWebhook}. Give the keys with `publicKeys`, or name
 * the service's environment(s) with `environment` (the keys ship with
 * payhook), or both.
 *
 * @example
 * ```ts
 * import type { VerifyWebhookOptions } from 'payhook';
 *
 * const options: VerifyWebhookOptions = {
 *   environment: 'production',
 *   webhookUrl: 'https://shop.example.kg/webhooks/payments',
 * };
 * ```
 */
export interface VerifyWebhookOptions extends KeyOptions, FreshnessOptions {
  /**
   * Public key(s) the signature may verify with (PEM, JWK or CryptoKey).
   * Several keys: any of them may verify (key rotation).
   */
  publicKeys?: KeyInput | readonly KeyInput[];
  /**
   * The service environment(s) whose shipped key(s) to accept:
   * `'production'`, `'beta'`, or both. Added to `publicKeys` when both are
   * given.
   */
  environment?: ServiceEnvironment | readonly ServiceEnvironment[];
  /**
   * The largest body accepted, in bytes, checked before the body is parsed
   * (`BODY_TOO_LARGE`). An already parsed body is not measured: the body
   * parser that produced it applied its own limit.
   * @defaultValue 1 048 576 (1 MiB)
   */
  maxBodyBytes?: number;
  /**
   * The callback URL you registered with the service, absolute. When set,
   * the host, path and query of the canonical string come from it rather
   * than from the request, which a proxy, load balancer or router may have
   * rewritten. It also pins the host: a delivery the service signed for
   * another endpoint never verifies at yours, whatever `Host` it arrives
   * with. Recommended in production.
   */
  webhookUrl?: string;
  /**
   * Take the host from `X-Forwarded-Host` (its first value) instead of
   * `Host`. Only safe when every request reaches you through a proxy that
   * overwrites that header: otherwise a client chooses the host that is
   * checked. `webhookUrl` is the safer way and wins when both are set.
   * `X-Forwarded-Proto` is not needed: the scheme is not signed.
   * @defaultValue false
   */
  trustForwardedHeaders?: boolean;
  /**
   * Require every field of spec §2, `requestDate` included (real deliveries
   * of the signed-body variant omit it).
   * @defaultValue false
   */
  strict?: boolean;
}

/**
 * The codes {@link verifyWebhook} reports, in the order it checks.
 *
 * @example
 * ```ts
 * import type { VerifyWebhookErrorCode } from 'payhook';
 *
 * const isAuthFailure = (code: VerifyWebhookErrorCode): boolean =>
 *   code === 'MISSING_SIGNATURE' || code === 'SIGNATURE_MISMATCH' || code.includes('TIMESTAMP');
 * ```
 */
export type VerifyWebhookErrorCode =
  | 'MISSING_SIGNATURE'
  | 'BODY_TOO_LARGE'
  | 'INVALID_BODY'
  | 'MISSING_HOST'
  | 'MALFORMED_PATH'
  | 'MALFORMED_QUERY'
  | 'SIGNATURE_MISMATCH'
  | 'MISSING_TIMESTAMP'
  | 'MALFORMED_TIMESTAMP'
  | 'TIMESTAMP_OUT_OF_WINDOW'
  | 'INVALID_PAYLOAD';

/**
 * Why a delivery was refused: a stable `code`, a readable `message`, and for
 * `INVALID_PAYLOAD` the list of problems with their paths.
 *
 * @example
 * ```ts
 * import type { VerifyWebhookError } from 'payhook';
 *
 * const log = (error: VerifyWebhookError) => console.warn(error.code, error.message, error.issues ?? []);
 * ```
 */
export interface VerifyWebhookError {
  readonly code: VerifyWebhookErrorCode;
  readonly message: string;
  readonly issues?: readonly PayhookIssue[];
}

/**
 * The outcome of {@link verifyWebhook}: the typed webhook with the canonical
 * string and timestamp it was checked with, or the first failure.
 *
 * @example
 * ```ts
 * import type { VerifyWebhookResult } from 'payhook';
 *
 * function statusOf(result: VerifyWebhookResult): number {
 *   return result.ok ? 200 : result.error.code === 'INVALID_PAYLOAD' ? 400 : 401;
 * }
 * ```
 */
export type VerifyWebhookResult =
  | { readonly ok: true; readonly webhook: PaymentWebhook; readonly canonical: string; readonly timestamp: number }
  | { readonly ok: false; readonly error: VerifyWebhookError };

/** 1 MiB: real deliveries are a few kilobytes. */
export const DEFAULT_MAX_BODY_BYTES = 1_048_576;

const ENVIRONMENTS: ReadonlySet<string> = new Set<ServiceEnvironment>(['production', 'beta']);
const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
const CANONICAL_CODES: ReadonlySet<string> = new Set(['INVALID_BODY', 'MISSING_HOST', 'MALFORMED_PATH', 'MALFORMED_QUERY']);

function misuse(message: string): PayhookError {
  return new PayhookError('INVALID_ARGUMENT', message);
}

function failure(code: VerifyWebhookErrorCode, message: string, issues?: readonly PayhookIssue[]): VerifyWebhookResult {
  return { ok: false, error: issues === undefined ? { code, message } : { code, message, issues } };
}

/** Internal: a URL split into its raw parts, nothing decoded or normalised. */
export interface UrlParts {
  authority: string | undefined;
  path: string;
  query: string;
}

/**
 * Internal: splits an absolute URL or a request target (`/p?q`) without
 * `new URL` (which refuses relative input and normalises the path). The
 * path stays percent-encoded; the query is the raw text after `?`.
 */
export function splitUrl(url: string): UrlParts {
  let rest = url;
  const hash = rest.indexOf('#');
  if (hash !== -1) rest = rest.slice(0, hash);
  let authority: string | undefined;
  if (ABSOLUTE.test(rest)) {
    const start = rest.indexOf('://') + 3;
    let end = start;
    while (end < rest.length && rest[end] !== '/' && rest[end] !== '?') end++;
    authority = rest.slice(start, end);
    const at = authority.lastIndexOf('@');
    if (at !== -1) authority = authority.slice(at + 1);
    rest = rest.slice(end);
    if (rest === '' || rest[0] === '?') rest = '/' + rest;
  }
  const question = rest.indexOf('?');
  if (question === -1) return { authority, path: rest, query: '' };
  return { authority, path: rest.slice(0, question), query: rest.slice(question + 1) };
}

function utf8Length(text: string, limit: number): number {
  // Every UTF-16 unit is 1 to 3 UTF-8 bytes: most bodies need no count.
  if (text.length * 3 <= limit) return text.length;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
    if (bytes > limit) return bytes;
  }
  return bytes;
}

/** Internal: the size of a raw body in bytes; `undefined` for a parsed value. */
export function bodySize(body: BodyInput, limit: number): number | undefined {
  if (typeof body === 'string') return utf8Length(body, limit);
  if (typeof body === 'object' && body !== null && typeof (body as ArrayBuffer).byteLength === 'number') {
    const tag = Object.prototype.toString.call(body);
    if (tag === '[object Uint8Array]' || tag === '[object ArrayBuffer]' || body instanceof Uint8Array) {
      return (body as ArrayBuffer).byteLength;
    }
  }
  return undefined;
}

/** The request's headers with `host` replaced (webhookUrl, X-Forwarded-Host). */
function withHost(headers: HeadersInput, host: string): HeadersLike {
  return {
    get: (name) => (name.toLowerCase() === 'host' ? host : getHeader(headers, name) ?? null),
    forEach: (callback) => forEachHeader(headers, (name, value) => {
      if (name !== 'host') callback(value, name);
    }),
  };
}

function keyList(options: VerifyWebhookOptions): KeyInput[] {
  const keys: KeyInput[] = [];
  const { publicKeys, environment } = options;
  if (publicKeys !== undefined && publicKeys !== null) {
    if (Array.isArray(publicKeys)) keys.push(...(publicKeys as readonly KeyInput[]));
    else keys.push(publicKeys as KeyInput);
  }
  if (environment !== undefined && environment !== null) {
    const names: readonly unknown[] = Array.isArray(environment) ? environment : [environment];
    for (const name of names) {
      if (typeof name !== 'string' || !ENVIRONMENTS.has(name)) {
        throw misuse(`Unknown service environment ${JSON.stringify(name)}: use 'production', 'beta' or both.`);
      }
      keys.push(SERVICE_PUBLIC_KEYS[name as ServiceEnvironment]);
    }
  }
  if (keys.length === 0) {
    throw misuse(
      "verifyWebhook needs the service's public key: pass { environment: 'production' } (or 'beta'), or { publicKeys }.",
    );
  }
  return keys;
}

/** Internal: verifyWebhook with its options checked once and its keys imported once. */
export interface PreparedVerifier {
  verify(request: WebhookRequest): Promise<VerifyWebhookResult>;
  /** Resolves once the keys are imported; rejects with INVALID_KEY / WEAK_KEY. */
  ready(): Promise<unknown>;
  readonly maxBodyBytes: number;
}

/**
 * Internal: checks the options (throwing `INVALID_ARGUMENT` for misuse) and
 * returns a verifier that imports the keys once. The handlers keep one per
 * handler; {@link verifyWebhook} builds one per call (the key cache makes
 * that cheap).
 */
export function prepareVerifier(options: VerifyWebhookOptions): PreparedVerifier {
  if (typeof options !== 'object' || options === null) {
    throw misuse("verifyWebhook needs options with the service's keys: { environment: 'production' } or { publicKeys }.");
  }
  const keys = keyList(options);
  resolveClock(options); // validates `now` and `toleranceMs` now, not per delivery
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (typeof maxBodyBytes !== 'number' || !(maxBodyBytes > 0)) {
    throw misuse('maxBodyBytes must be a number of bytes greater than 0 (Infinity for no limit).');
  }
  let pinned: UrlParts | undefined;
  if (options.webhookUrl !== undefined) {
    if (typeof options.webhookUrl !== 'string' || !ABSOLUTE.test(options.webhookUrl)) {
      throw misuse(`webhookUrl must be the absolute URL you registered with the service, like 'https://shop.example.kg/webhooks/payments'.`);
    }
    let parsed: URL;
    try {
      parsed = new URL(options.webhookUrl);
    } catch (cause) {
      throw new PayhookError('INVALID_ARGUMENT', `webhookUrl is not a valid URL: ${JSON.stringify(options.webhookUrl)}.`, { cause });
    }
    // The host as an HTTP client sends it for this URL (lower case, punycode,
    // no default port); path and query as the service requests them.
    pinned = { authority: parsed.host, path: parsed.pathname, query: parsed.search.slice(1) };
  }
  const trustForwarded = options.trustForwardedHeaders === true;
  const keyOptions: KeyOptions = options.allowWeakKeys === true ? { allowWeakKeys: true } : {};
  const strict = options.strict === true;
  const clockOptions: FreshnessOptions = {};
  if (options.now !== undefined) clockOptions.now = options.now;
  if (options.toleranceMs !== undefined) clockOptions.toleranceMs = options.toleranceMs;

  let imported: Promise<CryptoKey[]> | undefined;
  function importKeys(): Promise<CryptoKey[]> {
    if (imported === undefined) {
      const attempt = importVerificationKeys(keys, keyOptions);
      imported = attempt;
      // A key that fails to import is a configuration error: report it on
      // every call rather than remembering the failure.
      attempt.catch(() => {
        if (imported === attempt) imported = undefined;
      });
    }
    return imported;
  }

  async function verify(request: WebhookRequest): Promise<VerifyWebhookResult> {
    if (typeof request !== 'object' || request === null) throw misuse('verifyWebhook needs a request { method, url, headers, body }.');
    const { method, url, headers, body } = request;
    if (typeof method !== 'string') throw misuse('request.method must be a string.');
    if (typeof url !== 'string') throw misuse('request.url must be a string (absolute, or path and query).');
    if (typeof headers !== 'object' || headers === null) throw misuse('request.headers must be a Headers or a plain object.');
    const cryptoKeys = await importKeys();

    const signature = getHeader(headers, 'signature');
    if (signature === undefined || signature === '') {
      return failure('MISSING_SIGNATURE', 'The request has no signature header: it was not signed by the service.');
    }

    const size = bodySize(body, maxBodyBytes);
    if (size !== undefined && size > maxBodyBytes) {
      return failure('BODY_TOO_LARGE', `The body has ${size} bytes or more; at most ${maxBodyBytes} are accepted.`);
    }

    let parsed: JsonObject | null;
    let canonical: string;
    try {
      parsed = parseJsonBody(body);
      const parts = pinned ?? splitUrl(url);
      let host: string | undefined;
      if (pinned !== undefined) host = pinned.authority;
      else if (trustForwarded) {
        const forwarded = getHeader(headers, 'x-forwarded-host');
        if (forwarded !== undefined) host = forwarded.split(',')[0]?.trim();
      }
      // No Host header (some HTTP/2 stacks): an absolute URL's authority is
      // what the client addressed.
      if (host === undefined && parts.authority !== undefined && getHeader(headers, 'host') === undefined) {
        host = parts.authority;
      }
      canonical = assembleCanonical(
        { method, path: parts.path, headers: host === undefined || host === '' ? headers : withHost(headers, host), query: parts.query },
        parsed,
      );
    } catch (error) {
      if (isPayhookError(error) && CANONICAL_CODES.has(error.code)) {
        return failure(error.code as VerifyWebhookErrorCode, error.message);
      }
      throw error;
    }

    if (!(await verifySignature(canonical, signature, cryptoKeys, keyOptions))) {
      return failure(
        'SIGNATURE_MISMATCH',
        'The signature does not verify with the configured key(s): the body, a signed header, the host, path or query differ from what the service signed, or the key is for another environment.',
      );
    }

    const check = checkTimestamp(getHeader(headers, 'x-api-timestamp'), clockOptions);
    if (!check.ok) return failure(check.code, check.message);

    if (parsed === null) {
      return failure('INVALID_PAYLOAD', 'The body is empty: a webhook is a JSON object.', [{ path: '', message: 'the body is empty' }]);
    }
    const validation = validateWebhookObject(parsed, { strict });
    if (!validation.success) {
      return failure('INVALID_PAYLOAD', validation.error.message, validation.error.issues);
    }
    return { ok: true, webhook: validation.webhook, canonical, timestamp: check.timestamp };
  }

  return { verify, ready: importKeys, maxBodyBytes };
}

/**
 * Verifies one delivery the way the spec's receiver must (§4.1), checking in
 * this order and reporting the first failure by code:
 *
 * 1. `MISSING_SIGNATURE` — no `signature` header (or an empty one).
 * 2. `BODY_TOO_LARGE` — a raw body over `maxBodyBytes`, before parsing.
 * 3. The canonical string cannot be built: `INVALID_BODY` (not JSON, or not
 *    an object), `MISSING_HOST`, `MALFORMED_PATH`, `MALFORMED_QUERY`.
 * 4. `SIGNATURE_MISMATCH` — no key verifies it (this includes an
 *    `x-api-timestamp` added, removed or changed after signing).
 * 5. `MISSING_TIMESTAMP`, `MALFORMED_TIMESTAMP`, `TIMESTAMP_OUT_OF_WINDOW`.
 * 6. `INVALID_PAYLOAD` — signed and fresh, but not a webhook of spec §2
 *    (`error.issues` lists each problem).
 *
 * The body is decoded and `JSON.parse`d once; the parsed object serves the
 * canonical string and the payment model. PEM keys are imported once per
 * process and cached. It never throws for a bad delivery — it resolves
 * `{ ok: false, error }` — and throws only for misuse: no key configured,
 * an unusable key (`INVALID_KEY`, `WEAK_KEY`), or options or a request of
 * the wrong type (`INVALID_ARGUMENT`).
 *
 * It does not deduplicate: the service delivers at least once. The handlers
 * in `payhook/web` and `payhook/node` add that.
 *
 * @example
 * ```ts
 * import { verifyWebhook } from 'payhook';
 *
 * export async function POST(request: Request): Promise<Response> {
 *   const result = await verifyWebhook(
 *     { method: request.method, url: request.url, headers: request.headers, body: await request.text() },
 *     { environment: 'production', webhookUrl: 'https://shop.example.kg/webhooks/payments' },
 *   );
 *   if (!result.ok) return Response.json({ code: result.error.code }, { status: 401 });
 *   await markOrderPaid(result.webhook.fields.paymentId, result.webhook.status);
 *   return new Response(null, { status: 200 });
 * }
 * ```
 */
export async function verifyWebhook(request: WebhookRequest, options: VerifyWebhookOptions): Promise<VerifyWebhookResult> {
  return prepareVerifier(options).verify(request);
}
