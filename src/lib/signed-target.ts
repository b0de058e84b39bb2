/**
 * What the service signed for a request: its method, host, path, query and
 * `x-api-*` headers, and why each came from where it did. verifyWebhook
 * builds its canonical string from this, and explain searches variations of
 * it, so the two can never disagree about what was checked.
 *
 * @module
 */
import { canonicalHead } from './canonical.js';
import { PayhookError } from './errors.js';
import { firstListItem, getHeader } from './headers.js';
import { misuse } from './misuse.js';
import type { HeadersInput } from './request-types.js';
import { splitUrl } from './url.js';

/**
 * The callback URL registered with the service, read once: the host as an
 * HTTP client sends it for this URL (lower case, punycode, no default port),
 * path and query as the service requests them, and the URL as given.
 */
export interface PinnedUrl {
  readonly url: string;
  readonly host: string;
  readonly path: string;
  readonly query: string;
  /** Other registered URLs that fit the request just as well, which the request does not tell apart: each is tried. */
  readonly ties?: readonly PinnedUrl[];
  /** How many more fit it as well but are not tried (past {@link MAX_TIES}). */
  readonly untried?: number;
}

/**
 * Reads a `webhookUrl` option; throws `INVALID_ARGUMENT` unless it is an absolute URL.
 *
 * @example
 * ```ts
 * import { pinWebhookUrl } from './signed-target.js';
 *
 * pinWebhookUrl('https://Shop.example.kg:443/hook?shop=7'); // { host: 'shop.example.kg', path: '/hook', query: 'shop=7', … }
 * ```
 */
export function pinWebhookUrl(webhookUrl: unknown): PinnedUrl {
  let url: URL;
  try {
    // `new URL` alone would read `mailto:x` or `a:b` as absolute: an authority is required.
    if (typeof webhookUrl !== 'string' || splitUrl(webhookUrl).authority === undefined) throw new TypeError();
    url = new URL(webhookUrl);
  } catch {
    throw misuse('webhookUrl must be an absolute URL (https://…), or a list or a function of them.');
  }
  // The service signs the query as a map, one value per name: no request could match such a URL.
  // Named by the parameter, not the URL: a webhookUrl function's misuse reaches the log, and the URL may hold a secret.
  const names = new Set<string>();
  let twice: string | undefined;
  url.searchParams.forEach((_value, name) => {
    if (names.has(name)) twice ??= name;
    names.add(name);
  });
  if (twice !== undefined) {
    throw misuse(
      `webhookUrl names a query parameter more than once (${JSON.stringify(twice)}); the service signs each name once.`,
    );
  }
  return { url: webhookUrl, host: url.host, path: url.pathname, query: url.search.slice(1) };
}

/** The request as a `webhookUrl` function sees it. */
export interface TargetRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: HeadersInput;
}

/**
 * Internal: the registered URL a request was signed for, or `undefined` when none of them fits it (or the
 * merchant's function, `fromFunction`, returned none).
 */
export type RegisteredUrl = ((request: TargetRequest) => PinnedUrl | undefined) & { readonly fromFunction?: true };

// A webhookUrl function's answers, read once each; bounded, since a function may answer anything.
const MAX_REMEMBERED_URLS = 1_000;

/** Internal: how many registered URLs that a request does not tell apart are tried besides the first. */
export const MAX_TIES = 8;

/**
 * Reads the `webhookUrl` option once: one URL (every request was signed for
 * it), a list (the one whose path is the request's and whose query the
 * request carries; of several, the one with the most parameters, then the
 * one for the request's Host, the next {@link MAX_TIES} as good kept as its `ties`), or a function of the request returning the URL, or
 * `undefined` for none. Throws `INVALID_ARGUMENT` for anything else.
 *
 * @example
 * ```ts
 * import { registeredUrl } from './signed-target.js';
 *
 * const pin = registeredUrl(['https://shop.example.kg/hook?shop=7', 'https://shop.example.kg/hook?shop=8']);
 * pin({ method: 'POST', url: '/hook?shop=8', headers: {} })?.query; // 'shop=8'
 * ```
 */
