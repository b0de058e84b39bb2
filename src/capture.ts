import { PayhookError } from './errors.js';
import { encodeBase64 } from './lib/base64.js';
import { forEachHeader, isHeadersLike } from './lib/headers.js';
import { nodeHost } from './lib/node-host.js';
import { bytesOf, checkMaxBodyBytes, isBytes } from './lib/json-body.js';
import type { HeadersInput, HeadersLike } from './request.js';
import { DEFAULT_MAX_BODY_BYTES } from './verify-webhook.js';

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
 *   webhookUrl: 'https://shop.example.kg/webhooks/payments',
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
  /**
   * The receiver's `webhookUrl` (the URL registered with the service), when
   * the capture was given it: `payhook verify` then builds the canonical
   * string the receiver built, with no `--webhook-url`.
   */
  webhookUrl?: string;
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
      clone(): {
        arrayBuffer(): Promise<ArrayBuffer>;
        readonly body?: {
          getReader(): {
            read(): Promise<{ done: true; value?: undefined } | { done: false; value: Uint8Array }>;
            cancel(): Promise<void>;
          };
        } | null;
      };
    }
  | {
      method?: string | undefined;
      url?: string | undefined;
      /** Express keeps the full request target here when a router rewrote `url`. */
      originalUrl?: string | undefined;
      headers: HeadersInput;
      body?: unknown;
      /**
       * A Node request: the header lines as received, names and values in turn. Several Host lines (Node keeps
       * only the first in `headers`) are recorded as payhook/node reads them, joined, so a capture of a request
       * naming two hosts is refused as the handler refused it.
       */
      readonly rawHeaders?: readonly string[];
      /** A Node request stream: `true` once its body was read to the end. */
      readonly readableEnded?: boolean;
      /** A Node request stream: `true` once the whole message arrived. */
      readonly complete?: boolean;
      /** A Node request stream: bytes received but not read yet. */
      readonly readableLength?: number;
    };

/**
 * Options for {@link captureDelivery}.
 *
 * @example
 * ```ts
 * import type { CaptureOptions } from 'payhook';
 *
 * const options: CaptureOptions = {
 *   webhookUrl: 'https://shop.example.kg/webhooks/payments',
 *   body: '{"id":"6949decc-…_DEBIT"}',
 * };
 * ```
 */
export interface CaptureOptions {
  /**
   * The body, when the request no longer holds it: a Web `Request` whose
   * body was read, or a Node request whose stream was read with nothing
   * left on `req.body`. Text, bytes, or a parsed JSON value.
   */
  body?: unknown;
  /**
   * Your receiver's `webhookUrl`, recorded in the capture so that
   * `payhook verify --request` judges the delivery as the receiver did.
   * `undefined` records nothing.
   */
  webhookUrl?: string | undefined;
  /**
   * The most body bytes read: from a Web `Request`, or from a Node request stream no body parser read.
   * @defaultValue 32 768 ({@link DEFAULT_MAX_BODY_BYTES})
   */
  maxBodyBytes?: number;
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
    const bytes = bytesOf(body);
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

type NodeRequestInput = Exclude<CaptureInput, WebRequestInput>;

/** What to pass for a Node request whose body is gone. */
const PASS_THE_BODY =
  'pass the bytes you read as { body }, call captureDelivery before anything reads the body, ' +
  "or use express.raw({ type: '*/*' }).";

/**
 * The stream of a Node request (`IncomingMessage`) that still holds its body.
 * A `req.body` counts only once the stream was read: body-parser 1.x sets
 * `req.body = {}` for a content type it does not parse, without reading a byte.
 */
function unreadStream(request: NodeRequestInput): AsyncIterable<Uint8Array | string> | undefined {
  const stream = request as NodeRequestInput & Partial<AsyncIterable<Uint8Array | string>>;
  const unread =
    typeof stream[Symbol.asyncIterator] === 'function' &&
    stream.readableEnded === false &&
    !(stream.complete === true && stream.readableLength === 0);
  return unread ? (stream as AsyncIterable<Uint8Array | string>) : undefined;
}

/**
 * Reads the body no parser read, and leaves it on `req.body` as
 * `express.raw()` would: a stream is read once, and the handler that runs
 * after the capture takes the body from there. A client that stalls is cut
 * off by the server's own request timeout, which ends the stream.
 */
async function readStream(
  request: NodeRequestInput,
  stream: AsyncIterable<Uint8Array | string>,
  maxBytes: number,
): Promise<Uint8Array> {
  const body = await readBounded(stream, maxBytes);
  request.body = body;
  return body;
}

/** A Web body stream's chunks; leaving the loop early cancels the stream. */
async function* chunksOf(stream: NonNullable<ReturnType<WebRequestInput['clone']>['body']>): AsyncIterable<Uint8Array> {
  const reader = stream.getReader();
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      yield next.value;
    }
    done = true;
  } finally {
    // Not awaited: a clone's branch of a tee settles its cancel only once the other branch (the request the handler
    // reads next) is cancelled too.
    if (!done) reader.cancel().catch(() => {});
  }
}

