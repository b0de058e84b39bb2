import { isPayhookError, PayhookError } from './errors.js';
import { misuse } from './misuse.js';
import type { BodyInput } from './request-types.js';
import { MAX_BODY_DEPTH, textTooDeep, valueTooDeep } from './json-depth.js';

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
 * The bytes of a typed array, `DataView` or `ArrayBuffer` (what
 * {@link isBytes} accepts) as a `Uint8Array` over the same memory.
 *
 * @example
 * ```ts
 * import { bytesOf } from './json-body.js';
 *
 * bytesOf(new Uint16Array([1])).length; // 2
 * bytesOf(new ArrayBuffer(3)).length; // 3
 * ```
 */
export function bytesOf(value: ArrayBufferView | ArrayBuffer): Uint8Array {
  return ArrayBuffer.isView(value)
    ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
    : new Uint8Array(value);
}

/**
 * Throws `INVALID_ARGUMENT` for a body still to be read (a Web `Request` or
 * `Response`, a Web stream, a `Blob`, a Node stream): what was signed is not
 * in it yet, and read as a parsed object it would pass for `{}`.
 *
 * @example
 * ```ts
 * import { checkBodyRead } from './json-body.js';
 *
 * checkBodyRead('{"amount":100}'); // fine
 * checkBodyRead(new Blob(['{}'])); // throws INVALID_ARGUMENT
 * ```
 */
export function checkBodyRead(body: unknown): void {
  if (typeof body !== 'object' || body === null) return;
  const { getReader, stream, pipe, arrayBuffer } = body as Record<string, unknown>;
  if (
    typeof getReader === 'function' ||
    typeof stream === 'function' ||
    typeof pipe === 'function' ||
    typeof arrayBuffer === 'function'
  ) {
    throw misuse(
      'The body must be read first: give its text or bytes (await request.text() for a Web Request, the raw Buffer on Node) or the object a body parser made, not a Request, a stream or a Blob.',
    );
  }
}

/** A raw body's JSON text: bytes decoded strictly, one leading byte-order mark dropped. */
function rawText(body: string | Uint8Array | ArrayBuffer): string {
  // One leading byte-order mark is dropped from text as the UTF-8 decode
  // drops it from bytes (and as `request.text()` and `request.json()` do),
  // so a body gets the same verdict however it was handed over. It is not
  // part of the JSON value, so the signature never covers it either way.
  return typeof body === 'string' ? body.replace(/^\uFEFF/, '') : decodeUtf8(body);
}

const TOO_DEEP = `The body nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep.`;

// The top-level names are sorted with the en-US collator for the canonical
// string, the costliest step per byte, and a genuine signature made for another
// delivery (every merchant of the service holds some) does not stop it: 32 KiB
// of two-letter names took 6.4 ms of event loop, 1,000 names of combining marks
// out of canonical order 9-10 ms. Its cost grows with the number of names and
// with their length; real deliveries have about a dozen, 150 characters in all.
export const MAX_BODY_MEMBERS = 1_000;
export const MAX_BODY_NAMES_LENGTH = 4_096;

const TOO_WIDE = `The body has more than ${MAX_BODY_MEMBERS} top-level members, or their names add up to more than ${MAX_BODY_NAMES_LENGTH} characters.`;

function tooWide(value: JsonObject): boolean {
  const names = Object.keys(value);
  if (names.length > MAX_BODY_MEMBERS) return true;
  let length = 0;
  for (const name of names) length += name.length;
  return length > MAX_BODY_NAMES_LENGTH;
}

const JSON_NULL = /^[ \t\n\r]*null[ \t\n\r]*$/;

function parseText(text: string): unknown {
  // Only an object can be a body (and `null`, none): anything else is refused
  // without being parsed, whatever else it is.
  const first = /[^ \t\n\r]/.exec(text)?.[0];
  if (first !== '{') {
    if (JSON_NULL.test(text)) return null;
    throw new PayhookError(
      'INVALID_BODY',
      `The body must be a JSON object, but it starts with ${JSON.stringify(first ?? '')}.`,
    );
  }
  if (textTooDeep(text)) throw new PayhookError('INVALID_BODY', TOO_DEEP);
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new PayhookError('INVALID_BODY', 'The body is not valid JSON.', { cause });
  }
}

/**
 * `value` as a body: an object, or `null` for none (`undefined` or JSON
 * `null`); else `INVALID_BODY`. A `Map`, a `Set`, a `String` object and the
 * like are not JSON objects: read as one, each would pass for `{}` or a list
 * of its characters.
 */
