/**
 * The nesting bound of docs/CONTRACT.md §8: a body nested deeper than
 * {@link MAX_BODY_DEPTH} levels is refused before it is parsed, so no body
 * costs more than a linear read and no verdict depends on the engine's stack.
 *
 * @module
 */

/** The deepest nesting a body may have, arrays and objects counted together. Deliveries nest three levels. */
export const MAX_BODY_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * Whether JSON text opens more than `limit` arrays and objects at once at
 * any point: brackets are counted outside strings, in one pass that stops at
 * the first level too deep. Text that is not JSON is read the same way; the
 * parse that follows refuses it.
 *
 * @example
 * ```ts
 * import { textTooDeep } from './json-depth.js';
 *
 * textTooDeep('{"a":[[1]]}', 3); // false
 * textTooDeep('{"a":[[[1]]]}', 3); // true
 * ```
 */
export function textTooDeep(text: string, limit: number = MAX_BODY_DEPTH): boolean {
  // Fewer characters than one more than the limit of opening brackets cannot go deeper.
  if (text.length <= limit) return false;
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/**
 * Whether an already parsed value nests arrays and plain objects more than
 * `limit` levels deep, counting as {@link textTooDeep} counts the text
 * `JSON.stringify` would write for it. A cycle is infinitely deep. A member
 * is walked again only when reached deeper than before (a value shared by
 * several parents), so the walk is bounded by the value's size times `limit`.
 *
 * @example
 * ```ts
 * import { valueTooDeep } from './json-depth.js';
 *
 * valueTooDeep({ a: [[1]] }, 3); // false
 * valueTooDeep({ a: [[[1]]] }, 3); // true
 * ```
 */
export function valueTooDeep(value: unknown, limit: number = MAX_BODY_DEPTH): boolean {
  const deepest = new Map<object, number>();
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (typeof node !== 'object' || node === null || (deepest.get(node) ?? 0) >= depth) continue;
    if (depth > limit) return true;
    deepest.set(node, depth);
    let members: unknown[];
    try {
      members = Object.values(node);
    } catch {
      continue; // a throwing getter: what reads the member next reports it
    }
    for (const member of members) pending.push([member, depth + 1]);
  }
  return false;
}