export function registeredUrl(option: unknown): RegisteredUrl {
  if (typeof option === 'function') {
    const resolve = option as (request: TargetRequest) => unknown;
    const remembered = new Map<string, PinnedUrl>();
    const pin = (request: TargetRequest): PinnedUrl | undefined => {
      const answer = resolve(request);
      if (answer === undefined || answer === null) return undefined;
      if (typeof answer !== 'string') throw misuse('A webhookUrl function must return a URL string, or undefined.');
      let pinned = remembered.get(answer);
      if (pinned === undefined) {
        if (remembered.size >= MAX_REMEMBERED_URLS) remembered.clear();
        remembered.set(answer, (pinned = pinWebhookUrl(answer)));
      }
      return pinned;
    };
    return Object.assign(pin, { fromFunction: true as const });
  }
  if (Array.isArray(option)) {
    if (option.length === 0) throw misuse('webhookUrl must list at least one URL.');
    const urls = option.map(pinWebhookUrl);
    const params = new Map(urls.map((url) => [url, paramCount(url.query)]));
    return (request) => {
      const { path, query } = splitUrl(request.url);
      const carried = (url: PinnedUrl) => missingFrom(url.query, query) === undefined;
      let fits = urls.filter((url) => samePath(url.path, path) && carried(url));
      // A framework that strips its mount point (Next.js basePath, Hono app.mount) hands on the rest of the path:
      // the entries ending with it, as one webhookUrl's path is taken whatever the request's. The signature decides.
      if (fits.length === 0 && path.startsWith('/') && path !== '/') {
        fits = urls.filter((url) => endsWithPath(url.path, path) && carried(url));
      }
      if (fits.length <= 1) return fits[0];
      // Several fit (`/hook` and `/hook?shop=7`, or one path on two hosts): the one registering the most
      // parameters, then the one for the request's Host, so a genuine delivery is never checked against another.
      // This only picks which URL to check (the signature must still be one made for it), so a forwarded host may help.
      const hosts = [
        oneHost(getHeader(request.headers, 'host')),
        firstListItem(getHeader(request.headers, 'x-forwarded-host')),
      ];
      const named = new Set(hosts.map(normalHost));
      const rank = (url: PinnedUrl): number => params.get(url)! * 2 + (named.has(url.host) ? 1 : 0);
      const best = fits.reduce((top, url) => (rank(url) > rank(top) ? url : top));
      // One path on two hosts, and a Host naming neither (a proxy rewrote it): the signature tells which. Each costs
      // a signature check, and the sender picks the Host: so only the first few are kept.
      const equal = fits.filter((url) => url !== best && rank(url) === rank(best));
      const ties = equal.slice(0, MAX_TIES);
      const untried = equal.length - ties.length;
      return ties.length === 0 ? best : { ...best, ties, ...(untried > 0 && { untried }) };
    };
  }
  const pinned = pinWebhookUrl(option);
  return () => pinned;
}

/**
 * A Host value as `URL.host` writes it: lower case, without the default port.
 *
 * @example
 * ```ts
 * import { normalHost } from './signed-target.js';
 *
 * normalHost('Shop.Example.KG:443'); // 'shop.example.kg'
 * ```
 */
export function normalHost(host: string | undefined): string | undefined {
  return host?.toLowerCase().replace(/:(?:443|80)$/, '');
}

function paramCount(query: string): number {
  let count = 0;
  new URLSearchParams(query).forEach(() => count++);
  return count;
}

/** Whether `registered` is longer than `received` and ends with it (whole segments: `received` starts with `/`). */
function endsWithPath(registered: string, received: string): boolean {
  const cut = registered.length - received.length;
  return cut > 0 && samePath(registered.slice(cut), received);
}

/** Whether two paths are one, escapes compared decoded (`/h%C3%A9` is `/h%c3%a9`). */
function samePath(registered: string, received: string): boolean {
  if (registered === received) return true;
  try {
    return decodeURI(registered) === decodeURI(received);
  } catch {
    return false;
  }
}

/**
 * Why a request's query does not carry the registered one: a parameter it
 * lacks or gives another value (the words before "the registered
 * webhookUrl"), or `undefined` when it carries every one (it may add others).
 *
 * @example
 * ```ts
 * import { missingFrom } from './signed-target.js';
 *
 * missingFrom('shop=7', 'utm=x'); // 'lacks the parameter "shop" of'
 * missingFrom('shop=7', 'shop=7&utm=x'); // undefined
 * ```
 */
export function missingFrom(registered: string, received: string): string | undefined {
  if (registered === '') return undefined;
  const got = new URLSearchParams(received);
  let problem: string | undefined;
  new URLSearchParams(registered).forEach((value, name) => {
    const values = got.getAll(name);
    if (problem !== undefined) return;
    // A name without a value may itself be the secret (`?9f86d…`): the sender is answered this, so it is not named.
    const which = value === '' ? 'a parameter without a value' : `the parameter ${JSON.stringify(name)}`;
    if (values.length === 0) problem = `lacks ${which} of`;
    else if (values.some((one) => one !== value)) problem = `gives ${which} another value than`;
  });
  return problem;
}

/**
 * Several Host lines, as a Web `Headers` joins them (`h, h`; payhook/node
 * joins them alike), that name one host (letter case and a default port
 * aside) are that host as first written; naming several hosts, they stay
 * joined, and {@link targetHead} refuses them.
 */
