// The body step of the flow: the declared length, then the adapter's reader
// within the limits, each way it can end turned into a body or an answer.
// Internal.
import { getHeader } from '../lib/headers.js';
import { describeError } from '../lib/misuse.js';
import type { BodyInput, HeadersInput } from '../request.js';
import { answer, type Answer } from './answer.js';
import type { BodyReader } from './body.js';
import type { Deadline } from './deadline.js';
import type { DeliveryReport } from './report.js';

/** Internal: one request, as an adapter hands it to the flow. */
export interface DeliveryInput {
  readonly method: string | undefined;
  /** Absolute, or path and query. */
  readonly url: string;
  readonly headers: HeadersInput;
  /**
   * The body a parser already read (with what may have changed it, told with a signature that does not verify),
   * or the adapter's reader over the body stream.
   */
  readonly body: { readonly given: BodyInput; readonly note?: string | undefined } | { readonly read: BodyReader };
}

/**
 * How much of an oversized body is still read (and dropped) so the sender
 * receives its 413 instead of a reset; past it the connection is cut.
 */
const DISCARD_BYTES = 8 * 1_048_576;

/** Internal: the header of an answer after which the connection is not reused (a body left unread or cut). */
export const CLOSE = { connection: 'close' };

/** Internal: the body of `input` within `limits`, or the answer when there is none to verify. */
export async function receiveBody(
  input: DeliveryInput,
  limits: { readonly maxBodyBytes: number; readonly bodyTimeoutMs: number },
  deadline: Deadline,
  report: DeliveryReport,
): Promise<{ body: BodyInput } | Answer> {
  const { maxBodyBytes, bodyTimeoutMs } = limits;
  const tooLarge = (): Answer =>
    report.refuse('BODY_TOO_LARGE', `The body exceeds ${maxBodyBytes} bytes.`, { headers: CLOSE });
  // A body a parser already read is bounded by the parser's limit: its
  // declared length says nothing a chunked one would, so it is not checked;
  // the verifier measures a raw one (string or bytes) itself.
  if (!('read' in input.body)) return { body: input.body.given };
  // The service sends bodies as they are; a proxy that compresses them gets
  // a refusal that says so, not "not valid UTF-8".
  const encoding = getHeader(input.headers, 'content-encoding')?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
    const message = `The body is sent with Content-Encoding ${encoding}, which payhook does not decode: have the proxy in front pass request bodies on as the service sent them.`;
    return report.refuse('INVALID_BODY', message, { headers: CLOSE });
  }
  // A Transfer-Encoding overrides a Content-Length (RFC 9112 §6.3): the length is then no bound on what arrives
  // (workerd hands on such a request with both headers), so the body is read in bounded chunks.
  const declared =
    getHeader(input.headers, 'transfer-encoding') === undefined
      ? Number(getHeader(input.headers, 'content-length') ?? Number.NaN)
      : Number.NaN;
  if (declared > maxBodyBytes + DISCARD_BYTES) return tooLarge();
  const outcome = await input.body
    .read({
      maxBytes: maxBodyBytes,
      discardBytes: DISCARD_BYTES,
      timeoutMs: bodyTimeoutMs,
      deadline,
      declaredBytes: Number.isSafeInteger(declared) && declared >= 0 && declared <= maxBodyBytes ? declared : undefined,
    })
    .catch(
      (cause: unknown) => ({ kind: 'unreadable', message: 'The request body could not be read.', cause }) as const,
    );
  switch (outcome.kind) {
    case 'body':
      return { body: outcome.body };
    case 'too-large':
      return tooLarge();
    case 'timed-out':
      // A body declared too large that stalls while the rest is dropped is still too large.
      if (declared > maxBodyBytes) return tooLarge();
      return report.refuse('BODY_TIMEOUT', `The body did not arrive within ${bodyTimeoutMs} ms.`, { headers: CLOSE });
    case 'aborted': {
      // Normal traffic, not an error: logged, not reported to onError. The
      // answer reaches nobody; it exists so both adapters do the same.
      const message = 'The client went away while sending the body; nothing was processed (the service retries).';
      report.log('info', 'aborted', message, { error: outcome.cause });
      return answer(400, { ok: false, message }, CLOSE);
    }
    case 'unreadable': {
      const detail = outcome.cause === undefined ? '' : ` Cause: ${describeError(outcome.cause)}`;
      return report.refuse('INVALID_ARGUMENT', `${outcome.message}${detail}`, {
        cause: outcome.cause,
        event: 'misconfigured',
        level: 'error',
      });
    }
  }
}