function objectOrNone(value: unknown): JsonObject | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    const kind = Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    throw new PayhookError('INVALID_BODY', `The body must be a JSON object, but it is ${kind}.`);
  }
  const tag = Object.prototype.toString.call(value);
  if (tag !== '[object Object]') {
    throw new PayhookError('INVALID_BODY', `The body must be a JSON object, but it is a ${tag.slice(8, -1)}.`);
  }
  return value as JsonObject;
}

/**
 * Parses a body once into the JSON object it carries, or `null` when there is
 * no body (absent, empty text, or JSON `null`). Throws `INVALID_BODY` for text
 * that is not JSON, for JSON that is not an object, for a body nested
 * deeper than {@link MAX_BODY_DEPTH} levels, which is refused before it is
 * parsed (an already parsed value is measured instead), and for one with more
 * than {@link MAX_BODY_MEMBERS} top-level members or whose top-level names add
 * up to more than {@link MAX_BODY_NAMES_LENGTH} characters. A leading byte-order
 * mark is ignored, in text as in bytes.
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
  try {
    let value: JsonObject | null;
    if (typeof body !== 'string' && !isBytes(body)) {
      checkBodyRead(body);
      value = objectOrNone(body);
      if (valueTooDeep(value)) throw new PayhookError('INVALID_BODY', TOO_DEEP);
    } else {
      const text = rawText(body);
      value = text === '' ? null : objectOrNone(parseText(text));
    }
    if (value !== null && tooWide(value)) throw new PayhookError('INVALID_BODY', TOO_WIDE);
    return value;
  } catch (cause) {
    // A value built in code (a Proxy, say) may throw where one parsed here cannot.
    if (isPayhookError(cause)) throw cause;
    throw new PayhookError('INVALID_BODY', 'The body cannot be read as a JSON object.', { cause });
  }
}

/**
 * The size of a raw body in UTF-8 bytes, counted only as far as it
 * takes to compare it with `limit`; 0 for a parsed value, which is not
 * measured.
 *
 * @example
 * ```ts
 * import { bodySize } from './json-body.js';
 *
 * bodySize('{"a":"é"}', 100); // 9
 * ```
 */
export function bodySize(body: BodyInput, limit: number): number {
  if (typeof body !== 'string') return isBytes(body) ? body.byteLength : 0;
  // Every UTF-16 unit is 1 to 3 UTF-8 bytes: a short text needs no count,
  // and one with more units than the limit has more bytes too.
  const bytes = body.length;
  if (bytes * 3 <= limit || bytes > limit) return bytes;
  // In between, the runtime counts: a Blob holds the text as UTF-8 (a lone
  // surrogate as U+FFFD, 3 bytes), natively.
  return new Blob([body]).size;
}

/**
 * Checks a `maxBodyBytes` option: a whole number of bytes, at least 1 (a
 * body limit is never lifted: not `Infinity`, not a fraction). `who` names
 * the caller in the message.
 *
 * @example
 * ```ts
 * import { checkMaxBodyBytes } from './json-body.js';
 *
 * checkMaxBodyBytes(32_768, 'verifyWebhook'); // 32768
 * checkMaxBodyBytes(Infinity, 'verifyWebhook'); // throws INVALID_ARGUMENT
 * ```
 */
export function checkMaxBodyBytes(value: unknown, who: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw misuse(`${who}: maxBodyBytes must be a whole number of bytes, at least 1.`);
  }
  return value;
}

let collator: Intl.Collator | undefined;

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
 * body. Real deliveries never carry such a member, so the only
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
    for (const key of Object.keys(body).sort((collator ??= new Intl.Collator('en-US')).compare))
      sorted[key] = body[key];
    return JSON.stringify(sorted);
  } catch (cause) {
    // Only an already parsed body can get here (a BigInt, a throwing toJSON):
    // depth and cycles were refused when it was read.
    throw new PayhookError('INVALID_BODY', 'The body cannot be written as JSON (a BigInt, or a throwing toJSON).', {
      cause,
    });
  }
}

/**
 * The path of the first number in `value` that is not finite (`fields.x`, `items.0`), or `undefined`. JSON text
 * reads a number beyond range (`1e400`) as ±Infinity, which the canonical string writes as `null`: a body holding
 * one verifies like the body the service signed with `null` there.
 *
 * @example
 * ```ts
 * import { nonFinitePath } from './json-body.js';
 *
 * nonFinitePath(JSON.parse('{"data":{"tip":1e400}}')); // 'data.tip'
 * ```
 */
export function nonFinitePath(value: unknown, path = ''): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : path;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, member] of Object.entries(value)) {
    const found = nonFinitePath(member, path === '' ? key : `${path}.${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}
