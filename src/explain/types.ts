/**
 * The public shapes of `payhook/explain`: what it reads and what it reports.
 *
 * @module
 */
import type { PayhookErrorCode } from '../lib/errors.js';
import type { KeyInput } from '../lib/key-types.js';
import type { BodyInput, HeadersInput } from '../lib/request-types.js';
import type { ServiceEnvironment } from '../service-keys.js';
import type { WebhookUrlOption } from '../verify-webhook.js';

/**
 * A delivery to diagnose: the same shape `verifyWebhook` takes (`url` is
 * absolute, or a path with query).
 *
 * @example
 * ```ts
 * import type { ExplainRequest } from 'payhook/explain';
 *
 * const request: ExplainRequest = { method: 'POST', url: '/webhooks/payments', headers: { host: 'internal:8080' }, body: '{}' };
 * ```
 */
export interface ExplainRequest {
  method: string;
  url: string;
  headers: HeadersInput;
  body: BodyInput;
}

/**
 * Options for {@link explainVerificationFailure}. It accepts the options you
 * give `verifyWebhook` or a handler (extra members are ignored), plus a few
 * that widen the search.
 *
 * @example
 * ```ts
 * import type { ExplainOptions } from 'payhook/explain';
 *
 * const options: ExplainOptions = {
 *   environment: 'production',
 *   webhookUrl: 'https://shop.example.kg/api/webhooks/payments',
 * };
 * ```
 */
export interface ExplainOptions {
  /** The keys the receiver is configured with. */
  publicKeys?: KeyInput | readonly KeyInput[];
  /** The service environment(s) the receiver is configured for, when `publicKeys` is not given. */
  environment?: ServiceEnvironment | readonly ServiceEnvironment[];
  /**
   * The public key of each environment. The other environment's key is
   * tried as a likely cause, and so is payhook's published test key
   * (`TEST_KEY_PAIR` of `payhook/testing`), reported as `payhook-test`.
   * @defaultValue `SERVICE_PUBLIC_KEYS` (only override it to rehearse with test keys)
   */
  environmentKeys?: Readonly<Partial<Record<ServiceEnvironment, KeyInput>>>;
  /** More keys to try, by a name that the diagnosis reports (`{ 'old key': pem }`). */
  alternativeKeys?: Readonly<Record<string, KeyInput>>;
  /**
   * The receiver's `webhookUrl` (one registered URL, a list, or a function
   * of the request); the one that fits the request is the baseline.
   */
  webhookUrl?: WebhookUrlOption;
  /**
   * The URL registered with the service: only tried as a candidate, never
   * used as the baseline. With `webhookUrl` too, its host, path and query are
   * tried first, so a `webhookUrl` that differs from the registered URL is
   * found.
   */
  registeredUrl?: string;
  /** Whether the receiver takes the host from `X-Forwarded-Host`. */
  trustForwardedHeaders?: boolean;
  /** The receiver's clock, to report the timestamp's age (a function is read once). @defaultValue `Date.now()` */
  now?: number | Date | (() => number | Date);
  /** The timestamp window. @defaultValue 300 000 */
  toleranceMs?: number;
  /** Accept RSA keys under 2048 bits. @defaultValue false */
  allowWeakKeys?: boolean;
}

/**
 * What must differ from the received request for the signature to verify.
 *
 * @example
 * ```ts
 * import type { DiagnosisChange } from 'payhook/explain';
 *
 * const change: DiagnosisChange = { part: 'host', received: 'internal:8080', expected: 'shop.example.kg' };
 * ```
 */
export interface DiagnosisChange {
  /** Which part of the signed request: the `Host`, the path, the query, an `x-api-*` header, or the key. */
  readonly part: 'host' | 'path' | 'query' | 'header' | 'key';
  /** What the receiver saw or used (`''` for none). */
  readonly received: string;
  /** What makes the signature verify (`''` for none). */
  readonly expected: string;
}

/**
 * The outcome of {@link explainVerificationFailure}.
 *
 * @example
 * ```ts
 * import type { VerificationDiagnosis } from 'payhook/explain';
 *
 * function log(diagnosis: VerificationDiagnosis): void {
 *   if (!diagnosis.ok) console.warn(diagnosis.message, diagnosis.changes);
 * }
 * ```
 */
export interface VerificationDiagnosis {
  /** Whether the signature verifies as received with the configured keys and the timestamp is fresh. */
  readonly ok: boolean;
  /** Why it does not verify, as `verifyWebhook` would report it; `null` when `ok`. */
  readonly code: PayhookErrorCode | null;
  /** Whether the signature itself verifies as received (the timestamp aside). */
  readonly signatureVerifies: boolean;
  /** The canonical string built from the request as received; `null` when none can be built. */
  readonly canonical: string | null;
  /** The changes that make the signature verify (empty when none was found, or none is needed). */
  readonly changes: readonly DiagnosisChange[];
  /** The canonical string that verified with those changes; `null` when none did. */
  readonly verifiedCanonical: string | null;
  /**
   * The name of the key that verified: `service-production`, `service-beta`,
   * `payhook-test` (payhook's published test key), `the configured key`,
   * `configured key 2`, or an alternative's name.
   */
  readonly keyName: string | null;
  /**
   * What to do, in one sentence or two; `null` when there is nothing to fix.
   * Like `message`, it is written for logs: a URL in it has no user or
   * password, and a query shows its parameter names only (`?token=…`);
   * `changes`, `tried` and the canonical strings hold them as they are.
   */
  readonly fix: string | null;
  /** A readable summary: the finding, the fix, or what was tried (without query values, as `fix`). */
  readonly message: string;
  /** Every value tried, by part, when a search ran. */
  readonly tried: {
    readonly hosts: readonly string[];
    readonly paths: readonly string[];
    readonly queries: readonly string[];
    readonly keys: readonly string[];
  };
  /** How many signature checks the search made (bounded). */
  readonly checks: number;
}
