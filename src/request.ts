/**
 * The public face of the request shapes payhook accepts, declared in
 * `lib/request-types.ts` so that internals read them without importing the
 * public layer.
 *
 * @module
 */
export type { BodyInput, HeadersInput, HeadersLike, QueryInput, SearchParamsLike } from './lib/request-types.js';
