import { PayhookError } from '../errors.js';
import type { HeadersInput, SearchParamsLike } from '../request.js';
import { forEachHeader, getHeader } from './headers.js';
import { canonicalBody, type JsonObject } from './json-body.js';

type Pair = [name: string, value: string];

/** UTF-16 code-unit order of the names (what `Array#sort` does for strings). */
/** A value for a message: text quoted, anything else by its type. */
const show = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value) : `of type ${typeof value}`);

const byName = (a: Pair, b: Pair): number => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/** Line 2: the path as `decodeURI` decodes it (`MALFORMED_PATH` when it cannot). */
function canonicalPath(path: unknown): string {
  if (path === undefined || path === null || path === '') return '';
  try {
    if (typeof path === 'string') return path.includes('%') ? decodeURI(path) : path;
  } catch {
    // reported below
  }
  throw new PayhookError('MALFORMED_PATH', `The path ${show(path)} is not a string or holds a malformed percent escape.`);
}

/** Line 3: `host:<Host>` then the `x-api-*` headers sorted by lower-cased name, joined by `&`. */
function canonicalHeaders(headers: HeadersInput, host: string | undefined): string {
  host ??= typeof headers === 'object' && headers !== null ? getHeader(headers, 'host') : undefined;
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
 * Line 4 (may be empty, then it is left out): the parameters sorted by name,
 * each `encodeURI(decodeURI(…))`; the last of a repeated name wins.
 * `MALFORMED_QUERY` for a name or value that is not a
 * string, holds an escape `decodeURI` rejects, or a lone surrogate.
 */
function canonicalQuery(query: string | SearchParamsLike): string {
  if (query === '') return '';
  const entries = new Map<string, string>();
  const fail = (text: unknown): never => {
    throw new PayhookError('MALFORMED_QUERY', `The query parameter ${show(text)} is not a string or holds a malformed percent escape or a lone surrogate.`);
  };
  (typeof query === 'string' ? new URLSearchParams(query) : query).forEach((value: unknown, name: unknown) => {
    if (typeof name !== 'string') fail(name);
    else entries.set(name, value === undefined || value === null ? '' : typeof value === 'string' ? value : fail(value));
  });
  return [...entries]
    .sort(byName)
    .map((pair) =>
      pair
        .map((text) => {
          try {
            return encodeURI(decodeURI(text));
          } catch {
            return fail(text);
          }
        })
        .join('='),
    )
    .join('&');
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
  const headers = canonicalHeaders(request.headers, host);
  const query = canonicalQuery(request.query);
  return `${method.toLowerCase()}\n${path}\n${headers}\n${query === '' ? '' : query + '\n'}${canonicalBody(body)}`;
}
