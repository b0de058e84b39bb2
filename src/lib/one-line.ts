// Text a console line quotes (a header, a path, a signed field a merchant's message repeats) must not print as a
// line of its own: what would end a line or move the cursor in a terminal or log viewer (C0, DEL, C1, U+2028/2029),
// or reorder how the rest of it reads (the bidirectional embeddings, overrides and isolates), is escaped as
// \uXXXX. Internal.

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028-\u202e\u2066-\u2069]/g;

/**
 * `text` as one line: control characters escaped, then cut at `max` characters (4,000: a console line's message)
 * with `…`, never inside an escape or a surrogate pair.
 *
 * @example
 * ```ts
 * import { oneLine } from './one-line.js';
 *
 * oneLine('a\nb'); // 'a\\u000ab'
 * ```
 */
export function oneLine(text: string, max = 4_000): string {
  const escaped = text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (escaped.length <= max) return escaped;
  let end = max;
  // An escape (6 characters) that the cut would split goes whole; so does a pair's high surrogate.
  const split = escaped.slice(end - 5, end).lastIndexOf('\\');
  if (split !== -1) end -= 5 - split;
  if (/[\ud800-\udbff]/.test(escaped.charAt(end - 1))) end--;
  return `${escaped.slice(0, end)}…`;
}
