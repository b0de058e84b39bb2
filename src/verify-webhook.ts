/** verifyWebhook: the spec's receiver checks on one delivery, in order, reporting the first failure by code. */
import { resolveClock } from './lib/clock.js';
import { checkMaxBodyBytes } from './lib/json-body.js';
import { holdsKey } from './lib/test-key.js';
import type { KeyInput, KeyOptions } from './lib/key-types.js';
import { misuse } from './lib/misuse.js';
import { webCryptoScheme, type SchemeFactory } from './lib/signature-scheme.js';
import type { HeadersInput } from './lib/request-types.js';
import { registeredUrl } from './lib/signed-target.js';
import { BETA_PUBLIC_KEY, PRODUCTION_PUBLIC_KEY, type ServiceEnvironment } from './service-keys.js';
import { createVerifier, type PreparedVerifier, type VerifyWebhookResult, type WebhookRequest } from './verifier.js';

export type {
  PreparedVerifier,
  VerifyWebhookError,
  VerifyWebhookErrorCode,
  VerifyWebhookResult,
  WebhookRequest,
} from './verifier.js';

/**
 * The registered callback URL(s) of {@link VerifyWebhookOptions.webhookUrl}:
 * one URL, a list of them, or a function of the request returning the one it
 * was sent to (`undefined` when none).
 *
 * @example
 * ```ts
 * import type { WebhookUrlOption } from 'payhook';
 *
 * // One URL per shop: /webhooks/payments/7 for shop 7.
 * const webhookUrl: WebhookUrlOption = (request) => {
 *   const shop = /^\/webhooks\/payments\/(\d+)$/.exec(new URL(request.url, 'https://x').pathname)?.[1];
 *   return shop === undefined ? undefined : `https://shop.example.kg/webhooks/payments/${shop}`;
 * };
 * ```
 */
export type WebhookUrlOption = string | readonly string[] | ((request: WebhookUrlRequest) => string | undefined);

/**
 * What a `webhookUrl` function is given: the request's method, URL (absolute,
 * or path and query) and headers; its body is not read yet.
 *
 * @example
 * ```ts
 * import type { WebhookUrlRequest } from 'payhook';
 *
 * // Annotated on its own, to be tested apart from the handler: one registered URL per shop, by path.
 * export function webhookUrlFor(request: WebhookUrlRequest): string | undefined {
 *   const shop = /^\/webhooks\/payments\/(\d+)$/.exec(new URL(request.url, 'https://x').pathname)?.[1];
 *   return shop === undefined ? undefined : `https://shop.example.kg/webhooks/payments/${shop}`;
 * }
 * webhookUrlFor({ method: 'POST', url: '/webhooks/payments/7', headers: {} }); // '…/webhooks/payments/7'
 * ```
 */
export interface WebhookUrlRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: HeadersInput;
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
   * The service environment whose shipped key to accept: `'production'`
   * or `'beta'` (the sandbox). Added to `publicKeys` when both are given.
   * The production and beta keys together are refused (`INVALID_ARGUMENT`):
   * anyone with a sandbox account can have the sandbox sign a `SUCCEEDED`
   * delivery for your URL, and nothing in it tells it from a real payment.
   */
  environment?: ServiceEnvironment | readonly ServiceEnvironment[];
  /**
   * The largest body accepted, in bytes, checked before the body is parsed
   * (`BODY_TOO_LARGE`). An already parsed body is not measured: the body
   * parser that produced it applied its own limit.
   *
   * Real deliveries are a few kilobytes, so the default of 32 KiB leaves them
   * ample room while bounding what any request can cost: a body whose
   * signature may verify (a replayed genuine one) is parsed and sorted, which
   * costs more the more keys it holds. Raise it only if your deliveries grow
   * past it (`maxBodyBytes: 131_072`), never to "unlimited": it must be a
   * whole number of bytes, at least 1 (`Infinity` is `INVALID_ARGUMENT`).
   *
   * It bounds what `verifyWebhook` parses, not what your code reads before
   * calling it: refuse a larger declared `content-length` before
   * `request.text()`, or keep your framework's body limit in front (the
   * handlers of `payhook/web` and `payhook/node` keep nothing past their own
   * `maxBodyBytes`).
   * @defaultValue 32 768 (32 KiB, {@link DEFAULT_MAX_BODY_BYTES})
   */
  maxBodyBytes?: number;
  /**
   * The callback URL you registered with the service, absolute. When set,
   * the host, path and query of the canonical string come from it rather
   * than from the request, which a proxy, load balancer or router may have
   * rewritten. It also pins the host: a delivery the service signed for
   * another endpoint never verifies at yours, whatever `Host` it arrives
   * with. A request whose query lacks a parameter of the registered URL, or
   * gives one another value, is refused (`URL_MISMATCH`). Recommended in
   * production.
   *
   * Several shops, one URL each: give the list (the one whose path is the
   * request's and whose query parameters the request carries is used, else
   * one whose path ends with the request's, for a framework that strips its
   * mount point such as Next.js `basePath` or Hono's `app.mount`; of
   * several, the one registering the most parameters, then the one for the
   * request's Host or `X-Forwarded-Host`; when nothing in the request tells
   * several apart, as behind a proxy that rewrites Host, the first nine in
   * list order are tried against the signature, one more check each), or a
   * function of the request that returns the shop's registered URL
   * (`undefined` for none: `URL_MISMATCH`). The result's `webhookUrl` says
   * which one the delivery was signed for: read the shop from there.
   */
  webhookUrl?: WebhookUrlOption;
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
   * Require every documented field, `requestDate` included (real deliveries
   * of the signed-body variant omit it).
   * @defaultValue false
   */
  strict?: boolean;
}

