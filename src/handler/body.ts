// Reading a request body within its limits: the one reader both adapters use.
// An adapter only says how its platform hands out chunks (a ChunkSource);
// joining them, the size limit, the deadline and what a broken stream means
// are decided here, once. Internal.
import type { BodyInput } from '../request.js';
import type { Deadline } from './deadline.js';

/** Internal: how reading a body ended. */
export type BodyOutcome =
  | { readonly kind: 'body'; readonly body: BodyInput }
  | { readonly kind: 'too-large' }
  | { readonly kind: 'timed-out' }
  | { readonly kind: 'aborted'; readonly cause: unknown }
  | { readonly kind: 'unreadable'; readonly message: string; readonly cause: unknown };

/** Internal: the bounds of one read. */
export interface BodyLimits {
  /** The most bytes kept; past it the body is too large. */
  readonly maxBytes: number;
  /**
   * How many more bytes are read and thrown away once the body is known to be
   * too large, so the sender is still reading when the 413 arrives (a socket
   * closed with unread data is reset, and the reset can overtake the answer).
   */
  readonly discardBytes: number;
  /** The deadline for the whole body, from the start of the read. */
  readonly timeoutMs: number;
  /** The delivery's deadlines, which the read is the first stage of. */
  readonly deadline: Deadline;
  /**
   * The length the request declares (`content-length`), when it declares one
   * within `maxBytes`: a source may then read the body whole.
   */
  readonly declaredBytes: number | undefined;
}

/** Internal: where a {@link ChunkSource} delivers what it reads. */
export interface ChunkSink {
  chunk(data: Uint8Array | string): void;
  end(): void;
  /** The stream broke; `aborted` when that means the client went away. */
  fail(cause: unknown, aborted: boolean): void;
}

/** Internal: a platform's body stream, as the reader sees it. `start` begins
 * delivering chunks to the sink and returns the function that stops
 * (detaches, lets go of the stream); it may throw when the body cannot be
 * read at all (already consumed).
 */
export interface ChunkSource {
  start(sink: ChunkSink): () => void;
}

/** Internal: reads a body within `limits`; what an adapter hands the delivery flow. */
export type BodyReader = (limits: BodyLimits) => Promise<BodyOutcome>;

const TOO_LARGE: BodyOutcome = { kind: 'too-large' };
const TIMED_OUT: BodyOutcome = { kind: 'timed-out' };

/** Internal: reads `source` to its end within `limits`; never rejects. */
export function readChunks(source: ChunkSource, limits: BodyLimits): Promise<BodyOutcome> {
  return new Promise((resolve) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    let tooLarge = false;
    let settled = false;
    let stop: (() => void) | undefined;
    let encoder: TextEncoder | undefined;
    const finish = (outcome: BodyOutcome): void => {
      if (settled) return;
      settled = true;
      ended();
      stop?.();
      resolve(outcome);
    };
    // A client that sends part of a body and stalls must not hold the
    // connection and the buffered bytes for ever.
    const ended = limits.deadline.stage(limits.timeoutMs, () => finish(tooLarge ? TOO_LARGE : TIMED_OUT));
    const sink: ChunkSink = {
      chunk(data) {
        if (settled) return;
        const bytes = typeof data === 'string' ? (encoder ??= new TextEncoder()).encode(data) : data;
        size += bytes.byteLength;
        if (size > limits.maxBytes) {
          // Nothing more is kept; the rest is read and dropped up to a bound.
          tooLarge = true;
          chunks.length = 0;
          if (size > limits.maxBytes + limits.discardBytes) finish(TOO_LARGE);
          return;
        }
        chunks.push(bytes);
      },
      end() {
        finish(tooLarge ? TOO_LARGE : { kind: 'body', body: join(chunks, size) });
      },
      fail(cause, aborted) {
        if (tooLarge) finish(TOO_LARGE);
        else if (aborted) finish({ kind: 'aborted', cause });
        else finish({ kind: 'unreadable', message: 'The request body could not be read.', cause });
      },
    };
    try {
      stop = source.start(sink);
    } catch (cause) {
      finish({
        kind: 'unreadable',
        message: 'The request body cannot be read (was it read before the handler?).',
        cause,
      });
      return;
    }
    // The source may have ended (or failed) before `start` returned.
    if (settled) stop();
  });
}

function join(chunks: readonly Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
