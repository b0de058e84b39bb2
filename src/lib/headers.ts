import { PayhookError } from '../errors.js';
import type { HeadersInput, HeadersLike } from '../request.js';

/**
 * Whether headers are a `Headers`-like object rather than a plain record.
 *
 * @example
 * ```ts
 * import { isHeadersLike } from './headers.js';
 *
 * isHeadersLike(new Headers()); // true
 * isHeadersLike({ host: 'shop.example.kg' }); // false
 * ```
 */
export function isHeadersLike(headers: HeadersInput): headers is HeadersLike {
  return (
    typeof (headers as HeadersLike).get === 'function' &&
    typeof (headers as HeadersLike).forEach === 'function'
  );
}

function scalar(value: unknown, name: string): string {
  if (typeof value === 'string') return value;
  // Hand-built header maps sometimes hold numbers (`'x-api-timestamp': Date.now()`).
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  throw new PayhookError(
    'INVALID_ARGUMENT',
    `The header ${JSON.stringify(name)} must be a string or an array of strings, not ${value === null ? 'null' : typeof value}.`,
  );
}

/** A header value as a string (arrays joined by `", "`), `undefined` when absent. */
function headerValue(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    let joined = '';
    for (let i = 0; i < value.length; i++) joined += (i === 0 ? '' : ', ') + scalar(value[i], name);
    return joined;
  }
  return scalar(value, name);
}

/**
 * Calls `callback` once per header with its lower-cased name and its value
 * (arrays joined by `", "`, as HTTP combines repeated headers). Throws
 * `INVALID_ARGUMENT` for a value that is an object, a function or a symbol.
 *
 * @example
 * ```ts
 * import { forEachHeader } from './headers.js';
 *
 * forEachHeader({ 'X-Api-Key-Id': ['a', 'b'] }, (name, value) => console.log(name, value)); // x-api-key-id a, b
 * ```
 */
export function forEachHeader(
  headers: HeadersInput,
  callback: (lowerName: string, value: string) => void,
): void {
  if (isHeadersLike(headers)) {
    headers.forEach((value: unknown, name: unknown) => {
      // A WHATWG Headers gives strings; a Map or hand-made object may not.
      if (typeof name !== 'string') {
        throw new PayhookError('INVALID_ARGUMENT', `A header name must be a string, not ${name === null ? 'null' : typeof name}.`);
      }
      const text = headerValue(value, name);
      if (text !== undefined) callback(name.toLowerCase(), text);
    });
    return;
  }
  for (const name of Object.keys(headers)) {
    const value = headerValue((headers as Record<string, unknown>)[name], name);
    if (value !== undefined) callback(name.toLowerCase(), value);
  }
}

/**
 * Reads one header case-insensitively; `undefined` when absent.
 *
 * @example
 * ```ts
 * import { getHeader } from './headers.js';
 *
 * getHeader({ HOST: 'shop.example.kg' }, 'host'); // 'shop.example.kg'
 * ```
 */
export function getHeader(headers: HeadersInput, name: string): string | undefined {
  const lower = name.toLowerCase();
  if (isHeadersLike(headers)) {
    const direct = headerValue(headers.get(lower), lower);
    if (direct !== undefined) return direct;
    // A WHATWG Headers is case-insensitive already; a Map-like one may not be.
    let found: string | undefined;
    forEachHeader(headers, (key, value) => {
      if (found === undefined && key === lower) found = value;
    });
    return found;
  }
  const record = headers as Record<string, unknown>;
  if (Object.prototype.hasOwnProperty.call(record, lower)) {
    const direct = headerValue(record[lower], lower);
    if (direct !== undefined) return direct;
  }
  for (const key of Object.keys(record)) {
    if (key.toLowerCase() === lower) {
      const value = headerValue(record[key], key);
      if (value !== undefined) return value;
    }
  }
  return undefined;
}
