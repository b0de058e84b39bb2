import { decodeBase64Lenient } from '../lib/base64.js';
import { UsageError } from './io.js';

/** A captured delivery, as `verifyWebhook` takes it. */
export interface CapturedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** Text, or the exact bytes when the capture holds them (`bodyBase64`: a body that is not UTF-8). */
  body: string | Uint8Array;
  /** The receiver's `webhookUrl`, when the capture recorded it. */
  webhookUrl?: string;
}

/** The exact body bytes a capture kept as base64 (a body that is not UTF-8 has no faithful text). */
function bytesOf(bodyBase64: unknown): Uint8Array {
  const bytes = typeof bodyBase64 === 'string' ? decodeBase64Lenient(bodyBase64) : null;
  if (bytes === null) throw new UsageError('the request file\'s "bodyBase64" is not base64');
  return bytes;
}

/**
 * The bytes of a body that `JSON.stringify` wrote from a Node `Buffer` (`{ type: 'Buffer', data: [...] }`) or a
 * `Uint8Array` (`{ "0": 123, … }`): both keep every byte; undefined for anything else (a parsed JSON body).
 */
function stringifiedBytes(body: object): Uint8Array | undefined {
  const isByte = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= 0 && (n as number) <= 255;
  const { type, data } = body as { type?: unknown; data?: unknown };
  if (type === 'Buffer' && Array.isArray(data) && Object.keys(body).length === 2 && data.every(isByte)) {
    return Uint8Array.from(data);
  }
  const values = Object.entries(body);
  if (values.length === 0 || !values.every(([key, n], i) => key === String(i) && isByte(n))) return undefined;
  return Uint8Array.from(values, ([, n]) => n as number);
}

/** A body as a capture holds it: text, base64 bytes, bytes written by JSON.stringify, or a parsed JSON value. */
function bodyOf(body: unknown, bodyBase64: unknown): string | Uint8Array {
  if (bodyBase64 !== undefined) return bytesOf(bodyBase64);
  if (typeof body === 'string') return body;
  if (body === undefined || body === null) return '';
  const bytes = typeof body === 'object' ? stringifiedBytes(body) : undefined;
  if (bytes !== undefined) return utf8(bytes) ?? bytes;
  // A body captured as parsed JSON is written back; the canonical string is the same.
  return JSON.stringify(body);
}

function fromJson(value: unknown): CapturedRequest {
  // A whole conformance entry ({ name, request, … }) is accepted too.
  const candidate =
    typeof value === 'object' && value !== null && 'request' in value && !('method' in value) ? value.request : value;
  if (typeof candidate !== 'object' || candidate === null)
    throw new UsageError('the request file must hold a JSON object { method, url, headers, body }');
  const { method, url, path, headers, body, bodyBase64, webhookUrl } = candidate as Record<string, unknown>;
  const target = typeof url === 'string' ? url : typeof path === 'string' ? path : undefined;
  if (target === undefined) throw new UsageError('the request file has no "url" (absolute, or path and query)');
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    throw new UsageError('the request file has no "headers" object');
  }
  if (webhookUrl !== undefined && (typeof webhookUrl !== 'string' || webhookUrl === '')) {
    throw new UsageError('the request file\'s "webhookUrl" must be the URL registered with the service');
  }
  const fields: Array<[string, string]> = [];
  for (const [name, raw] of Object.entries(headers)) {
    if (typeof raw === 'string') fields.push([name, raw]);
    else if (Array.isArray(raw)) fields.push([name, raw.map(String).join(', ')]);
    else if (typeof raw === 'number') fields.push([name, String(raw)]);
  }
  // JSON.stringify of a Web Request or Headers gives {}: every delivery carries a Host and its signature at least.
  if (fields.length === 0) {
    throw new UsageError(
      'the request file\'s "headers" is empty: was it written with JSON.stringify of a Web Request (which keeps no headers)? Save the capture onSignatureMismatch hands you (its second argument: { capture }), or captureDelivery(request)',
    );
  }
  // fromEntries defines each name as an own field, __proto__ included.
  const flat = Object.fromEntries(fields);
  return {
    method: typeof method === 'string' ? method : 'POST',
    url: target,
    headers: flat,
    body: bodyOf(body, bodyBase64),
    ...(typeof webhookUrl === 'string' ? { webhookUrl } : {}),
  };
}

/** A chunked body without its framing: sizes count bytes; chunk extensions and trailers are dropped. */
function dechunk(bytes: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; ;) {
    const end = bytes.indexOf('\n', at);
    const line = end === -1 ? '' : bytes.subarray(at, end).toString('latin1').split(';')[0]!.trim();
    if (!/^[0-9A-Fa-f]+$/.test(line))
      throw new UsageError('the request file says Transfer-Encoding: chunked, but its body is not in chunks');
    const size = Number.parseInt(line, 16);
    if (size === 0) return Buffer.concat(parts);
    parts.push(bytes.subarray(end + 1, end + 1 + size));
    at = end + 1 + size;
    // The line break after the chunk's data.
    if (bytes[at] === 0x0d) at++;
    if (bytes[at] === 0x0a) at++;
  }
}

