/**
 * The prepared verifier behind verifyWebhook and the handlers: the checks on
 * one delivery as a short list of named steps, each reporting its failure by
 * code, in the order of docs/CONTRACT.md §4.
 *
 * @module
 */
import { checkTimestamp } from './freshness.js';
import { resolveClock, type ClockOptions } from './lib/clock.js';
import type { PayhookError, PayhookIssue } from './lib/errors.js';
import { getHeader } from './lib/headers.js';
import { bodySize, checkBodyRead, nonFinitePath } from './lib/json-body.js';
import type { KeyInput, KeyOptions } from './lib/key-types.js';
import { misuse } from './lib/misuse.js';
import type { BodyInput, HeadersInput } from './lib/request-types.js';
import type { SchemeFactory, SignatureScheme } from './lib/signature-scheme.js';
import { readSigned } from './lib/signed-read.js';
import { signedTarget, targetHead, tiedTargets, type TargetOptions } from './lib/signed-target.js';
import type { ParseWebhookOptions, PaymentWebhook } from './webhook/types.js';
import { validateWebhookObject } from './webhook/validate.js';

/**
 * One delivery as it reached your server. `url` is absolute
 * (`https://shop.example.kg/hook?x=1`) or the request target (`/hook?x=1`,
 * what Node's `req.url` holds), still percent-encoded.
 *
 * @example
 * ```ts
 * import type { IncomingMessage } from 'node:http';
 * import type { WebhookRequest } from 'payhook';
 *
 * declare const req: IncomingMessage; // Node's request
 * declare const rawBody: Buffer; // its body, read whole
 * const request: WebhookRequest = {
 *   method: req.method!, // a server's request always has both
 *   url: req.url!,
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
  | 'URL_MISMATCH'
  | 'MISSING_HOST'
  | 'MALFORMED_PATH'
  | 'MALFORMED_QUERY'
  | 'SIGNATURE_MISMATCH'
  | 'MISSING_TIMESTAMP'
  | 'MALFORMED_TIMESTAMP'
  | 'TIMESTAMP_OUT_OF_WINDOW'
  | 'INVALID_PAYLOAD';

/**
 * Why a delivery was refused: a stable `code` and a readable `message`. An
 * `INVALID_PAYLOAD` also carries `issues`, every problem found with its path,
 * so checking the code narrows to them.
 *
 * @example
 * ```ts
 * import type { VerifyWebhookError } from 'payhook';
 *
 * function describe(error: VerifyWebhookError): string {
 *   if (error.code !== 'INVALID_PAYLOAD') return `${error.code}: ${error.message}`;
 *   return error.issues.map((issue) => `${issue.path || '(body)'}: ${issue.message}`).join('; ');
 * }
 * ```
 */
export type VerifyWebhookError =
  | {
      readonly code: 'INVALID_PAYLOAD';
      readonly message: string;
      /** Every problem found in the payload, each with its path (`''` for the body itself). */
      readonly issues: readonly PayhookIssue[];
    }
  | {
      readonly code: Exclude<VerifyWebhookErrorCode, 'INVALID_PAYLOAD'>;
      readonly message: string;
      readonly issues?: undefined;
    };

/**
 * The outcome of {@link verifyWebhook}: the typed webhook with the canonical
 * string and timestamp it was checked with, or the first failure.
 *
 * @example
 * ```ts
 * import type { VerifyWebhookResult } from 'payhook';
 *
 * function statusOf(result: VerifyWebhookResult): number {
 *   if (result.ok) return 200;
 *   const { code } = result.error; // as payhook's handlers answer
 *   return code === 'BODY_TOO_LARGE' ? 413 : /SIGNATURE|TIMESTAMP|URL_MISMATCH/.test(code) ? 401 : 400;
 * }
 * ```
 */
export type VerifyWebhookResult =
  | {
      readonly ok: true;
      readonly webhook: PaymentWebhook;
      readonly canonical: string;
      readonly timestamp: number;
      /**
       * The registered URL the delivery was signed for, when `webhookUrl` is
       * set: with several (one per shop), read the tenant from here, never
       * from the request.
       */
      readonly webhookUrl?: string;
    }
  | { readonly ok: false; readonly error: VerifyWebhookError };

/** Internal: verifyWebhook with its options checked once. */
export interface PreparedVerifier {
  verify(request: WebhookRequest): Promise<VerifyWebhookResult>;
  /** Resolves once the keys are imported; rejects with INVALID_KEY / WEAK_KEY. */
  ready(): Promise<unknown>;
  readonly maxBodyBytes: number;
}

/** Internal: the options of a verifier, already checked. */
export interface VerifierSettings {
  readonly keys: readonly KeyInput[];
  readonly keyOptions: KeyOptions;
  readonly scheme: SchemeFactory;
  readonly target: TargetOptions;
  /** `now` may be a function, read at each delivery. */
  readonly clock: ClockOptions;
  readonly maxBodyBytes: number;
  readonly parse: ParseWebhookOptions;
}

// A raw body larger than this (as bodySize counts it) is read only once the
// early filter (one RSA public operation) allows; a smaller one is cheaper to
// read than the filter, which then runs only when the read fails, so a bad
// body under a signature no key made is still SIGNATURE_MISMATCH. Real
// deliveries stay below it.
const FILTER_FIRST_SIZE = 8_192;

const MISMATCH =
  'The signature does not verify: body, Host, path, query or an x-api-* header changed, or the key is for another environment.';

