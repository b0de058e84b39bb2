import type { HeadersInput, HeadersLike } from '../request.js';

/** Whether headers are a `Headers`-like object rather than a plain record. */
export function isHeadersLike(headers: HeadersInput): headers is HeadersLike {
  return (
    typeof (headers as HeadersLike).get === 'function' &&
    typeof (headers as HeadersLike).forEach === 'function'
  );
}

function headerValue(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(String).join(', ');
  return String(value);
}

/**
 * Calls `callback` once per header with its lower-cased name and its value
 * (arrays joined by `", "`, as HTTP combines repeated headers).
 */
export function forEachHeader(
  headers: HeadersInput,
  callback: (lowerName: string, value: string) => void,
): void {
  if (isHeadersLike(headers)) {
    headers.forEach((value, name) => callback(name.toLowerCase(), value));
    return;
  }
  for (const name of Object.keys(headers)) {
    const value = headerValue((headers as Record<string, unknown>)[name]);
    if (value !== undefined) callback(name.toLowerCase(), value);
  }
}

/** Reads one header case-insensitively; `undefined` when absent. */
export function getHeader(headers: HeadersInput, name: string): string | undefined {
  const lower = name.toLowerCase();
  if (isHeadersLike(headers)) return headers.get(lower) ?? undefined;
  const record = headers as Record<string, unknown>;
  const direct = headerValue(record[lower]);
  if (direct !== undefined) return direct;
  for (const key of Object.keys(record)) {
    if (key.toLowerCase() === lower) {
      const value = headerValue(record[key]);
      if (value !== undefined) return value;
    }
  }
  return undefined;
}
