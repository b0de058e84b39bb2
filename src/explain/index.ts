import { isPayhookError, type PayhookErrorCode } from '../errors.js';
import { checkTimestamp } from '../freshness.js';
import { importPublicKey, type KeyInput } from '../keys.js';
import { decodeBase64Lenient } from '../lib/base64.js';
import { canonicalHead } from '../lib/canonical.js';
import { forEachHeader, getHeader } from '../lib/headers.js';
import { canonicalBody, parseJsonBody, type JsonObject } from '../lib/json-body.js';
import { splitUrl } from '../lib/url.js';
import type { BodyInput, HeadersInput } from '../request.js';
import { SERVICE_PUBLIC_KEYS, type ServiceEnvironment } from '../service-keys.js';
import { verifySignature } from '../signature.js';

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
   * tried as a likely cause.
   * @defaultValue `SERVICE_PUBLIC_KEYS` (only override it to rehearse with test keys)
   */
  environmentKeys?: Readonly<Partial<Record<ServiceEnvironment, KeyInput>>>;
  /** More keys to try, by a name that the diagnosis reports (`{ 'old key': pem }`). */
  alternativeKeys?: Readonly<Record<string, KeyInput>>;
  /** The callback URL registered with the service; its host, path and query are tried. */
  webhookUrl?: string;
  /**
   * The URL registered with the service, when the receiver does not pin it
   * with `webhookUrl`: only tried as a candidate, never used as the baseline.
   */
  registeredUrl?: string;
  /** Whether the receiver takes the host from `X-Forwarded-Host`. */
  trustForwardedHeaders?: boolean;
  /** The receiver's clock, to report the timestamp's age. @defaultValue `Date.now()` */
  now?: number | Date;
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
  /** The name of the key that verified (`production`, `beta`, `the configured key`, `configured key 2`, an alternative's name). */
  readonly keyName: string | null;
  /** What to do, in one sentence or two; `null` when there is nothing to fix. */
  readonly fix: string | null;
  /** A readable summary: the finding, the fix, or what was tried. */
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

/** Upper bounds that keep the search small whatever the request holds. */
const MAX_HOSTS = 6;
const MAX_PATHS = 10;
const MAX_QUERIES = 3;
const MAX_KEYS = 6;
const MAX_CHECKS = 600;
const COMMON_PREFIXES = ['/api', '/v1', '/api/v1', '/webhooks', '/webhook', '/hooks', '/payhook'] as const;

interface NamedKey {
  readonly name: string;
  readonly key: KeyInput;
  readonly configured: boolean;
}

interface Variant {
  readonly host: string;
  readonly path: string;
  readonly query: string;
  readonly dropHeaders: readonly string[];
}

function parseWebhookUrl(webhookUrl: string | undefined): { host: string; path: string; query: string } | undefined {
  if (typeof webhookUrl !== 'string' || webhookUrl === '') return undefined;
  try {
    const url = new URL(webhookUrl);
    return { host: url.host, path: url.pathname, query: url.search.slice(1) };
  } catch {
    return undefined;
  }
}

function registeredUrlInBody(body: JsonObject | null): string | undefined {
  const data = body?.['data'];
  const fields = body?.['fields'];
  const fromData =
    typeof data === 'object' && data !== null ? (data as Record<string, unknown>)['webhookUrl'] : undefined;
  const fromFields =
    typeof fields === 'object' && fields !== null ? (fields as Record<string, unknown>)['webhook_url'] : undefined;
  return typeof fromData === 'string' ? fromData : typeof fromFields === 'string' ? fromFields : undefined;
}

function firstListValue(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const first = value.split(',')[0]?.trim();
  return first === undefined || first === '' ? undefined : first;
}

function forwardedHost(value: string | undefined): string | undefined {
  const first = firstListValue(value);
  if (first === undefined) return undefined;
  for (const pair of first.split(';')) {
    const [name, raw] = pair.split('=');
    if (name?.trim().toLowerCase() === 'host' && raw !== undefined) return raw.trim().replace(/^"|"$/g, '');
  }
  return undefined;
}

function pushUnique(list: string[], value: string | undefined, max: number): void {
  if (value === undefined || list.length >= max || list.includes(value)) return;
  list.push(value);
}

function withoutPort(host: string): string {
  return host.startsWith('[') ? host.replace(/(\])(:\d+)?$/, '$1') : host.replace(/:\d+$/, '');
}

