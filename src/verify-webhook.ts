/** verifyWebhook: the spec's receiver checks on one delivery, in order, reporting the first failure by code. */
import { checkTimestamp } from './freshness.js';
import { resolveClock } from './lib/clock.js';
import { isPayhookError, type PayhookIssue } from './lib/errors.js';
import { getHeader } from './lib/headers.js';
import { bodySize, canonicalBody, checkJsonBody, parseJsonBody, type JsonObject } from './lib/json-body.js';
import { importKeys } from './lib/key-import.js';
import type { KeyInput, KeyOptions } from './lib/key-types.js';
import { misuse } from './lib/misuse.js';
import type { BodyInput, HeadersInput } from './lib/request-types.js';
import {
  couldBeSignature,
  signatureBytes,
  verifyWithKeys,
  withPublicNumbers,
  type KeysWithNumbers,
} from './lib/rsa-verify.js';
import { pinWebhookUrl, signedTarget, targetHead } from './lib/signed-target.js';
import { BETA_PUBLIC_KEY, PRODUCTION_PUBLIC_KEY, type ServiceEnvironment } from './service-keys.js';
import type { PaymentWebhook } from './webhook/types.js';
import { validateWebhookObject } from './webhook/validate.js';

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
export interface VerifyWebhookOptions extends KeyOptions {
  /**
   * The receiver's current time, in milliseconds or as a `Date`, or a
   * function that returns it, read once per delivery.
   * @defaultValue `Date.now()` at the time of each delivery
   */
  now?: number | Date | (() => number | Date);
  /**
   * How far `x-api-timestamp` may lie from `now`, in either direction,
   * boundary included.
   * @defaultValue 300 000 (5 minutes, the service's window)
   */
  toleranceMs?: number;
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
   *
   * Real deliveries are a few kilobytes, so the default of 64 KiB leaves them
   * ample room while bounding what any request can cost: every body is read
   * and scanned, and one whose signature may verify (a replayed genuine one)
   * is parsed, which costs more the more keys it holds. Raise it only if your
   * deliveries grow past it (`maxBodyBytes: 262_144`), never to "unlimited".
   * @defaultValue 65 536 (64 KiB, {@link DEFAULT_MAX_BODY_BYTES})
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

/**
 * The default `maxBodyBytes`: 64 KiB. Real deliveries are a few kilobytes;
 * pass a larger `maxBodyBytes` if yours are not.
 *
 * @example
 * ```ts
 * import { DEFAULT_MAX_BODY_BYTES, verifyWebhook } from 'payhook';
 *
 * await verifyWebhook(request, { environment: 'production', maxBodyBytes: DEFAULT_MAX_BODY_BYTES * 4 });
 * ```
 */
export const DEFAULT_MAX_BODY_BYTES = 65_536;

function failure(code: VerifyWebhookErrorCode, message: string, issues?: readonly PayhookIssue[]): VerifyWebhookResult {
  return { ok: false, error: { code, message, ...(issues && { issues }) } };
}

// A raw body larger than this (as bodySize counts it) is parsed only once
// couldBeSignature allows; real deliveries stay below it.
const EARLY_CHECK_SIZE = 8_192;

const MISMATCH =
  'The signature does not verify: body, Host, path, query or an x-api-* header changed, or the key is for another environment.';

/** Internal: verifyWebhook with its options checked once. */
export interface PreparedVerifier {
  verify(request: WebhookRequest): Promise<VerifyWebhookResult>;
  /** Resolves once the keys are imported; rejects with INVALID_KEY / WEAK_KEY. */
  ready(): Promise<unknown>;
  readonly maxBodyBytes: number;
}

/**
 * Internal: checks the options (throwing `INVALID_ARGUMENT` for misuse) and
 * returns a verifier. The handlers keep one per handler; {@link verifyWebhook}
 * keeps one per options object. Keys are imported once per verifier; a
 * function `now` is read per delivery.
 */
export function prepareVerifier(options: VerifyWebhookOptions): PreparedVerifier {
  // Every option in one read (null, undefined or a primitive reads as no
  // options, hence no key).
  const {
    publicKeys,
    environment,
    webhookUrl,
    maxBodyBytes = DEFAULT_MAX_BODY_BYTES,
    now,
    toleranceMs,
    allowWeakKeys,
    trustForwardedHeaders,
    strict,
  } = Object(options) as VerifyWebhookOptions;
  const keys: KeyInput[] = [publicKeys ?? []].flat();
  for (const name of [environment ?? []].flat() as unknown[]) {
    if (name !== 'production' && name !== 'beta') {
      throw misuse(`Unknown service environment ${JSON.stringify(name)}: use 'production' or 'beta'.`);
    }
    keys.push(name === 'production' ? PRODUCTION_PUBLIC_KEY : BETA_PUBLIC_KEY);
  }
  if (keys.length === 0) {
    throw misuse("verifyWebhook needs { environment: 'production' } (or 'beta') or { publicKeys }.");
  }
  // Checked now (resolveClock throws for a bad value), except what a clock
  // function returns, which is read and checked at each delivery.
  const clock = { now, toleranceMs };
  resolveClock({ toleranceMs, now: typeof now === 'function' ? undefined : now });
  if (typeof maxBodyBytes !== 'number' || !(maxBodyBytes > 0)) {
    throw misuse('maxBodyBytes must be a number above 0.');
  }
  const targetOptions = {
    webhookUrl: webhookUrl === undefined ? undefined : pinWebhookUrl(webhookUrl),
    trustForwardedHeaders: trustForwardedHeaders === true,
  };
  const keyOptions: KeyOptions = { allowWeakKeys: allowWeakKeys === true };
  const parseOptions = { strict: strict === true };
  // Imported once; a failed import is not kept, so a bad key throws on every call.
  let imported: Promise<KeysWithNumbers> | undefined;
  const ready = (): Promise<KeysWithNumbers> => {
    imported ??= importKeys(keys, keyOptions)
      .then(withPublicNumbers)
      .catch((error: unknown) => {
        imported = undefined;
        throw error;
      });
    return imported;
  };

  async function verify(request: WebhookRequest): Promise<VerifyWebhookResult> {
    const { method, url, headers, body } = Object(request) as Partial<WebhookRequest>;
    if (typeof method !== 'string' || typeof url !== 'string' || typeof headers !== 'object' || headers === null) {
      throw misuse('verifyWebhook needs a request { method, url, headers, body }.');
    }
    const verifierKeys = await ready();

    const signature = getHeader(headers, 'signature');
    if (!signature) return failure('MISSING_SIGNATURE', 'The request has no signature header.');

    const size = bodySize(body, maxBodyBytes);
    if (size > maxBodyBytes) {
      return failure('BODY_TOO_LARGE', `The body has ${size} bytes or more; the limit is ${maxBodyBytes}.`);
    }

    let parsed: JsonObject | null;
    let canonical: string;
    try {
      const target = signedTarget({ method, url, headers }, targetOptions);
      const bytes = signatureBytes(signature, verifierKeys.keys);
      if (bytes === null || (size > EARLY_CHECK_SIZE && !couldBeSignature(bytes, verifierKeys))) {
        // No key can have made it: nothing is built, but body and target errors come first, as in full.
        const checkWritable = checkJsonBody(body);
        targetHead(target);
        checkWritable();
        return failure('SIGNATURE_MISMATCH', MISMATCH);
      }
      parsed = parseJsonBody(body);
      canonical = targetHead(target) + canonicalBody(parsed);
      if (!(await verifyWithKeys(verifierKeys.keys, canonical, bytes))) return failure('SIGNATURE_MISMATCH', MISMATCH);
    } catch (error) {
      if (isPayhookError(error) && error.code !== 'INVALID_ARGUMENT')
        return failure(error.code as VerifyWebhookErrorCode, error.message);
      throw error;
    }

    const check = checkTimestamp(getHeader(headers, 'x-api-timestamp'), resolveClock(clock));
    if (!check.ok) return failure(check.code, check.message);

    if (parsed === null) {
      return failure('INVALID_PAYLOAD', 'The body is empty.', [{ path: '', message: 'the body is empty' }]);
    }
    const checked = validateWebhookObject(parsed, parseOptions);
    if (!checked.success) return failure('INVALID_PAYLOAD', checked.error.message, checked.error.issues);
    return { ok: true, webhook: checked.webhook, canonical, timestamp: check.timestamp };
  }

  return { verify, ready, maxBodyBytes };
}

/** Prepared verifiers by options object: options are read once per object. */
const prepared = /* @__PURE__ */ new WeakMap<object, PreparedVerifier>();

/**
 * Verifies one delivery the way the spec's receiver must (§4.1), checking in
 * this order and reporting the first failure by code:
 *
 * 1. `MISSING_SIGNATURE` — no `signature` header (or an empty one).
 * 2. `BODY_TOO_LARGE` — a raw body over `maxBodyBytes`, before parsing.
 * 3. The canonical string cannot be built: `INVALID_BODY` (not JSON, not an
 *    object, or not writable back as JSON: too deep for the engine's stack,
 *    a cycle, a BigInt), `MALFORMED_PATH`, `MISSING_HOST`, `MALFORMED_QUERY`.
 * 4. `SIGNATURE_MISMATCH` — no key verifies it (this includes an
 *    `x-api-timestamp` added, removed or changed after signing).
 * 5. `MISSING_TIMESTAMP`, `MALFORMED_TIMESTAMP`, `TIMESTAMP_OUT_OF_WINDOW`.
 * 6. `INVALID_PAYLOAD` — signed and fresh, but not a webhook of spec §2
 *    (`error.issues` lists each problem).
 *
 * The query rule (without `webhookUrl`, when the request's own query is
 * signed): the signature covers the query as `URLSearchParams` reads it, so
 * a query your app could read differently is refused with
 * `MALFORMED_QUERY` — one that starts with a second `?` (`??shop=7`), a
 * parameter with an empty name (`=7`), or a name repeated with different
 * values (`shop=8&shop=7`). A name repeated with the same value, and empty
 * pieces (`a=1&&b=2`), are fine. With `webhookUrl` the request's query is
 * not signed, and not checked.
 *
 * A forged request costs little. A signature that is not base64 or fits no
 * key's length, or, for a body over 8,192 characters (bytes, for bytes), one
 * the RSA public operation shows no key can have made (not checked so: a
 * non-extractable `CryptoKey`, an exponent over 32 bits), is refused without
 * the body being built: it is only scanned, since INVALID_BODY comes first
 * (parsed when nested over 100 levels, to see whether it can be written).
 * Web Crypto decides every accept.
 *
 * A leading byte-order mark is ignored in text as in bytes (as
 * `request.text()` does); the signature never covers it.
 *
 * The body is parsed once; the object serves the canonical string and the
 * payment model. PEM keys are imported once per process and cached. The
 * options are read and checked once per options object, on its first call:
 * to change an option (to rotate keys, say), pass a new options object —
 * changing a property of one already used has no effect. It never throws
 * for a bad delivery — it resolves `{ ok: false, error }` — and throws only
 * for misuse: no key configured, an unusable key (`INVALID_KEY`,
 * `WEAK_KEY`), or options or a request of the wrong type (`INVALID_ARGUMENT`).
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
export async function verifyWebhook(
  request: WebhookRequest,
  options: VerifyWebhookOptions,
): Promise<VerifyWebhookResult> {
  // One prepared verifier per options object: repeated calls do no preparation.
  let verifier = prepared.get(options);
  if (verifier === undefined) prepared.set(options, (verifier = prepareVerifier(options)));
  return verifier.verify(request);
}
