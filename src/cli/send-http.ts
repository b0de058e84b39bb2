/**
 * How `payhook send` delivers one request and reads the answer: with fetch
 * for a signed delivery, or byte for byte over node:http(s) for a capture
 * replayed as it was received.
 *
 * @module
 */
import { request as httpRequest, validateHeaderName, validateHeaderValue, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';

/**
 * Why a fetch failed, as briefly as the runtime says it: the system error
 * code (`ECONNREFUSED`), else the cause's message (`bad port`), else the
 * error's name (`TimeoutError`).
 */
function failureReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string' && cause.message !== '') return cause.message;
  return error instanceof Error ? error.name : 'error';
}

/**
 * How much of an answer is read: the summary shows 200 characters, and a
 * receiver's error answer (its JSON code) fits many times over. The rest is
 * not read: the connection is closed, so an answer of gigabytes costs
 * nothing here.
 */
export const ANSWER_KEPT_BYTES = 8_192;

/** The kept start of an answer, as text (a character cut in two at the end becomes U+FFFD). */
function keptText(chunks: readonly Uint8Array[]): string {
  return Buffer.concat(chunks).subarray(0, ANSWER_KEPT_BYTES).toString('utf8');
}

/** Reads an answer's body up to ANSWER_KEPT_BYTES, then cancels the rest. */
async function readKept(body: ReadableStream<Uint8Array> | null): Promise<string> {
  if (body === null) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let kept = 0;
  while (kept < ANSWER_KEPT_BYTES) {
    const { done, value } = await reader.read();
    if (done) return keptText(chunks);
    chunks.push(value);
    kept += value.byteLength;
  }
  // Not awaited: a receiver that keeps sending is no reason to wait.
  reader.cancel().catch(() => undefined);
  return keptText(chunks);
}

/** One request to deliver: what `sign()` makes, or a capture as it was received. */
export interface Delivery {
  method: string;
  headers: Readonly<Record<string, string>>;
  body: string | Uint8Array;
}

/** What came back from one attempt. */
export interface Answered {
  status: number;
  statusText: string;
  text: string;
  /** Where a redirect points (its Location header). */
  location?: string | undefined;
}

/** Why an attempt got no answer (its whole body, or the part that is read): the answer's status, if it came. */
export class NoAnswer extends Error {
  constructor(
    readonly reason: string,
    readonly status?: { status: number; statusText: string },
  ) {
    super(reason);
  }
}

/** Headers that describe one connection or framing, never sent again as captured. */
const HOP_BY_HOP = new Set([
  'connection',
  'content-length',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'http2-settings',
]);

/**
 * Replaying a capture: its headers as sent, past the framing ones (left to the connection) and `accept-encoding`
 * (not signed; a compressed answer could not be shown).
 */
function replayedHeaders(captured: Readonly<Record<string, string>>): Record<string, string> {
  // No prototype: on a plain object, `headers['__proto__'] = value` sets nothing, and the header was dropped.
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(captured)) {
    const lower = name.toLowerCase();
    if (!HOP_BY_HOP.has(lower) && lower !== 'accept-encoding' && !name.startsWith(':')) headers[name] = value;
  }
  return headers;
}

/**
 * Whether Node (and so fetch) can send a header as it is: a name HTTP allows, and a value without control characters
 * or characters past U+00FF (a capture made on workerd holds U+FFFD for a byte that was not UTF-8).
 */
export function canSend(name: string, value: string): boolean {
  try {
    validateHeaderName(name);
    validateHeaderValue(name, value);
    return true;
  } catch {
    return false;
  }
}

/** The name of the first captured header a replay cannot send as it is; undefined when all can be sent. */
export function unsendableHeader(captured: Readonly<Record<string, string>>): string | undefined {
  return Object.entries(replayedHeaders(captured)).find(([name, value]) => !canSend(name, value))?.[0];
}

/** Delivers with fetch: the target's own Host; fetch adds its usual headers (none is signed). */
export async function fetchDelivery(url: string, delivery: Delivery, timeoutMs: number): Promise<Answered> {
  let response: Response | undefined;
  try {
    response = await fetch(url, {
      method: delivery.method,
      headers: Object.fromEntries(Object.entries(delivery.headers).filter(([name]) => name !== 'host')),
      // Only signed deliveries come here, and signWebhook writes text; bytes go through exactDelivery.
      body: delivery.body as string,
      // A redirect is the receiver's answer, as the service sees it (it does not follow one): a 302 to a
      // login page is not a 200.
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await readKept(response.body);
    const location = response.headers.get('location') ?? undefined;
    return { status: response.status, statusText: response.statusText, text, location };
  } catch (error) {
    throw new NoAnswer(failureReason(error), response);
  }
}

/**
 * Delivers exactly the captured headers (Host included; only the framing
 * headers are left to the connection) and body bytes, which fetch cannot:
 * it replaces Host and adds headers of its own.
 */
export function exactDelivery(url: string, delivery: Delivery, timeoutMs: number): Promise<Answered> {
  const target = new URL(url);
  const body = typeof delivery.body === 'string' ? Buffer.from(delivery.body, 'utf8') : delivery.body;
  const headers = replayedHeaders(delivery.headers);
  headers['content-length'] = String(body.byteLength);
  const https = target.protocol === 'https:';
  const send = https ? httpsRequest : httpRequest;
  // TLS is with the target, not the captured Host (which Node would otherwise name to the server and check the
  // certificate against); no name for an address, which TLS does not allow.
  const servername = https && isIP(target.hostname.replace(/^\[|\]$/g, '')) === 0 ? target.hostname : '';
  return new Promise((resolve, reject) => {
    let answer: IncomingMessage | undefined;
    const fail = (error: NodeJS.ErrnoException): void => {
      const status =
        answer === undefined ? undefined : { status: answer.statusCode ?? 0, statusText: answer.statusMessage ?? '' };
      reject(new NoAnswer(error.code ?? error.message, status));
    };
    let request: ReturnType<typeof httpRequest>;
    try {
      request = send(target, { method: delivery.method, headers, ...(https && { servername }) }, (response) => {
        answer = response;
        const chunks: Buffer[] = [];
        let kept = 0;
        const answered = (): void =>
          resolve({
            status: response.statusCode ?? 0,
            statusText: response.statusMessage ?? '',
            text: keptText(chunks),
            location: response.headers.location,
          });
        response.on('data', (chunk: Buffer) => {
          if (kept >= ANSWER_KEPT_BYTES) return;
          chunks.push(chunk);
          kept += chunk.byteLength;
          if (kept < ANSWER_KEPT_BYTES) return;
          // Enough to show: the rest is not read (the 'close' below then rejects a promise already resolved).
          answered();
          response.destroy();
        });
        response.on('end', answered);
        // The connection dropped mid-answer: the request is done by then, so its own 'error' never comes.
        response.on('error', fail);
        response.on('close', () => {
          if (!response.complete) fail(Object.assign(new Error('answer cut off'), { code: 'ECONNRESET' }));
        });
      });
    } catch (error) {
      // A captured header Node will not send (a name or value with characters HTTP does not allow).
      fail(error as NodeJS.ErrnoException);
      return;
    }
    // The whole attempt, answer included, within timeoutMs (a socket's own timeout only bounds its idle time,
    // and an answer that trickles in would keep the attempt going for ever).
    const timer = setTimeout(
      () => request.destroy(Object.assign(new Error('timed out'), { code: 'TimeoutError' })),
      timeoutMs,
    );
    request.on('close', () => clearTimeout(timer));
    request.on('error', fail);
    request.end(body);
  });
}
