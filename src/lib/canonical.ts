import type { CanonicalRequest } from '../canonical.js';
import { PayhookError } from '../errors.js';
import type { HeadersInput, QueryInput, SearchParamsLike } from '../request.js';
import { forEachHeader, getHeader } from './headers.js';
import { canonicalBody, type JsonObject } from './json-body.js';

type Pair = [name: string, value: string];

/** UTF-16 code-unit order of the names (what `Array#sort` does for strings). */
const byName = (a: Pair, b: Pair): number => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/** Line 2: the path as `decodeURI` decodes it (`MALFORMED_PATH` when it cannot). */
function canonicalPath(path: unknown): string {
  if (path === undefined || path === null || path === '') return '';
  if (typeof path !== 'string') throw new PayhookError('MALFORMED_PATH', `The path must be a string, not a ${typeof path}.`);
  try {
    return path.includes('%') ? decodeURI(path) : path;
  } catch (cause) {
    throw new PayhookError('MALFORMED_PATH', `The path holds a malformed percent escape: ${JSON.stringify(path)}.`, { cause });
  }
}

/** Line 3: `host:<Host>` then the `x-api-*` headers sorted by lower-cased name, joined by `&`. */
function canonicalHeaders(headers: HeadersInput, host: string | undefined): string {
  host ??= typeof headers === 'object' && headers !== null ? getHeader(headers, 'host') : undefined;
  if (host === undefined) {
    throw new PayhookError('MISSING_HOST', 'The request has no Host header, so its signature cannot be checked.');
  }
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
 * `MALFORMED_QUERY` for a value that is not a string, an escape `decodeURI`
 * rejects, or a lone surrogate.
 */
function canonicalQuery(query: QueryInput): string {
  if (query === undefined || query === null || query === '') return '';
  if (typeof query !== 'object' && typeof query !== 'string') {
    throw new PayhookError('MALFORMED_QUERY', `The query must be a string, a map or a URLSearchParams, not a ${typeof query}.`);
  }
  const entries = new Map<string, string>();
  const add = (value: unknown, name: unknown): void => {
    // Some frameworks give repeated names as arrays: the last one wins.
    if (Array.isArray(value) && value.every((item) => typeof item === 'string')) value = value.at(-1);
    if (typeof name !== 'string' || (typeof value !== 'string' && value !== undefined && value !== null)) {
      throw new PayhookError('MALFORMED_QUERY', `The query parameter ${JSON.stringify(name) ?? typeof name} is not a string.`);
    }
    entries.set(name, value ?? '');
  };
  const params = typeof query === 'string' ? new URLSearchParams(query) : query;
  if (typeof (params as SearchParamsLike).forEach === 'function') (params as SearchParamsLike).forEach(add);
  else for (const name of Object.keys(params)) add((params as Record<string, unknown>)[name], name);
  return [...entries]
    .sort(byName)
    .map((pair) =>
      pair
        .map((text) => {
          try {
            return encodeURI(decodeURI(text));
          } catch (cause) {
            throw new PayhookError('MALFORMED_QUERY', `The query holds a malformed percent escape or a lone surrogate: ${JSON.stringify(text)}.`, { cause });
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
export function assembleCanonical(request: Omit<CanonicalRequest, 'body'>, body: JsonObject | null, host?: string): string {
  const { method } = request;
  if (typeof method !== 'string') {
    throw new PayhookError('INVALID_ARGUMENT', `The request method must be a string, not ${method === null ? 'null' : typeof method}.`);
  }
  const path = canonicalPath(request.path);
  const headers = canonicalHeaders(request.headers, host);
  const query = canonicalQuery(request.query);
  return `${method.toLowerCase()}\n${path}\n${headers}\n${query === '' ? '' : query + '\n'}${canonicalBody(body)}`;
}