/**
 * The body before the answer a copied conversation (a packet capture's "follow stream") holds after it: cut at the
 * declared length only when an HTTP status line follows there (so a body edited by hand since keeps what was
 * added); undefined when none follows.
 */
function beforeAnswer(body: Buffer, declared: string | undefined): Buffer | undefined {
  const length = /^\d+$/.test(declared ?? '') ? Number(declared) : Number.NaN;
  if (!(length < body.length)) return undefined;
  return /^\s*HTTP\/\d/.test(body.subarray(length, length + 64).toString('latin1'))
    ? body.subarray(0, length)
    : undefined;
}

/** UTF-8 text, a byte order mark kept; `undefined` for bytes that are not UTF-8. */
function utf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Raw HTTP/1.1: request line, headers, blank line, body (its chunks joined when it was sent chunked). The body
 * stays bytes: text when it is UTF-8, else the bytes as captured (verifyWebhook judges them INVALID_BODY, and
 * `payhook send` replays them byte for byte).
 */
function fromHttp(file: Buffer): CapturedRequest {
  const bytes = file[0] === 0xef && file[1] === 0xbb && file[2] === 0xbf ? file.subarray(3) : file;
  // Latin-1 gives one character per byte, so the offsets found are the bytes'.
  const split = /\r?\n\r?\n/.exec(bytes.toString('latin1'));
  const head = split ? bytes.subarray(0, split.index) : bytes;
  let body = split ? bytes.subarray(split.index + split[0].length) : Buffer.alloc(0);
  // Header bytes are read as Latin-1, as Node, Deno and Bun read them (workerd reads UTF-8: docs/recipes.md), so what
  // verifies here verifies there and `payhook send` writes them back byte for byte; the request line as UTF-8, as a
  // client writes its target.
  const lineEnd = head.indexOf(0x0a);
  const requestLine = (lineEnd === -1 ? head : head.subarray(0, lineEnd)).toString('utf8').replace(/\r$/, '');
  const lines =
    lineEnd === -1
      ? []
      : head
          .subarray(lineEnd + 1)
          .toString('latin1')
          .split(/\r?\n/);
  // The target is a path or an absolute URL: "hello world" is not a request line.
  const match = /^([A-Za-z]+)\s+(\/\S*|https?:\/\/\S+)(?:\s+HTTP\/[\d.]+)?\s*$/i.exec(requestLine);
  if (!match)
    throw new UsageError(
      `the request file is neither JSON nor HTTP text (first line: ${JSON.stringify(requestLine.slice(0, 80))})`,
    );
  // A Map, so a header named like an Object.prototype member (constructor, __proto__) is an ordinary header.
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0)
      throw new UsageError(`malformed header line in the request file: ${JSON.stringify(line.slice(0, 80))}`);
    const name = line.slice(0, colon).trim().toLowerCase();
    // HTTP allows optional whitespace around a value; it is not part of it.
    const value = line.slice(colon + 1).trim();
    const before = headers.get(name);
    headers.set(name, before === undefined ? value : `${before}, ${value}`);
  }
  const fields = Object.fromEntries(headers);
  const chunked = /(^|,)\s*chunked\s*$/i.test(headers.get('transfer-encoding') ?? '');
  if (chunked) body = dechunk(body);
  else {
    // Cut at its declared length, the body is exact; else the line break that ends the file (LF or CRLF) is not the
    // body's (a CR alone is).
    const end = body.at(-1) === 0x0a ? (body.at(-2) === 0x0d ? -2 : -1) : body.length;
    body = beforeAnswer(body, headers.get('content-length')) ?? body.subarray(0, end);
  }
  return { method: match[1]!, url: match[2]!, headers: fields, body: utf8(body) ?? body };
}

/** Reads a captured delivery: JSON like a conformance entry's `request`, or raw HTTP, from the file's bytes. */
export function parseCapturedRequest(file: Uint8Array): CapturedRequest {
  const bytes = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  if (bytes.toString('utf8').trimStart().startsWith('{')) {
    const text = utf8(bytes);
    if (text === undefined)
      throw new UsageError('the request file is JSON but not UTF-8: keep a body that is not UTF-8 as "bodyBase64"');
    let value: unknown;
    try {
      value = JSON.parse(text.trimStart());
    } catch (error) {
      throw new UsageError(`the request file is not valid JSON: ${(error as Error).message}`);
    }
    return fromJson(value);
  }
  return fromHttp(bytes);
}