/** The bytes of `stream`, read no further than `maxBytes`; `BODY_TOO_LARGE` past it. */
async function readBounded(
  stream: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array>,
  maxBytes: number,
): Promise<Uint8Array> {
  const chunks: Array<Uint8Array | string> = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      size += chunk.length;
      if (size > maxBytes) break;
      chunks.push(chunk);
    }
  } catch (cause) {
    throw misuse('the request body could not be read (did the client go away?).', cause);
  }
  if (size > maxBytes) {
    throw new PayhookError('BODY_TOO_LARGE', `captureDelivery: the body is over maxBodyBytes (${maxBytes}).`);
  }
  return new Uint8Array(await new Blob(chunks as BlobPart[]).arrayBuffer());
}

function maxBodyBytesOf(options: CaptureOptions | undefined): number {
  return checkMaxBodyBytes(options?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, 'captureDelivery');
}

function webhookUrlOf(options: CaptureOptions | undefined): Pick<CapturedDelivery, 'webhookUrl'> {
  const value = options?.webhookUrl;
  if (value === undefined) return {};
  if (typeof value !== 'string' || value === '')
    throw misuse('webhookUrl must be the URL registered with the service.');
  return { webhookUrl: value };
}

/**
 * Turns the delivery a handler saw into the JSON `payhook verify --request`
 * reads, without losing the body: a `Headers` object or a Node `Buffer`
 * survives, where `JSON.stringify(request)` would write `{}` or
 * `{"type":"Buffer",…}` and the diagnosis would then blame a changed body.
 * Pass your receiver's `webhookUrl` and it is recorded too; write the result
 * to a file and run
 * `npx payhook verify --request failed.json --env production --ignore-timestamp`.
 *
 * A Web `Request` is read from a clone, so the request stays usable; pass
 * `{ body }` when its body was already read. A Node request gives its method,
 * `originalUrl` (else `url`), headers and `req.body`; when no body parser
 * read its stream (an Express route without `express.json()`), the body is
 * read from the stream and left on `req.body` as bytes, so a handler from
 * `payhook/node` called after it still receives it.
 *
 * @throws PayhookError `INVALID_ARGUMENT` for a request without
 * headers, a Web `Request` whose body was read, a Node request whose body is
 * gone (its stream read, nothing on `req.body`, no `body` option), or a body
 * that is not text, bytes or a JSON value; `BODY_TOO_LARGE` when the body
 * read (a Web `Request`'s, or a Node request's unread stream) holds more
 * than `maxBodyBytes`; reading stops there.
 *
 * @example
 * ```ts
 * import { captureDelivery } from 'payhook';
 *
 * const request = new Request('https://shop.example.kg/webhooks/payments', { method: 'POST', body: '{}' });
 * const capture = await captureDelivery(request, { webhookUrl: 'https://shop.example.kg/webhooks/payments' });
 * console.log(JSON.stringify(capture)); // save it as failed.json
 * ```
 */
export async function captureDelivery(request: CaptureInput, options?: CaptureOptions): Promise<CapturedDelivery> {
  if (typeof request !== 'object' || request === null) throw misuse('give it the request your handler received.');
  const given = options !== undefined && 'body' in options;
  const recorded = webhookUrlOf(options);
  if (isWebRequest(request)) {
    let body: unknown = options?.body;
    if (!given) {
      if (request.bodyUsed) throw misuse('the Request body was already read; pass it as { body }.');
      const maxBytes = maxBodyBytesOf(options);
      const copy = request.clone();
      // A Web stream is read no further than the limit; a Request-like without one (its body a Node stream, a
      // test double) is read whole, as before, then held to the limit.
      const stream = copy.body;
      body = await readBounded(
        typeof stream?.getReader === 'function' ? chunksOf(stream) : [new Uint8Array(await copy.arrayBuffer())],
        maxBytes,
      );
    }
    return {
      method: request.method,
      url: request.url,
      headers: headerRecord(request.headers),
      ...bodyFields(body),
      ...recorded,
    };
  }
  const url = request.originalUrl ?? request.url;
  if (typeof url !== 'string') throw misuse('the request has no url.');
  const headers = headerRecord(request.headers);
  // As payhook/node reads it: several Host lines, or an HTTP/2 :authority beside the Host, joined.
  if (!isHeadersLike(request.headers)) {
    const host = nodeHost(request.headers, request.rawHeaders);
    if (typeof host === 'string') headers['host'] = host;
  }
  const stream = given ? undefined : unreadStream(request);
  const body = given
    ? options.body
    : stream
      ? await readStream(request, stream, maxBodyBytesOf(options))
      : request.body;
  // The stream was read and nothing kept the body: capturing none would blame a changed body.
  if (body === undefined) throw misuse(`the request has no req.body and no unread body stream; ${PASS_THE_BODY}`);
  return {
    method: typeof request.method === 'string' ? request.method : 'POST',
    url,
    headers,
    ...bodyFields(body),
    ...recorded,
  };
}