function failure(code: Exclude<VerifyWebhookErrorCode, 'INVALID_PAYLOAD'>, message: string): VerifyWebhookResult {
  return { ok: false, error: { code, message } };
}

function invalidPayload(message: string, issues: readonly PayhookIssue[]): VerifyWebhookResult {
  return { ok: false, error: { code: 'INVALID_PAYLOAD', message, issues } };
}

const mismatch = (): VerifyWebhookResult => failure('SIGNATURE_MISMATCH', MISMATCH);

/** Internal: why a request without a `signature` header (or an empty one) is refused; nothing else is read for it. */
export const UNSIGNED = 'The request has no signature header.';

function checkedRequest(request: WebhookRequest): WebhookRequest {
  const { method, url, headers, body } = Object(request) as Partial<WebhookRequest>;
  if (typeof method !== 'string' || typeof url !== 'string' || typeof headers !== 'object' || headers === null) {
    throw misuse('verifyWebhook needs a request { method, url, headers, body }.');
  }
  // Refused before anything else is read (the body reader refuses it too, for every other caller).
  checkBodyRead(body);
  return { method, url, headers, body };
}

/**
 * Internal: a verifier over checked settings. Keys are imported on the first
 * delivery (or `ready()`); a failed import is not kept, so a bad key throws
 * on every call.
 */
export function createVerifier(settings: VerifierSettings): PreparedVerifier {
  const { maxBodyBytes, clock } = settings;
  let imported: Promise<SignatureScheme> | undefined;
  const ready = (): Promise<SignatureScheme> => {
    imported ??= settings.scheme(settings.keys, settings.keyOptions).catch((error: unknown) => {
      imported = undefined;
      throw error;
    });
    return imported;
  };

  async function verify(request: WebhookRequest): Promise<VerifyWebhookResult> {
    const { method, url, headers, body } = checkedRequest(request);
    const scheme = await ready();

    const signature = getHeader(headers, 'signature');
    if (!signature) return failure('MISSING_SIGNATURE', UNSIGNED);

    const size = bodySize(body, maxBodyBytes);
    if (size > maxBodyBytes) {
      return failure('BODY_TOO_LARGE', `The body has ${size} bytes or more; the limit is ${maxBodyBytes}.`);
    }

    // A signature no key can have made is refused before the body is read.
    const bytes = scheme.decode(signature);
    const filterFirst = size > FILTER_FIRST_SIZE;
    if (bytes === null || (filterFirst && !scheme.couldBeSignature(bytes))) return mismatch();

    const target = signedTarget({ method, url, headers }, settings.target);
    const read = readSigned(body, () => targetHead(target));
    if (!read.ok) return filterFirst || scheme.couldBeSignature(bytes) ? refusedRead(read.error) : mismatch();

    let { canonical } = read;
    let registered = target.registered;
    if (!(await scheme.verify(canonical, bytes))) {
      registered = undefined;
      // Registered URLs the request does not tell apart: each is tried, for a signature a key can have made.
      const ties = tiedTargets(target);
      if (ties.length > 0 && (filterFirst || scheme.couldBeSignature(bytes))) {
        for (const tie of ties) {
          if (await scheme.verify(tie.head + read.bodyLine, bytes)) {
            [registered, canonical] = [tie.url, tie.head + read.bodyLine];
            break;
          }
        }
      }
      if (registered === undefined) return mismatch();
    }

    const fresh = checkTimestamp(getHeader(headers, 'x-api-timestamp'), resolveClock(clock));
    if (!fresh.ok) {
      // A fixed `now` (`now: Date.now()` meant as a clock) refuses every delivery once it is 5 minutes old.
      const fixed =
        fresh.code === 'TIMESTAMP_OUT_OF_WINDOW' && clock.now !== undefined && typeof clock.now !== 'function';
      return failure(
        fresh.code,
        fixed ? `${fresh.message} But now is fixed: pass now: () => Date.now().` : fresh.message,
      );
    }

    const signed = { canonical, timestamp: fresh.timestamp, webhookUrl: registered?.url };
    // A number beyond range (1e400 read as Infinity) is signed as the null the service wrote there: what was signed
    // is null, so what would be acted on is not it. Only a body line holding null can hide one.
    const infinite = read.bodyLine.includes('null') ? nonFinitePath(read.body) : undefined;
    if (infinite !== undefined) {
      const issue = { path: infinite, message: 'a number beyond range (±Infinity), signed as null' };
      return invalidPayload(`${infinite}: ${issue.message}.`, [issue]);
    }
    return payment(read.body, settings.parse, signed);
  }

  return { verify, ready, maxBodyBytes };
}

function refusedRead(error: PayhookError): VerifyWebhookResult {
  return failure(error.code as Exclude<VerifyWebhookErrorCode, 'INVALID_PAYLOAD'>, error.message);
}

function payment(
  body: Record<string, unknown> | null,
  options: ParseWebhookOptions,
  signed: { canonical: string; timestamp: number; webhookUrl: string | undefined },
): VerifyWebhookResult {
  if (body === null) {
    return invalidPayload('The body is empty.', [{ path: '', message: 'the body is empty' }]);
  }
  const checked = validateWebhookObject(body, options);
  if (!checked.success) return invalidPayload(checked.error.message, checked.error.issues);
  const { canonical, timestamp, webhookUrl } = signed;
  return { ok: true, webhook: checked.webhook, canonical, timestamp, ...(webhookUrl !== undefined && { webhookUrl }) };
}
