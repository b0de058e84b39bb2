/**
 * Entry `payhook/node`: the receiving handler for Node's
 * `IncomingMessage`/`ServerResponse` — a `node:http` listener, an Express
 * route handler, or a Fastify route handler. Its types are structural
 * slices, so using it needs no `@types/node`.
 *
 * @module
 */
import type { Answer } from '../handler/answer.js';
import { readChunks, type BodyLimits, type BodyOutcome, type ChunkSource } from '../handler/body.js';
import { createDeliveryFlow } from '../handler/flow.js';
import { nodeCryptoScheme } from './node-crypto-scheme.js';
import type { WebhookHandlerOptions } from '../handler/options.js';
import { nodeHost } from '../lib/node-host.js';
import type { BodyInput } from '../request.js';

export type * from '../handler/public-types.js';

/**
 * The slice of Node's `IncomingMessage` the handler uses (Express's `req`
 * fits too). `body` is what a body parser left, if any: a `Buffer`
 * (`express.raw()`), a string (`express.text()`) or a parsed object
 * (`express.json()`) — all verify, as the canonical string is built from
 * the parsed value.
 *
 * @example
 * ```ts
 * import type { NodeRequestLike } from 'payhook/node';
 *
 * const describe = (req: NodeRequestLike) => `${req.method} ${req.url}`;
 * ```
 */
export interface NodeRequestLike {
  method?: string | undefined;
  url?: string | undefined;
  /** Express keeps the full request target here when a router rewrote `url`. */
  originalUrl?: string | undefined;
  headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** The header lines as received, names and values in turn (Node keeps only the first of several Host lines in `headers`). */
  readonly rawHeaders?: readonly string[];
  body?: unknown;
  /** `true` once the body stream was read to its end (by a body parser, say). */
  readonly readableEnded?: boolean;
  /** `true` once anything read from the body stream (a middleware listening for `data`, say). */
  readonly readableDidRead?: boolean;
  /** `true` once the whole message arrived from the client. */
  readonly complete?: boolean;
  /** Bytes received but not read yet. */
  readonly readableLength?: number;
  /** `true` once the stream was destroyed: the client went away before the handler read a byte, say. */
  readonly destroyed?: boolean;
  on(event: string, listener: (...args: any[]) => void): unknown;
  removeListener(event: string, listener: (...args: any[]) => void): unknown;
  /** Lets a stream an earlier middleware paused (`req.pause()`) flow again. */
  resume?(): unknown;
}

/**
 * The slice of Node's `ServerResponse` the handler uses (Express's `res`
 * fits too).
 *
 * @example
 * ```ts
 * import type { NodeResponseLike } from 'payhook/node';
 *
 * const answered = (res: NodeResponseLike) => res.headersSent === true;
 * ```
 */
export interface NodeResponseLike {
  statusCode: number;
  readonly headersSent?: boolean;
  /** `true` once the response was ended. */
  readonly writableEnded?: boolean;
  setHeader(name: string, value: string): unknown;
  end(chunk: string, callback?: () => void): unknown;
}

/**
 * The slice of a Fastify request the handler uses: Fastify's parsed `body`,
 * the raw `IncomingMessage`, and whether the route has a body schema (named
 * when a delivery's signature does not verify).
 *
 * @example
 * ```ts
 * import type { FastifyRequestLike } from 'payhook/node';
 *
 * const rawUrl = (request: FastifyRequestLike) => request.raw.url;
 * ```
 */
export interface FastifyRequestLike {
  raw: NodeRequestLike;
  body?: unknown;
  readonly routeOptions?: { readonly schema?: { readonly body?: unknown } };
}

/**
 * The slice of a Fastify reply the handler uses: it calls `hijack()` and
 * answers on the raw `ServerResponse`, so Fastify sends nothing itself.
 *
 * @example
 * ```ts
 * import type { FastifyReplyLike } from 'payhook/node';
 *
 * const take = (reply: FastifyReplyLike) => { reply.hijack(); return reply.raw; };
 * ```
 */
export interface FastifyReplyLike {
  raw: NodeResponseLike;
  hijack(): unknown;
}

/**
 * A handler from {@link createNodeWebhookHandler}: `(req, res)` for
 * `node:http` and Express, `(request, reply)` for Fastify. It never
 * rejects and never calls `next`: every delivery gets its answer.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import type { NodeWebhookHandler } from 'payhook/node';
 *
 * declare const handler: NodeWebhookHandler;
 * createServer(handler).listen(3000);
 * ```
 */
