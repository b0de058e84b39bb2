/**
 * Reading what was signed: a request's body and head turned into the
 * canonical string, or the first coded reason it cannot be. verifyWebhook,
 * buildCanonicalString and explain all read through here, so they agree on
 * what was signed and on which failure comes first.
 *
 * @module
 */
import { isPayhookError, type PayhookError } from './errors.js';
import { canonicalBody, parseJsonBody, type JsonObject } from './json-body.js';
import type { BodyInput } from './request-types.js';

/** What was signed, line by line, or why it cannot be built. */
export type SignedRead =
  | {
      readonly ok: true;
      /** The body's object, `null` for no body. */
      readonly body: JsonObject | null;
      /** Lines 1 to 4 (method, path, headers, query), each ending in `\n`. */
      readonly head: string;
      /** The last line, the body as signed. */
      readonly bodyLine: string;
      readonly canonical: string;
    }
  | { readonly ok: false; readonly error: PayhookError };

/** The codes a request (not a caller's misuse) can fail to be read with. */
const READ_CODES: ReadonlySet<string> = new Set([
  'INVALID_BODY',
  'URL_MISMATCH',
  'MISSING_HOST',
  'MALFORMED_PATH',
  'MALFORMED_QUERY',
]);

/**
 * Reads the body (`INVALID_BODY` first), then the head that `head` builds
 * (`URL_MISMATCH`, `MISSING_HOST`, `MALFORMED_PATH`, `MALFORMED_QUERY`), then writes the body
 * line. A failure of the request comes back as `{ ok: false }`; a caller's
 * misuse (`INVALID_ARGUMENT`) is thrown.
 *
 * @example
 * ```ts
 * import { readSigned } from './signed-read.js';
 *
 * const read = readSigned('{"b":1,"a":2}', () => 'post\n/hook\nhost:h\n');
 * if (read.ok) read.canonical; // 'post\n/hook\nhost:h\n{"a":2,"b":1}'
 * ```
 */
export function readSigned(body: BodyInput, head: () => string): SignedRead {
  try {
    const parsed = parseJsonBody(body);
    const lines = head();
    const bodyLine = canonicalBody(parsed);
    return { ok: true, body: parsed, head: lines, bodyLine, canonical: lines + bodyLine };
  } catch (error) {
    if (isPayhookError(error) && READ_CODES.has(error.code)) return { ok: false, error };
    throw error;
  }
}