function oneHost(host: string | undefined): string | undefined {
  if (host === undefined || !host.includes(',')) return host;
  const [first = '', ...others] = host.split(',').map((part) => part.trim());
  // Commas and nothing else name no host: left joined, for targetHead to refuse.
  return first !== '' && others.every((other) => normalHost(other) === normalHost(first)) ? first : host;
}

/** Where the signed host came from. */
export type HostSource = 'webhookUrl' | 'x-forwarded-host' | 'absolute-url' | 'host';

/** The options that decide the target: the registered `webhookUrl`(s), and whether `X-Forwarded-Host` is trusted. */
export interface TargetOptions {
  readonly webhookUrl?: RegisteredUrl | undefined;
  readonly trustForwardedHeaders?: boolean | undefined;
}

/** The signed target of one request, with what the request itself carried. */
export interface SignedTarget {
  readonly method: string;
  /** The host that stands for `Host` in the canonical string; `undefined` when there is none. */
  readonly host: string | undefined;
  readonly hostSource: HostSource | undefined;
  /** Path and query still percent-encoded, as signed. */
  readonly path: string;
  readonly query: string;
  /** Whether path and query come from `webhookUrl` (then the request's own are not signed). */
  readonly pinned: boolean;
  /** The registered URL the request was signed for, when `webhookUrl` is set and one fits it. */
  readonly registered: PinnedUrl | undefined;
  /** Set when `webhookUrl` is set but the request does not fit it: why. */
  readonly mismatch: string | undefined;
  /** Every header; the `x-api-*` ones are signed. */
  readonly headers: HeadersInput;
  /** What arrived: the Host header, the first X-Forwarded-Host, an absolute URL's authority, path and query. */
  readonly received: {
    readonly host: string | undefined;
    readonly forwardedHost: string | undefined;
    readonly authority: string | undefined;
    readonly path: string;
    readonly query: string;
  };
}

/**
 * The signed target of a request: host, path and query from the pinned
 * `webhookUrl` when there is one; otherwise path and query from the request
 * URL, and the host from the first `X-Forwarded-Host` when trusted (a blank
 * one counts as none), else the `Host` header, else, when there is no Host
 * header at all (some HTTP/2 stacks), an absolute URL's authority.
 *
 * @example
 * ```ts
 * import { signedTarget } from './signed-target.js';
 *
 * const target = signedTarget({ method: 'POST', url: '/hook?shop=7', headers: { host: 'shop.example.kg' } }, {});
 * target.host; // 'shop.example.kg'
 * target.hostSource; // 'host'
 * ```
 */
export function signedTarget(request: TargetRequest, options: TargetOptions): SignedTarget {
  const { method, headers } = request;
  const { authority, path, query } = splitUrl(request.url);
  const received = {
    host: oneHost(getHeader(headers, 'host')),
    forwardedHost: firstListItem(getHeader(headers, 'x-forwarded-host')),
    // splitUrl leaves userinfo out: it is never part of the host a client sends.
    authority: oneHost(authority || undefined),
    path,
    query,
  };
  const pinned = options.webhookUrl?.(request);
  const missing = pinned === undefined ? undefined : missingFrom(pinned.query, query);
  const mismatch =
    options.webhookUrl === undefined
      ? undefined
      : pinned === undefined
        ? options.webhookUrl.fromFunction
          ? 'The webhookUrl function returned no URL.'
          : 'The request fits none of the registered webhookUrl values (by path and query).'
        : // Only what is wrong: the sender is answered this, and the registered URL may hold a secret.
          missing && `The request's query ${missing} the registered webhookUrl.`;
  let host: string | undefined;
  let hostSource: HostSource | undefined;
  if (pinned !== undefined) [host, hostSource] = [pinned.host, 'webhookUrl'];
  else if (options.trustForwardedHeaders === true && received.forwardedHost !== undefined)
    [host, hostSource] = [received.forwardedHost, 'x-forwarded-host'];
  else if (received.host !== undefined) [host, hostSource] = [received.host, 'host'];
  else if (received.authority !== undefined) [host, hostSource] = [received.authority, 'absolute-url'];
  return {
    method,
    host,
    hostSource,
    path: pinned?.path ?? path,
    query: pinned?.query ?? query,
    pinned: options.webhookUrl !== undefined,
    registered: pinned,
    mismatch,
    headers,
    received,
  };
}

const SEPARATOR_IN_NAME = /[&=]/;
const NOT_IN_HOST = /[&,]/;

/** Whether `decodeURI` changes `text` (a malformed escape was refused before: MALFORMED_QUERY). */
function decodesAgain(text: string): boolean {
  if (!text.includes('%')) return false;
  try {
    return decodeURI(text) !== text;
  } catch {
    return true;
  }
}

