import { canonicalHead } from './lib/canonical.js';
import { PayhookError } from './lib/errors.js';
import { getHeader } from './lib/headers.js';
import { misuse } from './lib/misuse.js';
import type { BodyInput, HeadersInput, QueryInput, SearchParamsLike } from './lib/request-types.js';
import { readSigned } from './lib/signed-read.js';

/**
 * The parts of a request that the service signs.
 *
 * @example
 * ```ts
 * import type { CanonicalRequest } from 'payhook';
 *
 * const request: CanonicalRequest = {
 *   method: 'POST',
 *   path: '/webhooks/payments',
 *   headers: { host: 'shop.example.kg', 'x-api-timestamp': '1763712000000' },
 *   body: '{"amount":100}',
 * };
 * ```
 */
export interface CanonicalRequest {
  /** The HTTP method, in any letter case. */
  method: string;
  /** The path without the query; may be percent-encoded. */
  path: string;
  /** All request headers; `Host` and every `x-api-*` header take part. */
  headers: HeadersInput;
  /** The query: a map, a `URLSearchParams`, or the raw query string. */
  query?: QueryInput;
  /** The body: raw JSON text or bytes, or an already parsed value. */
  body?: BodyInput;
}

/**
 * Builds the canonical string the service signs for a request: method, path,
 * `Host` plus `x-api-*` headers, query (when present) and body, one per line.
 * It is byte-identical to the service's reference signer on every conformance
 * vector.
 *
 * The body may be raw text or bytes, or the value a body parser already
 * produced: the body line is always re-built from the parsed value (keys at
 * the top level sorted by `en-US` collation), so JSON whitespace, key order
 * and number spelling on the wire do not matter. One leading byte-order mark
 * is ignored, in text as in bytes (it is not part of the JSON value).
 *
 * @throws PayhookError with code `MISSING_HOST`, `MALFORMED_PATH`,
 * `MALFORMED_QUERY` or `INVALID_BODY`; `INVALID_ARGUMENT` for headers that
 * are an array, a header value that is not text, or a body not yet read.
 *
 * @example
 * ```ts
 * import { buildCanonicalString } from 'payhook';
 *
 * const canonical = buildCanonicalString({
 *   method: 'POST',
 *   path: '/webhooks/payments',
 *   headers: { Host: 'shop.example.kg', 'x-api-timestamp': '1763712000000' },
 *   query: null,
 *   body: '{"status":"SUCCEEDED","amount":100}',
 * });
 * // 'post\n/webhooks/payments\nhost:shop.example.kg&x-api-timestamp:1763712000000\n{"amount":100,"status":"SUCCEEDED"}'
 * ```
 */
export function buildCanonicalString(request: CanonicalRequest): string {
  if (typeof request !== 'object' || request === null) {
    throw misuse('buildCanonicalString needs a request object with method, path and headers.');
  }
  const { method, headers, query } = request;
  if (query !== undefined && query !== null && typeof query !== 'string' && typeof query !== 'object') {
    throw new PayhookError(
      'MALFORMED_QUERY',
      `The query must be a string, a map or a URLSearchParams, not a ${typeof query}.`,
    );
  }
  if (typeof method !== 'string') throw misuse('The request method must be a string.');
  const read = readSigned(request.body, () =>
    canonicalHead({
      method,
      path: request.path,
      host: typeof headers === 'object' && headers !== null ? getHeader(headers, 'host') : undefined,
      headers,
      query:
        query === undefined || query === null
          ? ''
          : typeof query === 'string' || typeof query.forEach === 'function'
            ? (query as string | SearchParamsLike)
            : // A plain record becomes a Map, which lists its entries as a
              // URLSearchParams does. Some frameworks give a repeated name as an
              // array: the last one wins.
              (new Map(
                Object.entries(query).map(([name, value]: [string, unknown]) => [
                  name,
                  Array.isArray(value) && value.every((item) => typeof item === 'string') ? value.at(-1) : value,
                ]),
              ) as SearchParamsLike),
    }),
  );
  if (!read.ok) throw read.error;
  return read.canonical;
}
