import { PayhookError } from '../errors.js';
import type { HeadersInput, SearchParamsLike } from '../request.js';
import { forEachHeader, getHeader } from './headers.js';
import { canonicalBody, type JsonObject } from './json-body.js';
import type { UrlParts } from './url.js';

type Pair = [name: string, value: string];

/** A value for a message: text quoted, anything else by its type. */
const show = (value: unknown): string =>
  typeof value === 'string' ? JSON.stringify(value) : `of type ${typeof value}`;

/** UTF-16 code-unit order of the names (what `Array#sort` does for strings). */
const byName = (a: Pair, b: Pair): number => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/** Line 2: the path as `decodeURI` decodes it (`MALFORMED_PATH` when it cannot). */
function canonicalPath(path: unknown): string {
  if (path === undefined || path === null) return '';
  try {
    if (typeof path === 'string') return path.includes('%') ? decodeURI(path) : path;
  } catch {
    // reported below
  }
  throw new PayhookError(
    'MALFORMED_PATH',
    `The path ${show(path)} is not a string or holds a malformed percent escape.`,
  );
}

/**
 * Line 3: `host:<host>` then the `x-api-*` headers sorted by lower-cased
 * name, joined by `&`. `host` is the Host header or what replaces it
 * (`MISSING_HOST` when there is none).
 */
function canonicalHeaders(headers: HeadersInput, host: string | undefined): string {
  if (host === undefined) throw new PayhookError('MISSING_HOST', 'The request has no Host header.');
  const api: Pair[] = [];
  forEachHeader(headers, (name, value) => {
    if (name.startsWith('x-api-')) api.push([name, value]);
  });
  let line = `host:${host}`;
  for (const [name, value] of api.sort(byName)) line += `&${name}:${value}`;
  return line;
}

/**
 * `MALFORMED_QUERY` for a query name or value that is not a string, holds an
 * escape `decodeURI` rejects, or a lone surrogate.
 */
function malformedQuery(text: unknown): never {
  throw new PayhookError(
    'MALFORMED_QUERY',
    `The query parameter ${show(text)} is not a string or holds a malformed percent escape or a lone surrogate.`,
  );
}

/**
 * Line 4 (may be empty, then it is left out) from the parameters by name
 * (the last of a repeated name won): sorted by name, each
 * `encodeURI(decodeURI(…))`.
 */
function queryLine(entries: Map<string, string>): string {
  return [...entries]
    .sort(byName)
    .map((pair) =>
      pair
        .map((text) => {
          try {
            return encodeURI(decodeURI(text));
          } catch {
            return malformedQuery(text);
          }
        })
        .join('='),
    )
    .join('&');
}

/** Line 4 from the raw query text (what follows `?`). */
function canonicalQueryText(query: string): string {
  // URLSearchParams iterates its pairs in order (the DOM lib here lacks the iterable typing).
  return query === '' ? '' : queryLine(new Map(new URLSearchParams(query) as unknown as Iterable<[string, string]>));
}

/** Line 4 from the raw query text or a map-like of parameters, whose names and values are checked. */
function canonicalQuery(query: string | SearchParamsLike): string {
  if (typeof query === 'string') return canonicalQueryText(query);
  const entries = new Map<string, string>();
  query.forEach((value: unknown, name: unknown) => {
    if (typeof name !== 'string') malformedQuery(name);
    else
      entries.set(
        name,
        value === undefined || value === null ? '' : typeof value === 'string' ? value : malformedQuery(value),
      );
  });
  return queryLine(entries);
}

/** The lines joined (an empty query line left out); the body line comes last, so its errors come last. */
function joinLines(method: string, path: string, headers: string, query: string, body: JsonObject | null): string {
  return `${method.toLowerCase()}\n${path}\n${headers}\n${query === '' ? '' : query + '\n'}${canonicalBody(body)}`;
}

/**
 * Assembles the canonical string; the body is the parsed JSON object (or
 * `null`), so callers that need it again parse once. `host`, when given,
 * replaces the Host header (a pinned webhook URL, `X-Forwarded-Host`).
 *
 * @example
 * ```ts
 * import { assembleCanonical } from './canonical.js';
 * import { parseJsonBody } from './json-body.js';
 *
 * const body = parseJsonBody('{"amount":100}');
 * assembleCanonical({ method: 'POST', path: '/hook', headers: { host: 'h' } }, body); // 'post\n/hook\nhost:h\n{"amount":100}'
 * ```
 */
export function assembleCanonical(
  request: { method: string; path: string; headers: HeadersInput; query: string | SearchParamsLike },
  body: JsonObject | null,
  host?: string,
): string {
  const { method } = request;
  if (typeof method !== 'string') throw new PayhookError('INVALID_ARGUMENT', 'The request method must be a string.');
  const path = canonicalPath(request.path);
  const { headers } = request;
  return joinLines(
    method,
    path,
    canonicalHeaders(
      headers,
      host ?? (typeof headers === 'object' && headers !== null ? getHeader(headers, 'host') : undefined),
    ),
    canonicalQuery(request.query),
    body,
  );
}

/**
 * {@link assembleCanonical} for what verifyWebhook has already checked: a
 * string method, headers that are an object, and the path and raw query
 * text of a URL (its authority is not used: `host` replaces the Host header).
 *
 * @example
 * ```ts
 * import { canonicalOf } from './canonical.js';
 *
 * canonicalOf('POST', { authority: undefined, path: '/hook', query: '' }, { host: 'h' }, { amount: 100 }); // 'post\n/hook\nhost:h\n{"amount":100}'
 * ```
 */
export function canonicalOf(
  method: string,
  url: UrlParts,
  headers: HeadersInput,
  body: JsonObject | null,
  host?: string,
): string {
  return joinLines(
    method,
    canonicalPath(url.path),
    canonicalHeaders(headers, host ?? getHeader(headers, 'host')),
    canonicalQueryText(url.query),
    body,
  );
}
