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
 * path and query as the service requests them.
 */
export interface PinnedUrl {
  readonly host: string;
  readonly path: string;
  readonly query: string;
}

/**
 * Reads a `webhookUrl` option; throws `INVALID_ARGUMENT` unless it is an absolute URL.
 *
 * @example
 * ```ts
 * import { pinWebhookUrl } from './signed-target.js';
 *
 * pinWebhookUrl('https://Shop.example.kg:443/hook?shop=7'); // { host: 'shop.example.kg', path: '/hook', query: 'shop=7' }
 * ```
 */
export function pinWebhookUrl(webhookUrl: unknown): PinnedUrl {
  try {
    // `new URL` alone would read `mailto:x` or `a:b` as absolute: an authority is required.
    if (typeof webhookUrl !== 'string' || splitUrl(webhookUrl).authority === undefined) throw new TypeError();
    const { host, pathname, search } = new URL(webhookUrl);
    return { host, path: pathname, query: search.slice(1) };
  } catch {
    throw misuse('webhookUrl must be an absolute URL (https://…).');
  }
}

/** Where the signed host came from. */
export type HostSource = 'webhookUrl' | 'x-forwarded-host' | 'absolute-url' | 'host';

/** The options that decide the target: a pinned `webhookUrl`, and whether `X-Forwarded-Host` is trusted. */
export interface TargetOptions {
  readonly webhookUrl?: PinnedUrl | undefined;
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
export function signedTarget(
  request: { readonly method: string; readonly url: string; readonly headers: HeadersInput },
  options: TargetOptions,
): SignedTarget {
  const { method, headers } = request;
  const { authority, path, query } = splitUrl(request.url);
  const received = {
    host: getHeader(headers, 'host'),
    forwardedHost: firstListItem(getHeader(headers, 'x-forwarded-host')),
    // Userinfo is never part of the host a client sends.
    authority: authority?.replace(/^.*@/, '') || undefined,
    path,
    query,
  };
  const pinned = options.webhookUrl;
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
    pinned: pinned !== undefined,
    headers,
    received,
  };
}

/**
 * Why the app could read another query than the one signed, or `undefined`
 * when it reads exactly that one. The canonical query line is built as
 * `URLSearchParams` reads the query: a leading `?` is dropped, an empty name
 * is kept, and a repeated name keeps its last value. An app that parses it
 * otherwise (the `?shop` of `??shop=7`, the first `shop` of
 * `shop=8&shop=7`) would act on a parameter the signature does not cover.
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
    seen.set(name, value);
  });
  return problem;
}

/**
 * Lines 1 to 4 of the canonical string for a target. Throws, in this order,
 * `MALFORMED_PATH`, `MISSING_HOST`, `MALFORMED_QUERY` (a malformed escape, or
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
