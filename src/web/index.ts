/**
 * Entry `payhook/web`: the receiving handler for the Web standard
 * `Request` → `Response` (Hono, Next.js route handlers, Remix, SvelteKit,
 * Astro, Deno, Bun, Cloudflare Workers, Vercel functions).
 *
 * @module
 */
import type { Answer } from '../handler/answer.js';
import { readChunks, type BodyLimits, type BodyOutcome, type ChunkSource } from '../handler/body.js';
import { createDeliveryFlow } from '../handler/flow.js';
import type { WebhookHandlerOptions } from '../handler/options.js';

export type * from '../handler/public-types.js';

/**
 * What a platform may pass beside the request: `waitUntil` keeps the
 * function alive for bookkeeping after the answer (Cloudflare Workers'
 * `ctx`, Vercel's and Netlify's context). payhook only uses it to settle a
 * claim whose handler missed its deadline, to release a claim that lands
 * after its 503, to let a store's completion or release that missed
 * `storeTimeoutMs` land (waiting one `leaseMs` at most), and to let your
 * async hooks and logger finish (`onError`, `onSignatureMismatch`, …: a
 * platform cancels what was not handed to it once the answer is sent) —
 * never to run your handler after answering 200. A hook that never settles
 * holds it until the platform's own limit: give your hooks' I/O a timeout.
 *
 * @example
 * ```ts
 * import type { WebhookHandlerContext } from 'payhook/web';
 *
 * const context: WebhookHandlerContext = { waitUntil: (promise) => void promise };
 * ```
 */
export interface WebhookHandlerContext {
  waitUntil?(promise: Promise<unknown>): void;
}

/**
 * A handler from {@link createWebhookHandler}.
 *
 * @example
 * ```ts
 * import type { WebhookHandler } from 'payhook/web';
 *
 * declare const handler: WebhookHandler;
 * const response = await handler(new Request('https://shop.example.kg/hook', { method: 'POST' }));
 * ```
 */
export type WebhookHandler = (request: Request, context?: WebhookHandlerContext) => Promise<Response>;

/** The request body stream as the shared reader sees it; cancelled when the reader stops early. */
function streamSource(stream: ReadableStream<Uint8Array>): ChunkSource {
  return {
    start(sink) {
      const reader = stream.getReader(); // throws when the body was read before the handler
      let stopped = false;
      void (async () => {
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (stopped) return;
            if (done) return sink.end();
            sink.chunk(value);
          }
        } catch (error) {
          // The stream was readable and broke mid-body: the client went away.
          if (!stopped) sink.fail(error, true);
        }
      })();
      return () => {
        if (stopped) return;
        stopped = true;
        reader.cancel().catch(() => {});
      };
    },
  };
}

/**
 * The whole body at once, for a request that declares a length within the
 * limit. The platform's HTTP server reads exactly the declared bytes, and
 * reading them in one call skips the per-chunk stream machinery that some
 * adapters (`@hono/node-server`) build only for `request.body`.
 * `readChunks` still checks the size it gets and keeps the deadline; a read
 * past it cannot be cancelled (`arrayBuffer()` holds the stream's lock), so
 * it is left to the platform: at most the declared bytes, within the limit.
 */
function wholeSource(request: Request): ChunkSource {
  return {
    start(sink) {
      if (request.bodyUsed) throw new TypeError('Body already used');
      request.arrayBuffer().then(
        (buffer) => {
          sink.chunk(new Uint8Array(buffer));
          sink.end();
        },
        // Used by then: the client went away mid-body; unused: something else locked the body first.
        (error: unknown) => sink.fail(error, request.bodyUsed),
      );
      return () => {};
    },
  };
}

const EMPTY: BodyOutcome = { kind: 'body', body: new Uint8Array(0) };

/**
 * `request.signal`, except on Deno for a `Request` of the platform's class
 * (what Deno.serve makes): Deno prints a deprecation warning the first time
 * its `signal` is read, and its body stream errors when the client goes away.
 * Every other runtime's own Request is read too: Node bridges (React
 * Router's, @mjackson/node-fetch-server) build a platform `Request` whose
 * signal aborts when the client goes away and whose body stream then never
 * ends. Such a bridge run on Deno loses this check (a client gone before a
 * chunked read is a 408 after bodyTimeoutMs): telling its Requests from
 * Deno.serve's would take probing Deno's internals.
 */
function signalOf(request: Request): AbortSignal | undefined {
  const denoServe = 'Deno' in globalThis && Object.getPrototypeOf(request) === Request.prototype;
  return denoServe ? undefined : (request as { signal?: AbortSignal }).signal;
}

/** Reads the body within `limits` the cheapest way the request allows. */
function readBody(request: Request, limits: BodyLimits): Promise<BodyOutcome> {
  // A body already read goes the whole way too, which names it: some frameworks (h3 v2) then show no body at all.
  if (limits.declaredBytes !== undefined || request.bodyUsed) return readChunks(wholeSource(request), limits);
  // Some adapters end the stream of a client already gone as if the body were
  // whole (@hono/node-server), or never (React Router's). Looked at before the
  // read only: some bridges abort the signal once the whole body has been read.
  const signal = signalOf(request);
  if (signal?.aborted === true) return Promise.resolve({ kind: 'aborted', cause: signal.reason as unknown });
  const stream = request.body; // read only here: some adapters build this stream on first access
  return stream === null ? Promise.resolve(EMPTY) : readChunks(streamSource(stream), limits);
}