export type NodeWebhookHandler = (
  req: NodeRequestLike | FastifyRequestLike,
  res: NodeResponseLike | FastifyReplyLike,
  next?: (error?: unknown) => void,
) => Promise<void>;

/** Node's IncomingMessage errors with `aborted` / ECONNRESET when the client goes away mid-body. */
function isClientAbort(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === 'ECONNRESET' || code === 'ECONNABORTED' || message === 'aborted';
}

/** The request stream as the shared reader sees it: its events, detached when the reader stops. */
function requestSource(req: NodeRequestLike): ChunkSource {
  return {
    start(sink) {
      // Gone already (while a middleware before the handler awaited): no event will come.
      if (req.destroyed === true) {
        sink.fail(undefined, true);
        return () => {};
      }
      const onData = (chunk: Uint8Array | string): void => sink.chunk(chunk);
      const onEnd = (): void => sink.end();
      const onError = (error: unknown): void => sink.fail(error, isClientAbort(error));
      // Closed before its end: the client went away.
      const onAborted = (): void => sink.fail(undefined, true);
      const events = [
        ['data', onData],
        ['end', onEnd],
        ['error', onError],
        ['aborted', onAborted],
        ['close', onAborted],
      ] as const;
      for (const [event, listener] of events) req.on(event, listener);
      // Listening for data does not restart a stream paused on purpose (a middleware's req.pause()): every body
      // would time out.
      req.resume?.();
      return () => {
        for (const [event, listener] of events) req.removeListener(event, listener);
      };
    },
  };
}

const ALREADY_READ: BodyOutcome = {
  kind: 'unreadable',
  message:
    'The request body was already read, and no body parser left it on req.body (Fastify: pass (request, reply), not request.raw; Koa with a body parser: set ctx.req.body = ctx.request.rawBody).',
  cause: undefined,
};

// What is left of a stream a middleware began to read is not the body: verified, it would be refused as
// INVALID_BODY or SIGNATURE_MISMATCH depending on where the read stopped.
const PARTLY_READ: BodyOutcome = {
  kind: 'unreadable',
  message:
    'Part of the request body was read before the handler (a middleware listening for data), and no body parser left it on req.body.',
  cause: undefined,
};

/**
 * Whether `req.body` is what a body parser read from the stream. body-parser
 * 1.x (Express 4) sets `req.body = {}` for a content type it does not parse,
 * without reading a byte: that `{}` is not the body. A parser that ran has
 * read the stream to its end (`readableEnded`), or at least emptied it after
 * the whole message arrived (`complete` with nothing left). An object that is
 * not a Node stream at all (a test double, a serverless shim) says neither,
 * and its body is taken as given.
 */
function bodyWasRead(req: NodeRequestLike): boolean {
  if (req.readableEnded === true) return true;
  if (req.complete === true && req.readableLength === 0) return true;
  return req.readableEnded === undefined && req.complete === undefined;
}

function readBody(req: NodeRequestLike, limits: BodyLimits): Promise<BodyOutcome> {
  if (req.readableEnded === true) return Promise.resolve(ALREADY_READ);
  if (req.readableDidRead === true) return Promise.resolve(PARTLY_READ);
  return readChunks(requestSource(req), limits);
}

function isFastify(req: unknown, res: unknown): boolean {
  return (
    typeof res === 'object' &&
    res !== null &&
    typeof (res as FastifyReplyLike).hijack === 'function' &&
    typeof (res as FastifyReplyLike).raw === 'object' &&
    typeof req === 'object' &&
    req !== null &&
    typeof (req as FastifyRequestLike).raw === 'object'
  );
}

// Fastify validates a parsed body in place by default: types coerced, members not in the schema removed, defaults
// added. What payhook then reads may no longer be what was signed, so a mismatch names the schema as a possible cause.
const FASTIFY_SCHEMA =
  "The route has a body schema: Fastify's validator may have changed the parsed body (types coerced, members " +
  'removed, defaults added); if the signature verifies without it, give the webhook route no schema.body.';

/** The request's headers, with every host the request names in `host` (see nodeHost). */
function headersOf(req: NodeRequestLike): NodeRequestLike['headers'] {
  // A shim without headers gets an answer (no signature), not a rejected promise and no answer.
  const headers = req.headers ?? {};
  const host = nodeHost(headers, req.rawHeaders) as NodeRequestLike['headers'][string];
  return host === headers['host'] ? headers : { ...headers, host };
}