/**
 * The default `maxBodyBytes`: 32 KiB. Real deliveries are a few kilobytes;
 * pass a larger `maxBodyBytes` if yours are not.
 *
 * @example
 * ```ts
 * import { DEFAULT_MAX_BODY_BYTES, verifyWebhook, type WebhookRequest } from 'payhook';
 *
 * declare const request: WebhookRequest;
 * const webhookUrl = 'https://shop.example.kg/webhooks/payments';
 * await verifyWebhook(request, { environment: 'production', webhookUrl, maxBodyBytes: DEFAULT_MAX_BODY_BYTES * 4 });
 * ```
 */
export const DEFAULT_MAX_BODY_BYTES = 32_768;

/**
 * Internal: checks the options (throwing `INVALID_ARGUMENT` for misuse, naming
 * `who`) and returns a verifier. The handlers keep one per handler; {@link verifyWebhook}
 * keeps one per options object. `scheme` is how signatures are checked: Web
 * Crypto unless a runtime's entry passes its own.
 */
export function prepareVerifier(
  options: VerifyWebhookOptions,
  scheme: SchemeFactory = webCryptoScheme,
  who = 'verifyWebhook',
): PreparedVerifier {
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
    throw misuse(`${who} needs { environment: 'production' } (or 'beta') or { publicKeys }.`);
  }
  // Its private half is published: beside the production key it would let anyone sign a "real" payment.
  if (holdsKey(publicKeys, 'test') && holdsKey(keys, 'production')) {
    throw misuse(
      `${who}: publicKeys holds payhook's published test key (TEST_KEY_PAIR) beside the production key: ` +
        'anyone could sign what it accepts. Give the test key only to a test receiver, without the production key.',
    );
  }
  // The sandbox signs what any sandbox account asks for (SUCCEEDED, for your URL and your order's reference), and
  // nothing in a delivery says which key verified it.
  if (holdsKey(keys, 'beta') && holdsKey(keys, 'production')) {
    throw misuse(
      `${who}: the production and beta (sandbox) keys together would take a sandbox delivery for a real payment. ` +
        'Use one handler per environment.',
    );
  }
  // Checked now (resolveClock throws for a bad value), except what a clock
  // function returns, which is read and checked at each delivery.
  const clock = { now, toleranceMs };
  resolveClock({ toleranceMs, now: typeof now === 'function' ? undefined : now });
  return createVerifier({
    keys,
    keyOptions: { allowWeakKeys: allowWeakKeys === true },
    scheme,
    target: {
      webhookUrl: webhookUrl === undefined ? undefined : registeredUrl(webhookUrl),
      trustForwardedHeaders: trustForwardedHeaders === true,
    },
    clock,
    maxBodyBytes: checkMaxBodyBytes(maxBodyBytes, who),
    parse: { strict: strict === true },
  });
}

/** Prepared verifiers by options object: options are read once per object. */
const prepared = /* @__PURE__ */ new WeakMap<object, PreparedVerifier>();