function candidateHosts(received: string, headers: HeadersInput, registered: string | undefined): string[] {
  const hosts: string[] = [received];
  const xfh = firstListValue(getHeader(headers, 'x-forwarded-host'));
  pushUnique(hosts, registered, MAX_HOSTS);
  pushUnique(hosts, xfh, MAX_HOSTS);
  pushUnique(hosts, forwardedHost(getHeader(headers, 'forwarded')), MAX_HOSTS);
  pushUnique(hosts, firstListValue(getHeader(headers, 'x-original-host')), MAX_HOSTS);
  const base = xfh ?? received;
  pushUnique(hosts, withoutPort(received), MAX_HOSTS);
  const port = firstListValue(getHeader(headers, 'x-forwarded-port'));
  if (port !== undefined && /^\d+$/.test(port) && port !== '80' && port !== '443') {
    pushUnique(hosts, `${withoutPort(base)}:${port}`, MAX_HOSTS);
  }
  pushUnique(hosts, withoutPort(base), MAX_HOSTS);
  return hosts;
}

function candidatePaths(received: string, headers: HeadersInput, registered: string | undefined): string[] {
  const paths: string[] = [received];
  pushUnique(paths, registered, MAX_PATHS);
  const original =
    getHeader(headers, 'x-original-uri') ?? getHeader(headers, 'x-original-url') ?? getHeader(headers, 'x-rewrite-url');
  if (original !== undefined) pushUnique(paths, splitUrl(original).path, MAX_PATHS);
  const prefixes: string[] = [];
  const forwardedPrefix = firstListValue(getHeader(headers, 'x-forwarded-prefix'));
  if (forwardedPrefix !== undefined) prefixes.push(forwardedPrefix.replace(/\/+$/, ''));
  // The part of the registered path in front of the received one is the mount point.
  if (registered !== undefined && registered !== received && registered.endsWith(received) && received !== '/') {
    prefixes.push(registered.slice(0, registered.length - received.length));
  }
  prefixes.push(...COMMON_PREFIXES);
  for (const prefix of prefixes) {
    if (prefix === '' || !prefix.startsWith('/')) continue;
    pushUnique(paths, prefix + (received === '/' ? '' : received), MAX_PATHS);
    if (received.startsWith(`${prefix}/`)) pushUnique(paths, received.slice(prefix.length), MAX_PATHS);
  }
  pushUnique(paths, received.endsWith('/') && received.length > 1 ? received.slice(0, -1) : `${received}/`, MAX_PATHS);
  return paths;
}

function candidateQueries(received: string, headers: HeadersInput, registered: string | undefined): string[] {
  const queries: string[] = [received];
  pushUnique(queries, '', MAX_QUERIES);
  const original =
    getHeader(headers, 'x-original-uri') ?? getHeader(headers, 'x-original-url') ?? getHeader(headers, 'x-rewrite-url');
  if (original !== undefined) pushUnique(queries, splitUrl(original).query, MAX_QUERIES);
  pushUnique(queries, registered, MAX_QUERIES);
  return queries;
}

function configuredKeys(
  options: ExplainOptions,
  environmentKeys: Readonly<Partial<Record<ServiceEnvironment, KeyInput>>>,
): NamedKey[] {
  const keys: NamedKey[] = [];
  if (options.publicKeys !== undefined && options.publicKeys !== null) {
    const list = Array.isArray(options.publicKeys)
      ? (options.publicKeys as readonly KeyInput[])
      : [options.publicKeys as KeyInput];
    list.slice(0, MAX_KEYS).forEach((key, index) => {
      const env = (Object.keys(environmentKeys) as ServiceEnvironment[]).find((name) => environmentKeys[name] === key);
      keys.push({
        name: env ?? (list.length === 1 ? 'the configured key' : `configured key ${index + 1}`),
        key,
        configured: true,
      });
    });
  }
  const environments =
    options.environment === undefined
      ? []
      : typeof options.environment === 'string'
        ? [options.environment]
        : options.environment;
  for (const env of environments) {
    const key = environmentKeys[env];
    if (key !== undefined && !keys.some((k) => k.key === key)) keys.push({ name: env, key, configured: true });
  }
  return keys;
}

function describeKeys(keys: readonly NamedKey[]): string {
  return keys.map((key) => key.name).join(', ') || 'none';
}

function code(value: unknown): string {
  return `\`${value === '' ? '(none)' : String(value)}\``;
}

