/**
 * The values explain tries in place of the signed target's host, path and
 * query: what proxies and routers leave behind in headers, the registered
 * URL when known, and common mount points. The first value of each list is
 * the target's own.
 *
 * @module
 */
import { firstListItem, forEachHeader, getHeader } from '../lib/headers.js';
import type { PinnedUrl, SignedTarget } from '../lib/signed-target.js';
import { splitUrl } from '../lib/url.js';

/** Upper bounds that keep the search small whatever the request holds. */
const MAX_HOSTS = 6;
const MAX_PATHS = 10;
const MAX_QUERIES = 3;
const MAX_DROPPED_HEADERS = 6;
const COMMON_PREFIXES = ['/api', '/v1', '/api/v1', '/webhooks', '/webhook', '/hooks', '/payhook'] as const;

/** What to try for each part of the target. */
export interface Candidates {
  readonly hosts: readonly string[];
  readonly paths: readonly string[];
  readonly queries: readonly string[];
  /** Each `x-api-*` header (the timestamp aside) that may have been added after signing. */
  readonly droppable: readonly string[];
  /** Paths a proxy reported (X-Forwarded-Prefix, X-Original-URI…): a proxy, not the app's router, changed the path. */
  readonly proxyPaths: ReadonlySet<string>;
  /** Whether anything but the request itself named a host (a registered URL, a forwarding header). */
  readonly hostKnown: boolean;
  /** The registered URL's host, path and query, tried together too (a URL can differ in all three), when known. */
  readonly registered: { readonly host: string; readonly path: string; readonly query: string } | undefined;
  /** The registered URLs the request does not tell apart from the one chosen (see tiedTargets), each tried whole. */
  readonly ties: readonly PinnedUrl[];
}

function pushUnique(list: string[], value: string | undefined, max: number): void {
  if (value !== undefined && list.length < max && !list.includes(value)) list.push(value);
}

function withoutPort(host: string): string {
  return host.startsWith('[') ? host.replace(/(\])(:\d+)?$/, '$1') : host.replace(/:\d+$/, '');
}

/** The `host=` of the first element of a `Forwarded` header (RFC 7239). */
function forwardedHeaderHost(value: string | undefined): string | undefined {
  for (const pair of firstListItem(value)?.split(';') ?? []) {
    const [name, raw] = pair.split('=');
    if (name?.trim().toLowerCase() === 'host' && raw !== undefined) return raw.trim().replace(/^"|"$/g, '');
  }
  return undefined;
}

/** The original request target a rewriting proxy or router reports, if any. */
function originalTarget(target: SignedTarget): string | undefined {
  const { headers } = target;
  return (
    getHeader(headers, 'x-original-uri') ?? getHeader(headers, 'x-original-url') ?? getHeader(headers, 'x-rewrite-url')
  );
}

function candidateHosts(target: SignedTarget, hint: PinnedUrl | undefined): { hosts: string[]; known: boolean } {
  const { headers, received } = target;
  const host = target.host as string;
  const hosts = [host];
  const reported = [
    hint?.host,
    received.forwardedHost,
    forwardedHeaderHost(getHeader(headers, 'forwarded')),
    firstListItem(getHeader(headers, 'x-original-host')),
  ];
  for (const value of reported) pushUnique(hosts, value, MAX_HOSTS);
  pushUnique(hosts, withoutPort(host), MAX_HOSTS);
  const base = received.forwardedHost ?? host;
  const port = firstListItem(getHeader(headers, 'x-forwarded-port'));
  if (port !== undefined && /^\d+$/.test(port) && port !== '80' && port !== '443') {
    pushUnique(hosts, `${withoutPort(base)}:${port}`, MAX_HOSTS);
  }
  pushUnique(hosts, withoutPort(base), MAX_HOSTS);
  // As a proxy may have changed it: upper case, or a fully qualified name's trailing dot.
  pushUnique(hosts, withoutPort(base).toLowerCase().replace(/\.$/, ''), MAX_HOSTS);
  // The Host header itself, when the target's host came from elsewhere.
  pushUnique(hosts, received.host, MAX_HOSTS + 1);
  return { hosts, known: reported.some((value) => value !== undefined) };
}