/**
 * Verifies one delivery the way the service asks a receiver to, checking in
 * this order and reporting the first failure by code:
 *
 * 1. `MISSING_SIGNATURE` — no `signature` header (or an empty one).
 * 2. `BODY_TOO_LARGE` — a raw body over `maxBodyBytes`, before it is read.
 * 3. `SIGNATURE_MISMATCH` — a signature no configured key can have made:
 *    not base64, the wrong length for every key, or, for a key whose RSA
 *    numbers can be read (not a non-extractable `CryptoKey`), one whose
 *    public operation gives no PKCS #1 v1.5 block. Such a request costs
 *    little: its body is never parsed.
 * 4. The canonical string cannot be built: `INVALID_BODY` (not JSON, not an
 *    object, nested more than 64 levels deep, more than 1,000 top-level
 *    members or 4,096 characters of top-level names, or a parsed value JSON
 *    cannot write), `MISSING_HOST`, `MALFORMED_PATH`, `MALFORMED_QUERY`.
 * 5. `SIGNATURE_MISMATCH` — no key verifies it (this includes an
 *    `x-api-timestamp` added, removed or changed after signing).
 * 6. `MISSING_TIMESTAMP`, `MALFORMED_TIMESTAMP`, `TIMESTAMP_OUT_OF_WINDOW`.
 * 7. `INVALID_PAYLOAD` — signed and fresh, but not a payment webhook
 *    (`error.issues` lists each problem).
 *
 * The query rule (without `webhookUrl`, when the request's own query is
 * signed): the signature covers the query as `URLSearchParams` reads it, so
 * a query your app could read differently is refused with
 * `MALFORMED_QUERY` — one that starts with a second `?` (`??shop=7`), a
 * parameter with an empty name (`=7`), a name repeated with different
 * values (`shop=8&shop=7`), or a name holding `&`, `=` or a percent
 * escape once decoded (`a%3Db=c` has the signed line of `a=b%3Dc`). A name
 * repeated with the same value, and empty pieces (`a=1&&b=2`), are fine.
 * Values may hold an escaped `&` and escapes (the service signs such
 * values), so `ref=x%26shop%3D8` and `ref=x&shop=8` sign alike: only
 * `webhookUrl` tells them apart. With `webhookUrl` the registered query is
 * signed instead, and the request's must carry each of its parameters as
 * registered (`URL_MISMATCH`).
 *
 * Every body costs at most a linear read before it is refused, and its
 * verdict never depends on the engine's stack. Web Crypto decides every
 * accept.
 *
 * A leading byte-order mark is ignored in text as in bytes (as
 * `request.text()` does); the signature never covers it.
 *
 * The body is parsed once; the object serves the canonical string and the
 * payment model. PEM keys are imported once per process and cached. The
 * options are read and checked once per options object, on its first call,
 * so make the object once (at module scope) rather than in each call: a new
 * object is prepared again. To change an option (to rotate keys, say), pass
 * a new options object — changing a property of one already used has no
 * effect. It never throws
 * for a bad delivery — it resolves `{ ok: false, error }` — and throws only
 * for misuse: no key configured, an unusable key (`INVALID_KEY`,
 * `WEAK_KEY`), or options or a request of the wrong type (`INVALID_ARGUMENT`).
 *
 * It does not deduplicate: the service delivers at least once. The handlers
 * in `payhook/web` and `payhook/node` add that.
 *
 * @example
 * ```ts
 * import { verifyWebhook, type PaymentWebhook, type VerifyWebhookOptions } from 'payhook';
 *
 * // Your order update, as in the README's "Applying a payment to an order": it marks an order paid only for a
 * // SUCCEEDED debit of the order's amount, moves it only forward, and keeps for review what it cannot apply (an
 * // unknown order, another amount, a second payment of a paid order).
 * declare function applyPayment(webhook: PaymentWebhook): Promise<void>;
 *
 * // Made once, at module scope: each options object is prepared on its first call only.
 * const options: VerifyWebhookOptions = {
 *   environment: 'production',
 *   webhookUrl: 'https://shop.example.kg/webhooks/payments',
 * };
 *
 * export async function POST(request: Request): Promise<Response> {
 *   const result = await verifyWebhook(
 *     { method: request.method, url: request.url, headers: request.headers, body: await request.text() },
 *     options,
 *   );
 *   if (!result.ok) {
 *     // As payhook's handlers answer: 400 for a signed body that is not a webhook, 401 for a delivery that is not
 *     // the service's, not fresh, or not sent to webhookUrl.
 *     const { code } = result.error;
 *     const status = code === 'BODY_TOO_LARGE' ? 413 : /SIGNATURE|TIMESTAMP|URL_MISMATCH/.test(code) ? 401 : 400;
 *     return Response.json({ ok: false, code }, { status });
 *   }
 *   // Deduplication is your job with verifyWebhook: the service delivers at least once, so applyPayment must leave
 *   // the order as it was when the same delivery comes again (the handlers of payhook/web and payhook/node
 *   // deduplicate for you).
 *   await applyPayment(result.webhook);
 *   return Response.json({ ok: true });
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