function toResponse(answer: Answer): Response {
  return new Response(JSON.stringify(answer.body), { status: answer.status, headers: answer.headers });
}

/**
 * Creates the receiving handler for Web standard `Request`s: it reads the
 * raw body (stopping past `maxBodyBytes` or `bodyTimeoutMs`), verifies the delivery, claims it
 * in the deduplication store, awaits your `onPayment`, records it, and
 * answers:
 *
 * | status | `code` | when |
 * |---|---|---|
 * | 200 | — | handled now (`{ ok: true }`), a known duplicate (`{ ok: true, duplicate: true }`), a delivery `onPayment` parked with `park(reason)` (`{ ok: true, parked: true }`), or a signed payload it does not understand, accepted by your `deadLetter` |
 * | 400 | `INVALID_BODY`, `INVALID_PAYLOAD`, `MISSING_HOST`, `MALFORMED_PATH`, `MALFORMED_QUERY` | not a webhook |
 * | 401 | `MISSING_SIGNATURE`, `SIGNATURE_MISMATCH`, `MISSING_TIMESTAMP`, `MALFORMED_TIMESTAMP`, `TIMESTAMP_OUT_OF_WINDOW`, `URL_MISMATCH` | signature or timestamp failure, or not sent to a registered `webhookUrl` |
 * | 405 | `METHOD_NOT_ALLOWED` | not a `POST` |
 * | 408 | `BODY_TIMEOUT` | the body did not arrive within `bodyTimeoutMs` (a body read from `request.body` is cancelled; one of declared length, read in one `arrayBuffer()` call, is abandoned to the platform, and the answer asks it to close the connection) |
 * | 409 | `DELIVERY_IN_PROGRESS` | another worker is handling the same delivery |
 * | 413 | `BODY_TOO_LARGE` | body larger than `maxBodyBytes` (the rest is read and dropped, up to 8 MiB, so the sender receives the answer) |
 * | 500 | `HANDLER_FAILED` | `onPayment` (or `deadLetter`) threw (claim released: the retry is processed) or missed `handlerTimeoutMs` (the claim is settled when it finishes; a retry meanwhile gets 409) |
 * | 500 | `INVALID_KEY`, `WEAK_KEY`, `INVALID_ARGUMENT` | the handler is misconfigured: an unusable key or clock, a `now` or `webhookUrl` function that throws (a `PayhookError` of another code too: answered `INVALID_ARGUMENT`), a body read before the handler, a store that is not set up (a PostgreSQL table never migrated, a Durable Object binding to another class) or whose claim resolves no claim result |
 * | 503 | `STORE_UNAVAILABLE` | the store is unreachable (or, the memory store, full of live deliveries) when claiming — never 200 without a claim; if only recording the success fails, the answer is 200 and `onError` reports it. Also when `onPayment` throws a `STORE_UNAVAILABLE` error (the PostgreSQL inbox's database is down; the claim is released) |
 *
 * Every refusal is JSON `{ ok: false, code, message }`; a 5xx message is generic unless `exposeErrors` is set. Give it the request before
 * anything reads its body (in Hono, `c.req.raw`). Pass the platform's
 * context as the second argument where it has `waitUntil`.
 *
 * @throws PayhookError `INVALID_ARGUMENT` at creation for missing
 * keys, a missing `onPayment`, neither `webhookUrl` nor `allowAnyHost: true`,
 * or out-of-range durations.
 *
 * @example
 * ```ts
 * // app/webhooks/payments/route.ts (Next.js app router)
 * import { createWebhookHandler } from 'payhook/web';
 *
 * declare const db: { outbox: { insert(row: object): Promise<void> } };
 * const webhook = createWebhookHandler({
 *   environment: 'production',
 *   webhookUrl: 'https://shop.example.kg/webhooks/payments',
 *   onPayment: async (webhook) => {
 *     await db.outbox.insert({ id: webhook.id, status: webhook.status, body: webhook.raw });
 *   },
 * });
 *
 * export function POST(request: Request): Promise<Response> {
 *   return webhook(request);
 * }
 * ```
 */
export function createWebhookHandler(options: WebhookHandlerOptions): WebhookHandler {
  const deliver = createDeliveryFlow(options, 'createWebhookHandler');
  return async function handleWebhook(request: Request, context?: WebhookHandlerContext): Promise<Response> {
    const answer = await deliver({
      method: request.method,
      url: request.url,
      headers: request.headers,
      body: { read: (limits) => readBody(request, limits) },
    });
    if (answer.after !== undefined && typeof context?.waitUntil === 'function') {
      try {
        context.waitUntil(answer.after);
      } catch {
        // Some platforms throw outside a request scope; the promise still runs.
      }
    }
    return toResponse(answer);
  };
}