/**
 * Why the app could read another query than the one signed, or `undefined`
 * when it reads exactly that one. The canonical query line is built as
 * `URLSearchParams` reads the query: a leading `?` is dropped, an empty name
 * is kept, and a repeated name keeps its last value. An app that parses it
 * otherwise (the `?shop` of `??shop=7`, the first `shop` of
 * `shop=8&shop=7`) would act on a parameter the signature does not cover.
 *
 * The line itself is ambiguous in two more ways. An escaped `&` or `=` is
 * written as a separator, and each name and value is decoded once more
 * (`decodeURI`). Names never need either, so a name holding `&` or `=`
 * (`a%3Db=c` has the line of `a=b%3Dc`) or an escape left once decoded
 * (`sh%256Fp`, read as `sh%6Fp`, has the line of `shop`) is refused. Values
 * do (the service signs `k=v&z` and `%D1%82`, canonical vectors
 * `query-already-encoded-values` and others), so they are not: only a
 * pinned `webhookUrl` tells `ref=x%26shop%3D8` from `ref=x&shop=8`.
 *
 * @example
 * ```ts
 * import { ambiguousQuery } from './signed-target.js';
 *
 * ambiguousQuery('shop=7&shop=7'); // undefined
 * ambiguousQuery('shop=8&shop=7'); // 'the parameter "shop" is repeated with different values'
 * ```
 */
export function ambiguousQuery(query: string): string | undefined {
  if (query.startsWith('?')) return 'the query starts with "?"';
  const seen = new Map<string, string>();
  let problem: string | undefined;
  new URLSearchParams(query).forEach((value, name) => {
    const before = seen.get(name);
    if (problem !== undefined) return;
    if (name === '') problem = 'a parameter has no name';
    else if (before !== undefined && before !== value)
      problem = `the parameter ${JSON.stringify(name)} is repeated with different values`;
    else if (SEPARATOR_IN_NAME.test(name) || decodesAgain(name))
      problem = `the parameter name ${JSON.stringify(name)} holds "&", "=" or a percent escape once decoded, which the signed line reads otherwise`;
    seen.set(name, value);
  });
  return problem;
}

/**
 * Lines 1 to 4 of the canonical string for a target. Throws, in this order,
 * `URL_MISMATCH` (the request does not fit the registered `webhookUrl`),
 * `MISSING_HOST`, `MALFORMED_PATH`, `MALFORMED_QUERY` (a malformed escape, or
 * a query from the request that the app could read otherwise than signed:
 * {@link ambiguousQuery}).
 *
 * @example
 * ```ts
 * import { signedTarget, targetHead } from './signed-target.js';
 *
 * targetHead(signedTarget({ method: 'POST', url: '/hook', headers: { host: 'h' } }, {})); // 'post\n/hook\nhost:h\n'
 * ```
 */
export function targetHead(target: SignedTarget): string {
  if (target.mismatch !== undefined) {
    throw new PayhookError('URL_MISMATCH', target.mismatch);
  }
  // No host name holds "&": one that does could carry signed x-api-* headers moved out of their own lines.
  // Nor ",": that is several Host lines joined, and which one the service signed for is not known.
  if (!target.pinned && target.host !== undefined && NOT_IN_HOST.test(target.host)) {
    const several = target.host.includes(',');
    throw new PayhookError(
      'MISSING_HOST',
      several
        ? `The request names more than one host (${JSON.stringify(target.host)}); a request has one Host.`
        : `The host ${JSON.stringify(target.host)} holds "&", which no host name has.`,
    );
  }
  const head = canonicalHead(target);
  const problem = target.pinned ? undefined : ambiguousQuery(target.query);
  if (problem !== undefined) {
    throw new PayhookError(
      'MALFORMED_QUERY',
      `The query is refused: ${problem}, so your app may read another query than the one signed.`,
    );
  }
  return head;
}

/** Internal: one registered URL a request does not tell apart from the one chosen, with the target signed for it. */
export interface TiedTarget {
  readonly url: PinnedUrl;
  readonly target: SignedTarget;
  /** Lines 1 to 4 of the canonical string for `target`. */
  readonly head: string;
}

/**
 * The ties of a target's registered URL (see {@link registeredUrl}), each
 * with the head signed for it; one whose own escape is malformed is passed
 * over (nothing can be signed for it). verifyWebhook tries them in turn, and
 * explain judges from the one that verifies.
 *
 * @example
 * ```ts
 * import { signedTarget, tiedTargets } from './signed-target.js';
 *
 * tiedTargets(signedTarget({ method: 'POST', url: '/hook', headers: {} }, {})); // [] (no webhookUrl, no ties)
 * ```
 */
export function tiedTargets(target: SignedTarget): TiedTarget[] {
  const tied: TiedTarget[] = [];
  for (const url of target.registered?.ties ?? []) {
    const at = { ...target, host: url.host, path: url.path, query: url.query, registered: url };
    try {
      tied.push({ url, target: at, head: targetHead(at) });
    } catch {
      // a registered URL with a malformed escape of its own
    }
  }
  return tied;
}
