// Real servers on 127.0.0.1 (ephemeral ports) and a raw HTTP client that can
// send any Host header.
import {
  createServer,
  request as httpRequest,
  Agent,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { SignedDelivery } from './sign.js';

export interface RunningServer {
  port: number;
  server: Server;
  close(): Promise<void>;
}

export async function listen(listener: RequestListener | Server): Promise<RunningServer> {
  const server = typeof listener === 'function' ? createServer(listener) : listener;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/** Serves a Web `(Request, ctx) => Response` handler through node:http, streaming the body in. */
export function webBridge(
  handler: (request: Request, context: { waitUntil(promise: Promise<unknown>): void }) => Promise<Response>,
  pending: Promise<unknown>[] = [],
): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
    }
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
      method: req.method ?? 'GET',
      headers,
      ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream, duplex: 'half' } : {}),
    });
    handler(request, {
      waitUntil: (promise) => {
        pending.push(promise);
      },
    })
      .then(async (response) => {
        res.statusCode = response.status;
        response.headers.forEach((value, name) => res.setHeader(name, value));
        res.end(Buffer.from(await response.arrayBuffer()));
      })
      .catch((error: unknown) => {
        res.statusCode = 599;
        res.end(String(error));
      });
  };
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: { ok?: boolean; code?: string; message?: string; duplicate?: boolean } | undefined;
  text: string;
}

const agent = new Agent({ keepAlive: false, maxSockets: 256 });

/** Sends raw bytes to 127.0.0.1:port with exactly the given headers (Host included). */
export function send(
  port: number,
  delivery: Pick<SignedDelivery, 'method' | 'target' | 'headers'> & { body: string | Buffer },
  { chunked = false, pauseMs = 0 }: { chunked?: boolean; pauseMs?: number } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const body = typeof delivery.body === 'string' ? Buffer.from(delivery.body) : delivery.body;
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: delivery.method,
        path: delivery.target,
        // Chunked: no content-length, the body in two chunks, `pauseMs` apart.
        headers: chunked ? delivery.headers : { ...delivery.headers, 'content-length': String(body.length) },
        agent,
        setHost: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: HttpAnswer['json'];
          try {
            json = JSON.parse(text) as HttpAnswer['json'];
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json, text });
        });
        res.on('error', reject);
      },
    );
    // An oversized body may be cut off by the server after it answered 413.
    req.on('error', reject);
    if (!chunked) return void req.end(body);
    req.write(body.subarray(0, body.length >> 1));
    setTimeout(() => req.end(body.subarray(body.length >> 1)), pauseMs);
  });
}