/**
 * `forwarded`: the host checked was X-Forwarded-Host (`trustForwardedHeaders`
 * with no `webhookUrl`), not the Host header.
 */
function fixFor(
  changes: readonly DiagnosisChange[],
  context: {
    xfh: string | undefined;
    pinned: boolean;
    forwarded: boolean;
    receivedHost: string | undefined;
    signedUrl: string;
  },
): string {
  const fixes: string[] = [];
  const urlParts = changes.filter(
    (change) => change.part === 'host' || change.part === 'path' || change.part === 'query',
  );
  const setUrl = `set \`webhookUrl: '${context.signedUrl}'\``;
  if (urlParts.length > 0) {
    // One setting fixes every URL part at once: the URL the service signed.
    const why: string[] = [];
    for (const change of urlParts) {
      if (context.pinned)
        why.push(
          `your \`webhookUrl\` has the ${change.part} ${code(change.received)}, but the service signed ${code(change.expected)}`,
        );
      else if (change.part === 'host' && context.forwarded) {
        why.push(
          change.expected === context.receivedHost
            ? 'with `trustForwardedHeaders` payhook checks X-Forwarded-Host, but the service signed the Host header your app received'
            : 'with `trustForwardedHeaders` payhook checks X-Forwarded-Host, which is not the host the service signed',
        );
      } else if (change.part === 'host')
        why.push(
          change.expected === context.xfh
            ? 'your proxy rewrites Host and forwards the original in X-Forwarded-Host'
            : 'something in front of your app rewrites Host',
        );
      else if (change.part === 'path') {
        why.push(
          change.expected.length > change.received.length && change.expected.endsWith(change.received)
            ? `your router strips the prefix ${code(change.expected.slice(0, change.expected.length - change.received.length))} (verifying the original URL, \`req.originalUrl\` in Express, works too)`
            : 'the path your app sees is not the one the service called',
        );
      } else {
        why.push(
          change.expected === ''
            ? 'the service signed no query string, so something appends one on the way'
            : 'the query string does not reach payhook (passing the full URL, `req.originalUrl` in Express, works too)',
        );
      }
    }
    // The signed host, when the host is the only URL part that differs.
    const onlyHost =
      !context.pinned && urlParts.length === 1 && urlParts[0]?.part === 'host' ? urlParts[0].expected : undefined;
    // Trusting X-Forwarded-Host fixes it when that header holds the signed host;
    // stopping to trust it fixes it when the Host received is the signed one.
    const trustSwitch =
      onlyHost === undefined
        ? ''
        : !context.forwarded && onlyHost === context.xfh
          ? ', or `trustForwardedHeaders: true` if every request comes through that proxy'
          : context.forwarded && onlyHost === context.receivedHost
            ? ', or turn `trustForwardedHeaders` off'
            : '';
    fixes.push(`${setUrl}, the URL the service signed: ${why.join('; ')}${trustSwitch}`);
  }
  for (const change of changes) {
    if (change.part === 'header') {
      fixes.push(
        `stop your proxy or gateway from adding ${code(change.received)}, or remove it before payhook sees the request: every \`x-api-*\` header is signed`,
      );
    } else if (change.part === 'key') {
      const environment = change.expected === 'production' || change.expected === 'beta' ? change.expected : undefined;
      fixes.push(
        environment !== undefined
          ? `the delivery comes from the service's ${environment} environment: set \`environment: '${environment}'\` (or \`publicKeys: ${environment === 'production' ? 'PRODUCTION_PUBLIC_KEY' : 'BETA_PUBLIC_KEY'}\`)`
          : `configure the key ${code(change.expected)} as well (\`publicKeys\`), if you trust it`,
      );
    }
  }
  return fixes.join('; ');
}

function describeChange(change: DiagnosisChange, forwarded = false): string {
  switch (change.part) {
    case 'host':
      return `Host ${code(change.expected)} (your request has ${code(change.received)}${forwarded ? ' in X-Forwarded-Host, which you trust' : ''})`;
    case 'path':
      return `path ${code(change.expected)} (your request has ${code(change.received)})`;
    case 'query':
      return change.expected === ''
        ? `no query string (your request has ${code('?' + change.received)})`
        : `query ${code('?' + change.expected)} (your request has ${change.received === '' ? 'none' : code('?' + change.received)})`;
    case 'header':
      return `header ${code(change.received)} removed`;
    case 'key':
      return `the ${change.expected} key instead of ${change.received}`;
  }
}

