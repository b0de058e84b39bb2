/**
 * The request shapes payhook accepts. They are structural, so a WHATWG
 * `Headers`, Node's `IncomingHttpHeaders`, a `URLSearchParams` or an object
 * your framework built all fit without adapters, and no DOM or `@types/node`
 * type appears in payhook's public types.
 *
 * @module
 */

/**
 * Anything that behaves like a WHATWG `Headers` object (`get` and `forEach`).
 * The global `Headers` of Node ≥ 18, Deno, Bun, workerd and browsers fits.
 *
 * @example
 * ```ts
 * import type { HeadersLike } from 'payhook';
 *
 * const headers: HeadersLike = new Headers({ host: 'shop.example.kg' });
 * ```
 */
export interface HeadersLike {
  get(name: string): string | null;
  forEach(callback: (value: string, name: string) => void): void;
}

/**
 * Request headers: a {@link HeadersLike} or a plain object whose keys are header
 * names in any letter case (Node's `req.headers` style, values may be arrays).
 *
 * @example
 * ```ts
 * import type { HeadersInput } from 'payhook';
 *
 * const headers: HeadersInput = { Host: 'shop.example.kg', 'x-api-timestamp': '1763712000000' };
 * ```
 */
export type HeadersInput = HeadersLike | Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * Anything that iterates query parameters like a `URLSearchParams`.
 *
 * @example
 * ```ts
 * import type { SearchParamsLike } from 'payhook';
 *
 * const query: SearchParamsLike = new URLSearchParams('shop=7');
 * ```
 */
export interface SearchParamsLike {
  forEach(callback: (value: string, name: string) => void): void;
}

/**
 * The query of a request: a map of already split names and values (a `null`
 * or `undefined` value is a parameter without value, as API gateways give
 * it), a {@link SearchParamsLike}, or the raw query string (with or without
 * its leading `?`), which is split as `URLSearchParams` splits it. With
 * repeated names, the last one wins.
 *
 * @example
 * ```ts
 * import type { QueryInput } from 'payhook';
 *
 * const asMap: QueryInput = { shop: '7', test: null };
 * const asText: QueryInput = '?shop=7&test';
 * ```
 */
export type QueryInput =
  Readonly<Record<string, string | null | undefined>> | SearchParamsLike | string | null | undefined;

/**
 * A request body: the raw JSON text or bytes as received, or the value a body
 * parser (`express.json()`, `await request.json()`) already produced. All three
 * give the same canonical string, because it is built from the parsed value.
 *
 * @example
 * ```ts
 * import type { BodyInput } from 'payhook';
 *
 * const raw: BodyInput = '{"amount":100}';
 * const parsed: BodyInput = { amount: 100 };
 * ```
 */
export type BodyInput = string | Uint8Array | ArrayBuffer | object | null | undefined;