function send(req: NodeRequestLike, res: NodeResponseLike, answer: Answer): void {
  // A middleware before the handler answered: its answer stands, but one it left open is ended, not left hanging.
  if (res.headersSent === true) {
    if (res.writableEnded === false) res.end('');
    return;
  }
  res.statusCode = answer.status;
  // HTTP/2 has no Connection header (node:http2 drops it with a process
  // warning): a refusal that closes the connection closes its stream instead,
  // so a slow or endless body is not read on after the answer.
  const { stream } = req as { stream?: { close?: unknown } };
  const http2 = typeof stream?.close === 'function' ? (stream as { close(code: number): void }) : undefined;
  for (const [name, value] of Object.entries(answer.headers)) {
    if (http2 === undefined || name !== 'connection') res.setHeader(name, value);
  }
  const body = JSON.stringify(answer.body);
  if (http2 !== undefined && answer.headers['connection'] === 'close' && req.readableEnded !== true) {
    res.end(body, () => http2.close(0)); // NGHTTP2_NO_ERROR, once the answer is sent
  } else {
    res.end(body);
  }
}

/**
 * Creates the receiving handler for Node: it takes the body a body parser
 * left on `req.body` (Buffer, string, or parsed object) when that parser read
 * the request stream; otherwise — no parser, or one that left a placeholder
 * such as `{}` without reading — it reads the raw body itself (stopping past
 * `maxBodyBytes` with 413). Then it runs the same delivery flow as
 * `createWebhookHandler` from `payhook/web`, so every answer (see the table
 * there), log record and hook call is the same.
 *
 * - `node:http`: `createServer(handler)`.
 * - Express: `app.post('/webhooks/payments', handler)`, with or without
 *   `express.json()` / `express.raw()` before it.
 * - Fastify: `app.post('/webhooks/payments', handler)`; it calls
 *   `reply.hijack()` and answers on `reply.raw`, using the body Fastify
 *   parsed.
 * - `node:http2`: `createSecureServer(tls, handler)`; the `:authority` a
 *   request carries stands for its Host header.
 *
 * Behind a proxy, set `webhookUrl` (see "Behind a proxy" in docs/security.md).
 * A response a middleware before the handler already started stands as that
 * middleware sent it (ended, if it left it open); the delivery is still
 * handled, and the service's retry, if any, is answered as a duplicate.
 *
 * @throws PayhookError `INVALID_ARGUMENT` at creation for missing
 * keys, a missing `onPayment`, neither `webhookUrl` nor `allowAnyHost: true`,
 * or out-of-range durations.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { createNodeWebhookHandler } from 'payhook/node';
 *
 * declare const queue: { publish(topic: string, message: unknown): Promise<void> };
 * const app = express();
 * app.post('/webhooks/payments', createNodeWebhookHandler({
 *   environment: 'production',
 *   webhookUrl: 'https://shop.example.kg/webhooks/payments',
 *   onPayment: async (webhook) => { await queue.publish('payments', webhook.raw); },
 * }));
 * app.listen(3000);
 * ```
 */
export function createNodeWebhookHandler(options: WebhookHandlerOptions): NodeWebhookHandler {
  const deliver = createDeliveryFlow(options, 'createNodeWebhookHandler', nodeCryptoScheme);
  return async function handleWebhook(reqOrRequest, resOrReply): Promise<void> {
    let req: NodeRequestLike;
    let res: NodeResponseLike;
    let body: unknown;
    let note: string | undefined;
    if (isFastify(reqOrRequest, resOrReply)) {
      const reply = resOrReply as FastifyReplyLike;
      reply.hijack();
      const request = reqOrRequest as FastifyRequestLike;
      req = request.raw;
      res = reply.raw;
      body = request.body;
      if (request.routeOptions?.schema?.body !== undefined) note = FASTIFY_SCHEMA;
    } else {
      req = reqOrRequest as NodeRequestLike;
      res = resOrReply as NodeResponseLike;
      body = req.body;
    }
    // A body left on req.body counts only if the stream behind it was read.
    const given = body !== undefined && bodyWasRead(req);
    send(
      req,
      res,
      await deliver({
        method: req.method,
        url: req.originalUrl ?? req.url ?? '',
        headers: headersOf(req),
        body: given ? { given: body as BodyInput, note } : { read: (limits) => readBody(req, limits) },
      }),
    );
  };
}
