// Text a console line quotes (a header, a path, a signed field a merchant's message repeats) must not print as a
// line of its own: what would end a line or move the cursor in a terminal or log viewer (C0, DEL, C1, U+2028/2029)
// is escaped as \uXXXX. Internal.

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/**
 * `text` as one line: control characters escaped, cut at `max` characters (before escaping, never inside a
 * surrogate pair) with `…`.
 *
 * @example
 * ```ts
 * import { oneLine } from './one-line.js';
 *
 * oneLine('a\nb', 100); // 'a\\u000ab'
 * ```
 */
export function oneLine(text: string, max: number): string {
  let end = text.length > max ? max : text.length;
  // A high surrogate at the cut would be left without its pair.
  if (end < text.length && /[\ud800-\udbff]/.test(text.charAt(end - 1))) end--;
  const cut = end < text.length ? `${text.slice(0, end)}…` : text;
  return cut.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