function candidatePaths(target: SignedTarget, hint: PinnedUrl | undefined): { paths: string[]; proxy: Set<string> } {
  const { path } = target;
  const paths = [path];
  const proxy = new Set<string>();
  const registered = hint?.path;
  pushUnique(paths, registered, MAX_PATHS);
  const original = originalTarget(target);
  if (original !== undefined) {
    const originalPath = splitUrl(original).path;
    pushUnique(paths, originalPath, MAX_PATHS);
    proxy.add(originalPath);
  }
  const prefixes: Array<[prefix: string, byProxy: boolean]> = [];
  const forwardedPrefix = firstListItem(getHeader(target.headers, 'x-forwarded-prefix'));
  if (forwardedPrefix !== undefined) prefixes.push([forwardedPrefix.replace(/\/+$/, ''), true]);
  // The part of the registered path in front of the received one is the mount point.
  if (registered !== undefined && registered !== path && registered.endsWith(path) && path !== '/') {
    prefixes.push([registered.slice(0, registered.length - path.length), false]);
  }
  for (const prefix of COMMON_PREFIXES) prefixes.push([prefix, false]);
  for (const [prefix, byProxy] of prefixes) {
    if (prefix === '' || !prefix.startsWith('/')) continue;
    const longer = prefix + (path === '/' ? '' : path);
    pushUnique(paths, longer, MAX_PATHS);
    if (byProxy) proxy.add(longer);
    if (path.startsWith(`${prefix}/`)) pushUnique(paths, path.slice(prefix.length), MAX_PATHS);
  }
  pushUnique(paths, path.endsWith('/') && path.length > 1 ? path.slice(0, -1) : `${path}/`, MAX_PATHS);
  // The request's own path, when the target's came from webhookUrl.
  pushUnique(paths, target.received.path, MAX_PATHS + 1);
  return { paths, proxy };
}

function candidateQueries(target: SignedTarget, hint: PinnedUrl | undefined): string[] {
  const queries = [target.query];
  pushUnique(queries, '', MAX_QUERIES);
  const original = originalTarget(target);
  if (original !== undefined) pushUnique(queries, splitUrl(original).query, MAX_QUERIES);
  pushUnique(queries, hint?.query, MAX_QUERIES);
  pushUnique(queries, target.received.query, MAX_QUERIES + 1);
  return queries;
}

/**
 * The candidates for a target whose host is known (the as-received string
 * was built). `hint` is the URL the service was told to call, when known.
 *
 * @example
 * ```ts
 * import { candidatesFor } from './candidates.js';
 * import { signedTarget } from '../lib/signed-target.js';
 *
 * const target = signedTarget({ method: 'POST', url: '/hook', headers: { host: 'internal:8080' } }, {});
 * candidatesFor(target, undefined).hosts; // ['internal:8080', 'internal']
 * ```
 */
export function candidatesFor(target: SignedTarget, hint: PinnedUrl | undefined): Candidates {
  const { hosts, known } = candidateHosts(target, hint);
  const { paths, proxy } = candidatePaths(target, hint);
  const droppable: string[] = [];
  forEachHeader(target.headers, (name) => {
    if (name.startsWith('x-api-') && name !== 'x-api-timestamp' && !droppable.includes(name)) droppable.push(name);
  });
  return {
    hosts,
    paths,
    queries: candidateQueries(target, hint),
    // The last ones: a header added on the way usually follows those the service sent.
    droppable: droppable.slice(-MAX_DROPPED_HEADERS),
    proxyPaths: proxy,
    hostKnown: known,
    registered: hint === undefined ? undefined : { host: hint.host, path: hint.path, query: hint.query },
    ties: target.registered?.ties ?? [],
  };
}
