import type { CanonicalRequest } from '../canonical.js';
import { PayhookError } from '../errors.js';
import type { HeadersInput, QueryInput, SearchParamsLike } from '../request.js';
import { forEachHeader, getHeader } from './headers.js';
import { canonicalBody, type JsonObject } from './json-body.js';

function decode(text: string, code: 'MALFORMED_PATH' | 'MALFORMED_QUERY', what: string): string {
  try {
    return decodeURI(text);
  } catch (cause) {
    throw new PayhookError(code, `The ${what} holds a malformed percent escape: ${JSON.stringify(text)}.`, { cause });
  }
}

/** `encodeURI(decodeURI(text))`; both throw a URIError (bad escape, lone surrogate). */
function reencode(text: string, what: string): string {
  const decoded = decode(text, 'MALFORMED_QUERY', what);
  try {
    return encodeURI(decoded);
  } catch (cause) {
    throw new PayhookError('MALFORMED_QUERY', `The ${what} holds a lone UTF-16 surrogate: ${JSON.stringify(text)}.`, { cause });
  }
}

/**
 * Line 2: the path as `decodeURI` decodes it (`MALFORMED_PATH` when it cannot).
 *
 * @example
 * ```ts
 * import { canonicalPath } from './canonical.js';
 *
 * canonicalPath('/%D0%BA%2F'); // '/к%2F'
 * ```
 */
export function canonicalPath(path: string | null | undefined): string {
  if (path === undefined || path === null || path === '') return '';
  if (typeof path !== 'string') {
    throw new PayhookError('MALFORMED_PATH', `The path must be a string, but it is a ${typeof path}.`);
  }
  return path.includes('%') ? decode(path, 'MALFORMED_PATH', 'path') : path;
}

/**
 * Line 3: `host:<Host>` then every `x-api-*` header, sorted by lower-cased
 * name (`MISSING_HOST` without a Host header).
 *
 * @example
 * ```ts
 * import { canonicalHeaders } from './canonical.js';
 *
 * canonicalHeaders({ Host: 'h', 'X-Api-B': '2', 'x-api-a': '1' }); // 'host:h&x-api-a:1&x-api-b:2'
 * ```
 */
export function canonicalHeaders(headers: HeadersInput): string {
  if (typeof headers !== 'object' || headers === null) {
    throw new PayhookError('MISSING_HOST', 'The request has no headers, so no Host header.');
  }
  const host = getHeader(headers, 'host');
  if (host === undefined) {
    throw new PayhookError('MISSING_HOST', 'The request has no Host header, so its signature cannot be checked.');
  }
  const apiHeaders: Array<[name: string, value: string]> = [];
  forEachHeader(headers, (name, value) => {
    if (name.startsWith('x-api-')) apiHeaders.push([name, value]);
  });
  apiHeaders.sort(byName);
  let line = `host:${host}`;
  for (const [name, value] of apiHeaders) line += `&${name}:${value}`;
  return line;
}

function byName(a: readonly [string, string], b: readonly [string, string]): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}

function isSearchParamsLike(query: object): query is SearchParamsLike {
  return typeof (query as SearchParamsLike).forEach === 'function';
}

function queryEntries(query: QueryInput): Map<string, string> {
  const entries = new Map<string, string>();
  if (query === undefined || query === null) return entries;
  if (typeof query === 'string') {
    new URLSearchParams(query).forEach((value, name) => entries.set(name, value));
    return entries;
  }
  if (typeof query !== 'object') {
    throw new PayhookError('MALFORMED_QUERY', `The query must be a string, a map or a URLSearchParams, not a ${typeof query}.`);
  }
  if (isSearchParamsLike(query)) {
    // A URLSearchParams gives strings; a Map or hand-made object may not.
    query.forEach((value: unknown, name: unknown) => {
      if (typeof name !== 'string' || (typeof value !== 'string' && value !== undefined && value !== null)) {
        throw new PayhookError('MALFORMED_QUERY', 'The query holds a parameter name or value that is not a string.');
      }
      entries.set(name, typeof value === 'string' ? value : '');
    });
    return entries;
  }
  for (const name of Object.keys(query)) {
    const value: unknown = (query as Record<string, unknown>)[name];
    if (value === undefined || value === null) entries.set(name, '');
    else if (typeof value === 'string') entries.set(name, value);
    else if (Array.isArray(value) && value.every((item) => typeof item === 'string')) {
      // Some frameworks give repeated names as arrays: the last one wins.
      entries.set(name, value.length === 0 ? '' : (value[value.length - 1] as string));
    } else {
      throw new PayhookError('MALFORMED_QUERY', `The query parameter ${JSON.stringify(name)} is not a string.`);
    }
  }
  return entries;
}

/**
 * Line 4 (may be empty, then it is left out): the sorted, re-encoded query
 * (`MALFORMED_QUERY` for an escape `decodeURI` rejects or a lone surrogate).
 *
 * @example
 * ```ts
 * import { canonicalQuery } from './canonical.js';
 *
 * canonicalQuery('?b=2&a=%D0%BA'); // 'a=%D0%BA&b=2'
 * ```
 */
export function canonicalQuery(query: QueryInput): string {
  const entries = queryEntries(query);
  if (entries.size === 0) return '';
  const names = [...entries.keys()].sort();
  let line = '';
  for (const name of names) {
    const value = entries.get(name) ?? '';
    const encodedName = reencode(name, 'query parameter name');
    const encodedValue = reencode(value, `value of query parameter ${JSON.stringify(name)}`);
    line += (line === '' ? '' : '&') + encodedName + '=' + encodedValue;
  }
  return line;
}

/**
 * Assembles the canonical string from already built parts; the body is the
 * parsed JSON object (or `null`), so callers that need it again parse once.
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
  request: Omit<CanonicalRequest, 'body'>,
  body: JsonObject | null,
): string {
  if (typeof request.method !== 'string') {
    throw new PayhookError('INVALID_ARGUMENT', `The request method must be a string, not ${request.method === null ? 'null' : typeof request.method}.`);
  }
  const method = request.method.toLowerCase();
  const path = canonicalPath(request.path);
  const headers = canonicalHeaders(request.headers);
  const query = canonicalQuery(request.query);
  return `${method}\n${path}\n${headers}\n${query === '' ? '' : query + '\n'}${canonicalBody(body)}`;
}

