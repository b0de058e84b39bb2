import { PayhookError } from './errors.js';
import type { HeadersInput, SearchParamsLike } from './request-types.js';
import { forEachHeader } from './headers.js';

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

/** Line 4 from the raw query text (what follows `?`) or a map-like of parameters, whose names and values are checked. */
function canonicalQuery(query: string | SearchParamsLike): string {
  if (query === '') return '';
  // A URLSearchParams lists its pairs as it read them, so a repeated name's last value wins in the Map.
  const entries = new Map<string, string>();
  if (typeof query === 'string') query = new URLSearchParams(query);
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

/**
 * What lines 1 to 4 are built from: the method, the raw path, the host that
 * stands for the Host header (`undefined`: none, `MISSING_HOST`), the headers
 * whose `x-api-*` members are signed, and the query (raw text or a map).
 */
export interface CanonicalHead {
  readonly method: string;
  readonly path: unknown;
  readonly host: string | undefined;
  readonly headers: HeadersInput;
  readonly query: string | SearchParamsLike;
}

/**
 * Lines 1 to 4 of the canonical string, each ended by `\n` (an empty query
 * adds no line), so the body line is simply appended. Throws, in this order
 * (CONTRACT §4's), `MISSING_HOST`, `MALFORMED_PATH`, `MALFORMED_QUERY`.
 *
 * @example
 * ```ts
 * import { canonicalHead } from './canonical.js';
 * import { canonicalBody } from './json-body.js';
 *
 * const head = canonicalHead({ method: 'POST', path: '/hook', host: 'h', headers: {}, query: '' });
 * head + canonicalBody({ amount: 100 }); // 'post\n/hook\nhost:h\n{"amount":100}'
 * ```
 */
export function canonicalHead(head: CanonicalHead): string {
  const headers = canonicalHeaders(head.headers, head.host);
  const path = canonicalPath(head.path);
  const query = canonicalQuery(head.query);
  return `${head.method.toLowerCase()}\n${path}\n${headers}\n${query === '' ? '' : query + '\n'}`;
}
