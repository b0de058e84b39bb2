import type { HeadersInput, HeadersLike } from './request-types.js';
import { ownValue } from './object.js';
import { misuse } from './misuse.js';

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
  return typeof (headers as HeadersLike).get === 'function' && typeof (headers as HeadersLike).forEach === 'function';
}

function isWhatwgHeaders(headers: HeadersInput): boolean {
  return typeof Headers === 'function' && headers instanceof Headers;
}

/** A header value as a string (arrays joined by `", "`), `undefined` when absent. */
function headerValue(value: unknown, name: string): string | undefined {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return undefined;
  const parts = [value].flat();
  // Hand-built header maps sometimes hold numbers (`'x-api-timestamp': Date.now()`).
  if (!parts.every((item) => ['string', 'number', 'boolean', 'bigint'].includes(typeof item))) {
    throw misuse(`The header ${JSON.stringify(name)} is not a string or an array of strings.`);
  }
  return (parts as Array<string | number | boolean | bigint>).join(', ');
}

/** Every header as given: its name as written, its raw value. */
function eachRaw(headers: HeadersInput, callback: (name: string, value: unknown) => void): void {
  // `[...new Headers(…)]` would be read by its indexes ("0", "1"…): every header missing.
  if (Array.isArray(headers)) throw misuse('headers must be a Headers or a record, not an array.');
  if (isHeadersLike(headers)) {
    headers.forEach((value: unknown, name: unknown) => {
      // A WHATWG Headers gives strings; a Map or hand-made object may not.
      if (typeof name !== 'string') {
        throw misuse('A header name is not a string.');
      }
      callback(name, value);
    });
  } else for (const name of Object.keys(headers)) callback(name, (headers as Record<string, unknown>)[name]);
}

/**
 * Calls `callback` for every header that has a value, with its lower-cased
 * name and its value as a string.
 *
 * @example
 * ```ts
 * import { forEachHeader } from './headers.js';
 *
 * forEachHeader({ Host: 'h', 'X-Api-A': '1' }, (name, value) => console.log(name, value)); // host h, x-api-a 1
 * ```
 */
export function forEachHeader(headers: HeadersInput, callback: (lowerName: string, value: string) => void): void {
  eachRaw(headers, (name, raw) => {
    const value = headerValue(raw, name);
    if (value !== undefined) callback(name.toLowerCase(), value);
  });
}

/**
 * One header's value, looked up case-insensitively; `undefined` when absent.
 *
 * @example
 * ```ts
 * import { getHeader } from './headers.js';
 *
 * getHeader({ Signature: 'c2ln' }, 'signature'); // 'c2ln'
 * ```
 */
export function getHeader(headers: HeadersInput, name: string): string | undefined {
  const lower = name.toLowerCase();
  // The lower-cased name first (what Node and WHATWG Headers hold), then a
  // scan, except in a WHATWG Headers, whose get() already ignores case.
  let found = headerValue(isHeadersLike(headers) ? headers.get(lower) : ownValue(headers, lower), lower);
  if (found === undefined && !isWhatwgHeaders(headers)) {
    eachRaw(headers, (key, raw) => {
      if (found === undefined && key.toLowerCase() === lower) found = headerValue(raw, key);
    });
  }
  return found;
}

/**
 * The first item of a comma-separated header value (`X-Forwarded-Host: a, b`
 * names the client-facing host first), trimmed; `undefined` when it is blank
 * or the header is absent.
 *
 * @example
 * ```ts
 * import { firstListItem } from './headers.js';
 *
 * firstListItem(' shop.example.kg , cdn'); // 'shop.example.kg'
 * firstListItem(' , cdn'); // undefined
 * ```
 */
export function firstListItem(value: string | undefined): string | undefined {
  return value?.split(',')[0]!.trim() || undefined;
}