function result(
  partial: Partial<VerificationDiagnosis> & Pick<VerificationDiagnosis, 'message'>,
): VerificationDiagnosis {
  return {
    ok: false,
    code: null,
    signatureVerifies: false,
    canonical: null,
    changes: [],
    verifiedCanonical: null,
    keyName: null,
    fix: null,
    tried: { hosts: [], paths: [], queries: [], keys: [] },
    checks: 0,
    ...partial,
  };
}

/**
 * Explains why a delivery's signature does not verify, and how to fix it.
 * It builds the canonical string as received, then tries the likely causes
 * one by one and in pairs — other `Host` values (`X-Forwarded-Host`,
 * `Forwarded`, with and without the port, the registered `webhookUrl`'s
 * host, or the callback URL a WEB or signed-body delivery carries in its
 * body), the path with and without common prefixes (`/api`, `/v1`,
 * `/webhooks`, `X-Forwarded-Prefix`, the `webhookUrl`'s), the query string
 * dropped or restored, an `x-api-*` header added after signing, and the
 * other environment's key — and names the change that makes the signature
 * verify, with the fix. Where nothing matches, it says what was tried.
 *
 * The search is bounded (at most 600 signature checks, about 20 ms, and
 * none when no key has the signature's length), and the body is parsed and
 * its line written once, as verifyWebhook does, so it is safe in an error
 * path. It reports the first failure with the code verifyWebhook would give,
 * and never throws for a bad delivery (a missing `Host`, a body that is not
 * JSON, a garbage signature).
 * Use it while debugging, or through a handler's debug option: it is not a
 * verifier, and a "would verify with …" is a diagnosis, never a reason to
 * accept a delivery.
 *
 * @example
 * ```ts
 * import { explainVerificationFailure } from 'payhook/explain';
 *
 * const diagnosis = await explainVerificationFailure(request, { environment: 'production' });
 * if (!diagnosis.ok) console.warn(diagnosis.message);
 * // signature would verify with Host `shop.example.kg` (your request has `internal:8080`):
 * // set `webhookUrl` to the URL registered with the service (https://shop.example.kg/…), …
 * ```
 */
export async function explainVerificationFailure(
  request: ExplainRequest,
  options?: ExplainOptions,
): Promise<VerificationDiagnosis> {
  try {
    return await explain(request, options ?? {});
  } catch (error) {
    // A diagnosis must never become a second failure in an error path.
    return result({
      code: isPayhookError(error) ? error.code : null,
      message: `payhook could not diagnose this delivery: ${error instanceof Error ? error.message : String(error)}`,
    });
  }
}

