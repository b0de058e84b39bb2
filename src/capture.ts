import { PayhookError } from './errors.js';
import { encodeBase64 } from './lib/base64.js';
import { forEachHeader } from './lib/headers.js';
import { isBytes } from './lib/json-body.js';
import type { HeadersInput, HeadersLike } from './request.js';

/**
 * A delivery as a handler saw it, in the JSON form `payhook verify --request`
 * reads: write it with `JSON.stringify` and nothing is lost.
 *
 * @example
 * ```ts
 * import type { CapturedDelivery } from 'payhook';
 *
 * const capture: CapturedDelivery = {
 *   method: 'POST',
 *   url: '/webhooks/payments',
 *   headers: { host: 'app.internal:8080', signature: 'PxnrLUBc…', 'x-api-timestamp': '1763712335313' },
 *   body: '{"id":"6949decc-…_DEBIT","status":"SUCCEEDED"}',
 * };
 * ```
 */
export interface CapturedDelivery {
  /** The HTTP method as received. */
  method: string;
  /** The URL as the handler saw it: absolute for a Web `Request`, path and query for a Node request. */
  url: string;
  /** Every header, its name lower-cased, repeated values joined by `", "` as payhook reads them. */
  headers: Record<string, string>;
  /** The body as text (a parsed body written back with `JSON.stringify`, which builds the same canonical string). */
  body: string;
  /**
   * The exact body bytes, only when they are not valid UTF-8: `body` then
   * holds them decoded with replacement characters, and the delivery was
   * refused as `INVALID_BODY` whatever its signature.
   */
  bodyBase64?: string;
}

/**
 * The request shapes {@link captureDelivery} reads: a Web `Request`, or a
 * Node, Express or Fastify request (`req.body` may be a `Buffer`, a string,
 * a `Uint8Array` or the object `express.json()` parsed).
 *
 * @example
 * ```ts
 * import type { CaptureInput } from 'payhook';
 *
 * const fromNode: CaptureInput = { method: 'POST', url: '/webhooks/payments', headers: { host: 'shop.example.kg' }, body: '{}' };
 * ```
 */
export type CaptureInput =
  | {
      // A Web `Request`, described by the part used so the main entry needs no DOM types.
      readonly method: string;
      readonly url: string;
      readonly headers: HeadersLike;
      readonly bodyUsed: boolean;
      clone(): { arrayBuffer(): Promise<ArrayBuffer> };
    }
  | {
      method?: string | undefined;
      url?: string | undefined;
      /** Express keeps the full request target here when a router rewrote `url`. */
      originalUrl?: string | undefined;
      headers: HeadersInput;
      body?: unknown;
    };

/**
 * Options for {@link captureDelivery}.
 *
 * @example
 * ```ts
 * import type { CaptureOptions } from 'payhook';
 *
 * const options: CaptureOptions = { body: '{"id":"6949decc-…_DEBIT"}' };
 * ```
 */
export interface CaptureOptions {
  /**
   * The body, when the request no longer holds it: a Web `Request` whose
   * body was read, or a Node request no parser left `req.body` on. Text,
   * bytes, or a parsed JSON value.
   */
  body?: unknown;
}

type WebRequestInput = Extract<CaptureInput, { bodyUsed: boolean }>;

function isWebRequest(request: CaptureInput): request is WebRequestInput {
  return typeof (request as Partial<WebRequestInput>).clone === 'function' && typeof request.url === 'string';
}

function misuse(message: string, cause?: unknown): PayhookError {
  return new PayhookError('INVALID_ARGUMENT', `captureDelivery: ${message}`, cause === undefined ? {} : { cause });
}

let lossless: TextDecoder | undefined;
let lossy: TextDecoder | undefined;

/** The body as `payhook verify` reads it: text, plus the bytes when no text holds them exactly. */
function bodyFields(body: unknown): Pick<CapturedDelivery, 'body' | 'bodyBase64'> {
  if (body === undefined || body === null) return { body: '' };
  if (typeof body === 'string') return { body };
  if (isBytes(body)) {
    const bytes = ArrayBuffer.isView(body)
      ? new Uint8Array(body.buffer, body.byteOffset, body.byteLength)
      : new Uint8Array(body);
    lossless ??= new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    try {
      return { body: lossless.decode(bytes) };
    } catch {
      lossy ??= new TextDecoder('utf-8', { ignoreBOM: true });
      return { body: lossy.decode(bytes), bodyBase64: encodeBase64(bytes) };
    }
  }
  // A body a framework parsed (express.json(), Fastify): the canonical string
  // is built from the parsed value, so its JSON text verifies the same way.
  // JSON.stringify of a Buffer would give {"type":"Buffer",…}: bytes are handled above.
  let text: string | undefined;
  try {
    text = JSON.stringify(body);
  } catch (cause) {
    throw misuse('the body is neither text, bytes nor a JSON value.', cause);
  }
  if (typeof text !== 'string') throw misuse('the body is neither text, bytes nor a JSON value.');
  return { body: text };
}

function headerRecord(headers: HeadersInput): Record<string, string> {
  if (typeof headers !== 'object' || headers === null) throw misuse('the request has no headers.');
  const out: Record<string, string> = {};
  forEachHeader(headers, (name, value) => {
    out[name] = value;
  });
  return out;
}

/**
 * Turns the delivery a handler saw into the JSON `payhook verify --request`
 * reads, without losing the body: a `Headers` object or a Node `Buffer`
 * survives, where `JSON.stringify(request)` would write `{}` or
 * `{"type":"Buffer",…}` and the diagnosis would then blame a changed body.
 * Write the result to a file and run
 * `npx payhook verify --request failed.json --env production --ignore-timestamp`.
 *
 * A Web `Request` is read from a clone, so the request stays usable; pass
 * `{ body }` when its body was already read. A Node request gives its method,
 * `originalUrl` (else `url`), headers and `req.body` (or the `body` option
 * when no body parser left one).
 *
 * @throws {@link PayhookError} `INVALID_ARGUMENT` for a request without
 * headers, a Web `Request` whose body was read or a Node request without
 * `req.body` (and no `body` option), or a body that is not text, bytes or a
 * JSON value.
 *
 * @example
 * ```ts
 * import { captureDelivery } from 'payhook';
 *
 * const request = new Request('https://shop.example.kg/webhooks/payments', { method: 'POST', body: '{}' });
 * const capture = await captureDelivery(request);
 * console.log(JSON.stringify(capture)); // save it as failed.json
 * ```
 */
export async function captureDelivery(request: CaptureInput, options?: CaptureOptions): Promise<CapturedDelivery> {
  if (typeof request !== 'object' || request === null) throw misuse('give it the request your handler received.');
  const given = options !== undefined && 'body' in options;
  if (isWebRequest(request)) {
    let body: unknown = options?.body;
    if (!given) {
      if (request.bodyUsed) throw misuse('the Request body was already read; pass it as { body }.');
      body = await request.clone().arrayBuffer();
    }
    return { method: request.method, url: request.url, headers: headerRecord(request.headers), ...bodyFields(body) };
  }
  const url = request.originalUrl ?? request.url;
  if (typeof url !== 'string') throw misuse('the request has no url.');
  const body = given ? options.body : request.body;
  // No body parser ran and the handler read the stream itself: the body is
  // not on the request any more, and capturing none would blame a changed body.
  if (body === undefined) throw misuse('the request has no req.body; pass the body your handler read as { body }.');
  return {
    method: typeof request.method === 'string' ? request.method : 'POST',
    url,
    headers: headerRecord(request.headers),
    ...bodyFields(body),
  };
}
