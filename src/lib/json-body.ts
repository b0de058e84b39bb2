import { PayhookError } from '../errors.js';
import type { BodyInput } from '../request.js';

/**
 * A JSON object as `JSON.parse` produces it.
 *
 * @example
 * ```ts
 * import type { JsonObject } from './json-body.js';
 *
 * const body: JsonObject = { amount: 100 };
 * ```
 */
export type JsonObject = Record<string, unknown>;

let utf8Decoder: TextDecoder | undefined;

/**
 * Decodes UTF-8 bytes strictly; invalid UTF-8 is an `INVALID_BODY`.
 *
 * @example
 * ```ts
 * import { decodeUtf8 } from './json-body.js';
 *
 * decodeUtf8(new Uint8Array([123, 125])); // '{}'
 * ```
 */
export function decodeUtf8(bytes: Uint8Array | ArrayBuffer): string {
  utf8Decoder ??= new TextDecoder('utf-8', { fatal: true });
  try {
    return utf8Decoder.decode(bytes);
  } catch (cause) {
    throw new PayhookError('INVALID_BODY', 'The body is not valid UTF-8.', { cause });
  }
}

/**
 * Whether a body is raw bytes: any typed array, DataView or ArrayBuffer
 * (also from another realm, where instanceof fails), never a parsed object.
 *
 * @example
 * ```ts
 * import { isBytes } from './json-body.js';
 *
 * isBytes(new Uint8Array(1)); // true
 * ```
 */
export function isBytes(value: unknown): value is Uint8Array | ArrayBuffer {
  return ArrayBuffer.isView(value) || Object.prototype.toString.call(value) === '[object ArrayBuffer]';
}

/**
 * Parses a body once into the JSON object it carries, or `null` when there is
 * no body (absent, empty text, or JSON `null`). Throws `INVALID_BODY` for text
 * that is not JSON and for JSON that is not an object.
 *
 * @example
 * ```ts
 * import { parseJsonBody } from './json-body.js';
 *
 * parseJsonBody('{"amount":100}'); // { amount: 100 }
 * parseJsonBody(''); // null
 * ```
 */
export function parseJsonBody(body: BodyInput): JsonObject | null {
  let value: unknown = body;
  if (typeof body === 'string' || isBytes(body)) {
    const text = typeof body === 'string' ? body : decodeUtf8(body);
    if (text === '') return null;
    try {
      value = JSON.parse(text);
    } catch (cause) {
      throw new PayhookError('INVALID_BODY', 'The body is not valid JSON.', { cause });
    }
  }
  // No body at all, or JSON `null`.
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new PayhookError(
      'INVALID_BODY',
      `The body must be a JSON object, but it is ${Array.isArray(value) ? 'an array' : `a ${typeof value}`}.`,
    );
  }
  return value as JsonObject;
}

let collator: Intl.Collator | undefined;

/** A key list as received, and the order the body line writes it in. */
type KeyOrder = readonly [received: readonly string[], written: readonly string[]];

/** Key lists seen lately, with their written order (every delivery of one shape has the same list). */
const orders: KeyOrder[] = [];
/** Distinct key lists remembered; real deliveries have a handful, and the list starts over when full. */
const ORDER_CACHE_SIZE = 64;
/**
 * The longest key list remembered, in characters (all keys together). A
 * delivery's has about 150; the bound keeps what unsigned requests can park
 * in the cache small, whatever bodies they send.
 */
const ORDER_CACHE_LIST_CHARS = 1024;

/**
 * The order in which the body line writes `keys`: en-US collation, then what
 * a fresh object makes of it (integer-like keys first). Collation is the
 * costly part of the body line, so each key list is sorted once.
 */
function writtenOrder(keys: string[]): readonly string[] {
  search: for (const [received, written] of orders) {
    if (received.length !== keys.length) continue;
    for (let i = 0; i < keys.length; i++) if (received[i] !== keys[i]) continue search;
    return written;
  }
  const sorted: JsonObject = Object.create(null) as JsonObject;
  for (const key of [...keys].sort((collator ??= new Intl.Collator('en-US')).compare)) sorted[key] = 0;
  const written = Object.keys(sorted);
  if (keys.join('').length <= ORDER_CACHE_LIST_CHARS) {
    if (orders.length >= ORDER_CACHE_SIZE) orders.length = 0;
    orders.push([keys, written]);
  }
  return written;
}

/**
 * The body line of the canonical string: top-level keys in `en-US` collation
 * order, put into a fresh object (so integer-like keys still come first, as
 * JavaScript orders them) and written with `JSON.stringify`. Nested values
 * keep their order.
 *
 * `__proto__`: the object has no prototype, so a top-level `"__proto__"`
 * member (which `JSON.parse` makes an ordinary own property) stays an
 * ordinary entry and is written out, in its sorted place. Assigning it into
 * `{}` would instead set the prototype and drop the member from the line,
 * so the signature would not cover it and anyone could add one to a signed
 * body. Real deliveries never carry such a member (spec §2), so the only
 * effect is that such a body must be signed with the member included.
 *
 * @example
 * ```ts
 * import { canonicalBody } from './json-body.js';
 *
 * canonicalBody({ b: 1, a: 2, 10: 0 }); // '{"10":0,"a":2,"b":1}'
 * ```
 */
export function canonicalBody(body: JsonObject | null): string {
  if (body === null) return '';
  try {
    const sorted: JsonObject = Object.create(null) as JsonObject;
    for (const key of writtenOrder(Object.keys(body))) sorted[key] = body[key];
    return JSON.stringify(sorted);
  } catch (cause) {
    // Only an already parsed body can get here: a cycle, a BigInt, a throwing
    // toJSON, or nesting deeper than the stack (JSON.parse accepts more depth
    // than JSON.stringify can write back).
    throw new PayhookError('INVALID_BODY', 'The body cannot be written as JSON (a cycle, a BigInt, or too deep).', {
      cause,
    });
  }
}