async function explain(request: ExplainRequest, options: ExplainOptions): Promise<VerificationDiagnosis> {
  if (typeof request !== 'object' || request === null || typeof request.url !== 'string') {
    return result({
      code: 'INVALID_ARGUMENT',
      message: 'explainVerificationFailure needs a request with method, url, headers and body.',
    });
  }
  const headers: HeadersInput = typeof request.headers === 'object' && request.headers !== null ? request.headers : {};
  const method = typeof request.method === 'string' ? request.method : 'POST';
  const { path, query } = splitUrl(request.url);
  const signature = getHeader(headers, 'signature');
  const receivedHost = getHeader(headers, 'host');
  const registered = parseWebhookUrl(options.webhookUrl);
  const xfh = firstListValue(getHeader(headers, 'x-forwarded-host'));

  // What the receiver uses: the registered URL's host and path when given,
  // else the forwarded host when trusted, else the request's.
  // An absolute URL's authority stands in for a missing Host (some HTTP/2 stacks).
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(request.url)?.[1]?.replace(/^.*@/, '');
  // The forwarded host is what payhook checks when it is trusted and no URL is pinned.
  const forwarded = registered === undefined && options.trustForwardedHeaders === true && xfh !== undefined;
  const baseHost = registered?.host ?? (forwarded ? xfh : (receivedHost ?? (authority || undefined)));
  const basePath = registered?.path ?? path;
  const baseQuery = registered?.query ?? query;

  // verifyWebhook's order: the signature header, then the body, then the
  // canonical string's parts.
  if (!signature) {
    return result({
      code: 'MISSING_SIGNATURE',
      message: 'The request has no `signature` header: it was not sent by the service, or a proxy dropped the header.',
    });
  }
  let body: JsonObject | null;
  try {
    body = parseJsonBody(request.body);
  } catch (error) {
    return result({
      code: 'INVALID_BODY',
      message: `The body cannot be read, so no canonical string can be built: ${error instanceof Error ? error.message : String(error)}`,
    });
  }
  // WEB and signed-body deliveries carry the registered callback URL in the body.
  const announced = parseWebhookUrl(registeredUrlInBody(body));

  const apiHeaders: string[] = [];
  forEachHeader(headers, (name) => {
    if (name.startsWith('x-api-') && name !== 'x-api-timestamp' && !apiHeaders.includes(name)) apiHeaders.push(name);
  });
  // Lines 1 to 4 of a variant (`host` undefined: none, as received), then
  // the body line. The body is the same in every variant, so its line (the
  // costly part: every top-level key sorted) is written once.
  let bodyLine = '';
  const lines = (variant: {
    host: string | undefined;
    path: string;
    query: string;
    dropHeaders: readonly string[];
  }): string => {
    const kept: Record<string, string> = {};
    forEachHeader(headers, (name, value) => {
      if (name.startsWith('x-api-') && !variant.dropHeaders.includes(name)) kept[name] = value;
    });
    return canonicalHead({ method, path: variant.path, host: variant.host, headers: kept, query: variant.query });
  };
  let canonical: string;
  try {
    // The as-received string: a failure here is the one verifyWebhook reports.
    canonical = lines({ host: baseHost, path: basePath, query: baseQuery, dropHeaders: [] });
    bodyLine = canonicalBody(body);
    canonical += bodyLine;
  } catch (error) {
    const payhookCode = isPayhookError(error) ? error.code : null;
    return result({
      code: payhookCode,
      message:
        payhookCode === 'MISSING_HOST'
          ? 'The request has no Host header, so no canonical string can be built: set `webhookUrl` to the URL registered with the service.'
          : `No canonical string can be built: ${error instanceof Error ? error.message : String(error)}`,
    });
  }
  // A string: the as-received build refuses a missing host (MISSING_HOST).
  const host = baseHost as string;
  const baseVariant: Variant = { host, path: basePath, query: baseQuery, dropHeaders: [] };
  const build = (variant: Variant): string | null => {
    try {
      return lines(variant) + bodyLine;
    } catch {
      // This variant's path or query cannot be written: not a candidate.
      return null;
    }
  };

  const environmentKeys = options.environmentKeys ?? SERVICE_PUBLIC_KEYS;
  const configured = configuredKeys(options, environmentKeys);
  const keys: NamedKey[] = [...configured];
  for (const env of Object.keys(environmentKeys) as ServiceEnvironment[]) {
    const key = environmentKeys[env];
    if (key !== undefined && !keys.some((k) => k.key === key) && keys.length < MAX_KEYS)
      keys.push({ name: env, key, configured: false });
  }
  for (const [name, key] of Object.entries(options.alternativeKeys ?? {})) {
    if (!keys.some((k) => k.key === key) && keys.length < MAX_KEYS) keys.push({ name, key, configured: false });
  }
  const usable: Array<NamedKey & { imported: CryptoKey }> = [];
  const unusable: string[] = [];
  const keyOptions = options.allowWeakKeys === true ? { allowWeakKeys: true } : undefined;
  for (const key of keys) {
    try {
      usable.push({ ...key, imported: (await importPublicKey(key.key, keyOptions)) as CryptoKey });
    } catch (error) {
      unusable.push(`${key.name} (${isPayhookError(error) ? error.code : 'unreadable'})`);
    }
  }
  let checks = 0;
  const verifies = async (text: string, key: CryptoKey): Promise<boolean> => {
    checks++;
    return verifySignature(text, signature, key, keyOptions);
  };

  const timestampHeader = getHeader(headers, 'x-api-timestamp');
  const clock = {
    ...(options.now !== undefined ? { now: options.now } : {}),
    ...(options.toleranceMs !== undefined ? { toleranceMs: options.toleranceMs } : {}),
  };
  const timestamp = checkTimestamp(timestampHeader, clock);
  const configuredUsable = usable.filter((key) => key.configured);

  for (const key of configuredUsable) {
    if (await verifies(canonical, key.imported)) {
      if (timestamp.ok) {
        return result({
          ok: true,
          signatureVerifies: true,
          canonical,
          verifiedCanonical: canonical,
          keyName: key.name,
          checks,
          message: `The delivery verifies with ${key.name}.`,
        });
      }
      return result({
        code: timestamp.code,
        signatureVerifies: true,
        canonical,
        verifiedCanonical: canonical,
        keyName: key.name,
        checks,
        fix:
          timestamp.code === 'TIMESTAMP_OUT_OF_WINDOW'
            ? 'check the server clock (NTP) if this is a fresh delivery; a replayed old delivery is rightly refused'
            : null,
        message: `The signature verifies with ${key.name}, but the timestamp is refused: ${timestamp.message}`,
      });
    }
  }

  const bytes = decodeBase64Lenient(signature);
  const triedKeys = usable.map((key) => key.name);
  if (bytes === null) {
    return result({
      code: 'SIGNATURE_MISMATCH',
      canonical,
      checks,
      tried: { hosts: [], paths: [], queries: [], keys: triedKeys },
      message:
        'The `signature` header is not base64, so no key can verify it: the header was altered on the way, or the request was not sent by the service.',
    });
  }
  const lengthMatches = usable.filter(
    (key) => bytes.length === Math.ceil((key.imported.algorithm as RsaHashedKeyAlgorithm).modulusLength / 8),
  );

  const hint = registered ?? parseWebhookUrl(options.registeredUrl) ?? announced;
  const hosts = candidateHosts(host, headers, hint?.host);
  if (receivedHost !== undefined) pushUnique(hosts, receivedHost, MAX_HOSTS + 1);
  const paths = candidatePaths(basePath, headers, hint?.path);
  if (basePath !== path) pushUnique(paths, path, MAX_PATHS + 1);
  const queries = candidateQueries(baseQuery, headers, hint?.query);
  if (baseQuery !== query) pushUnique(queries, query, MAX_QUERIES + 1);
  const headerSets: string[][] = [[], ...apiHeaders.slice(0, 3).map((name) => [name])];

  // Fewest changes first: each single change, then pairs of host/path/query.
  const variants: Array<{ variant: Variant; changes: DiagnosisChange[] }> = [{ variant: baseVariant, changes: [] }];
  const change = (part: DiagnosisChange['part'], received: string, expected: string): DiagnosisChange => ({
    part,
    received,
    expected,
  });
  for (const h of hosts.slice(1))
    variants.push({ variant: { ...baseVariant, host: h }, changes: [change('host', host, h)] });
  for (const p of paths.slice(1))
    variants.push({ variant: { ...baseVariant, path: p }, changes: [change('path', basePath, p)] });
  for (const q of queries.slice(1))
    variants.push({ variant: { ...baseVariant, query: q }, changes: [change('query', baseQuery, q)] });
  for (const dropHeaders of headerSets.slice(1)) {
    variants.push({ variant: { ...baseVariant, dropHeaders }, changes: [change('header', dropHeaders[0] ?? '', '')] });
  }
  for (const h of hosts.slice(1)) {
    for (const p of paths.slice(1))
      variants.push({
        variant: { ...baseVariant, host: h, path: p },
        changes: [change('host', host, h), change('path', basePath, p)],
      });
    for (const q of queries.slice(1))
      variants.push({
        variant: { ...baseVariant, host: h, query: q },
        changes: [change('host', host, h), change('query', baseQuery, q)],
      });
  }
  for (const p of paths.slice(1)) {
    for (const q of queries.slice(1))
      variants.push({
        variant: { ...baseVariant, path: p, query: q },
        changes: [change('path', basePath, p), change('query', baseQuery, q)],
      });
  }

  const tried = { hosts, paths, queries: queries.map((q) => (q === '' ? '(none)' : `?${q}`)), keys: triedKeys };
  const configuredNames = describeKeys(configured);
  // No key of the signature's length: nothing can verify, so nothing is built.
  for (const { variant, changes } of lengthMatches.length === 0 ? [] : variants) {
    if (checks >= MAX_CHECKS) break;
    const text = build(variant);
    if (text === null) continue;
    for (const key of lengthMatches) {
      if (checks >= MAX_CHECKS) break;
      // The as-received string was already checked against the configured keys.
      if (changes.length === 0 && key.configured) continue;
      if (!(await verifies(text, key.imported))) continue;
      const all = key.configured ? changes : [...changes, change('key', configuredNames, key.name)];
      const signedUrl = `https://${variant.host}${variant.path}${variant.query === '' ? '' : `?${variant.query}`}`;
      const fix = fixFor(all, { xfh, pinned: registered !== undefined, forwarded, receivedHost, signedUrl });
      const freshness = timestamp.ok ? '' : ` (note: the timestamp is refused too: ${timestamp.message})`;
      return result({
        code: 'SIGNATURE_MISMATCH',
        canonical,
        changes: all,
        verifiedCanonical: text,
        keyName: key.name,
        fix,
        checks,
        tried,
        message: `signature would verify with ${all.map((one) => describeChange(one, forwarded)).join(' and ')}: ${fix}.${freshness}`,
      });
    }
  }

  const notes: string[] = [];
  if (configured.length === 0) notes.push('no key is configured (pass `publicKeys` or `environment`)');
  if (unusable.length > 0) notes.push(`unusable keys: ${unusable.join(', ')}`);
  if (lengthMatches.length === 0 && usable.length > 0) {
    notes.push(`the signature is ${bytes.length} bytes long, which matches none of the keys tried`);
  }
  return result({
    code: 'SIGNATURE_MISMATCH',
    canonical,
    checks,
    tried,
    message:
      `No likely cause makes the signature verify. Tried hosts ${hosts.map((h) => code(h)).join(', ')}; ` +
      `paths ${paths.map((p) => code(p)).join(', ')}; queries ${tried.queries.map((q) => code(q)).join(', ')}; ` +
      `keys ${triedKeys.join(', ') || 'none'}${apiHeaders.length > 0 ? `; without ${apiHeaders.slice(0, 3).join(', ')}` : ''}. ` +
      (notes.length > 0 ? `Also: ${notes.join('; ')}. ` : '') +
      'Remaining causes: the body was changed after signing (a middleware that rewrote it), or the delivery was signed by a key you do not have.',
  });
}

/**
 * Options for {@link explainSignatureMismatch}.
 *
 * @example
 * ```ts
 * import type { ExplainHookOptions } from 'payhook/explain';
 *
 * const options: ExplainHookOptions = { report: (diagnosis) => console.warn(diagnosis.message), maxPerMinute: 5 };
 * ```
 */
export interface ExplainHookOptions {
  /**
   * Receives each diagnosis.
   * @defaultValue `console.warn` of `payhook: <message>`
   */
  report?: (diagnosis: VerificationDiagnosis) => void;
  /**
   * At most this many diagnoses a minute, and one at a time: each costs up
   * to a few hundred signature checks, and anyone can send a request with a
   * bad signature. The rest are skipped.
   * @defaultValue 10
   */
  maxPerMinute?: number;
}

/**
 * An opt-in debug hook for a handler's `onSignatureMismatch` option: on
 * every delivery refused with `SIGNATURE_MISMATCH` it runs
 * {@link explainVerificationFailure} with the handler's own options (after
 * the 401 is answered) and reports the diagnosis, so your logs say
 * "signature would verify with Host `shop.example.kg` (your request has
 * `internal:8080`): set `webhookUrl` …". It is rate-limited (10 a minute,
 * one at a time) because anyone can send a bad signature; turn it on while
 * setting up or debugging.
 *
 * @example
 * ```ts
 * import { createNodeWebhookHandler } from 'payhook/node';
 * import { explainSignatureMismatch } from 'payhook/explain';
 *
 * const options = {
 *   environment: 'production' as const,
 *   webhookUrl: 'https://shop.example.kg/webhooks/payments',
 *   onPayment: async () => {},
 * };
 * const handler = createNodeWebhookHandler({ ...options, onSignatureMismatch: explainSignatureMismatch(options) });
 * ```
 */
export function explainSignatureMismatch(
  options: ExplainOptions,
  hookOptions?: ExplainHookOptions,
): (request: ExplainRequest) => Promise<void> {
  const report =
    hookOptions?.report ??
    ((diagnosis: VerificationDiagnosis) => {
      (globalThis as { console?: { warn(message: string): void } }).console?.warn(`payhook: ${diagnosis.message}`);
    });
  const limit = hookOptions?.maxPerMinute ?? 10;
  let windowStart = 0;
  let used = 0;
  let running = false;
  return async (request) => {
    const now = Date.now();
    if (now - windowStart >= 60_000) {
      windowStart = now;
      used = 0;
    }
    if (running || used >= limit) return;
    used++;
    running = true;
    try {
      report(await explainVerificationFailure(request, options));
    } finally {
      running = false;
    }
  };
}
