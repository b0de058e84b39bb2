// Internal: reads a JSON text without building it. Parsing a body of many
// tiny keys is costly (the engine builds an object of that many properties);
// this walk allocates nothing but its stack, so a request whose signature
// cannot verify gets the verdict the parse would give (INVALID_BODY comes
// before SIGNATURE_MISMATCH) without the parse. It accepts exactly the texts
// JSON.parse accepts (ECMA-262 JSON.parse, i.e. ECMA-404); the property
// tests hold it to that.

/**
 * What {@link scanJson} found: the kind of the top-level value, and how
 * deeply arrays and objects nest (0 for a scalar, 1 for `{}`).
 */
export interface JsonShape {
  readonly kind: 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';
  readonly depth: number;
}

const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d; // }
const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const DOT = 0x2e;

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isHex = (c: number): boolean => isDigit(c) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);

/** The index after JSON whitespace (tab, line feed, carriage return, space) from `i`. */
function skipSpace(text: string, i: number): number {
  for (let c = text.charCodeAt(i); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = text.charCodeAt(++i));
  return i;
}

// The characters that may follow a backslash, besides `u`.
const ESCAPES = /* @__PURE__ */ new Set(Array.from('"\\/bfnrt', (c) => c.charCodeAt(0)));

/** The index after the string that starts at `i` (a quote), or -1. */
function skipString(text: string, i: number): number {
  for (i++; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i + 1;
    if (c < 0x20) return -1;
    if (c === BACKSLASH) {
      const next = text.charCodeAt(++i);
      if (next === 0x75 /* u */) {
        if (!(isHex(text.charCodeAt(i + 1)) && isHex(text.charCodeAt(i + 2)))) return -1;
        if (!(isHex(text.charCodeAt(i + 3)) && isHex(text.charCodeAt(i + 4)))) return -1;
        i += 4;
      } else if (!ESCAPES.has(next)) {
        return -1;
      }
    }
  }
  return -1;
}

/** The index after the digits from `i`, or -1 when there is none. */
function skipDigits(text: string, i: number): number {
  const start = i;
  while (isDigit(text.charCodeAt(i))) i++;
  return i > start ? i : -1;
}

/** The index after the number that starts at `i`, or -1: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`. */
function skipNumber(text: string, i: number): number {
  if (text.charCodeAt(i) === MINUS) i++;
  if (text.charCodeAt(i) === 0x30) i++;
  else i = skipDigits(text, i);
  if (i < 0) return -1;
  if (text.charCodeAt(i) === DOT) i = skipDigits(text, i + 1);
  if (i < 0) return -1;
  if ((text.charCodeAt(i) | 0x20) === 0x65 /* e */) {
    const sign = text.charCodeAt(i + 1);
    i = skipDigits(text, sign === 0x2b || sign === MINUS ? i + 2 : i + 1);
  }
  return i;
}

const LITERALS = ['true', 'false', 'null'] as const;

/** The index after the scalar at `i` (string, number, literal), or -1. */
function skipScalar(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return skipString(text, i);
  if (c === MINUS || isDigit(c)) return skipNumber(text, i);
  for (const literal of LITERALS) if (text.startsWith(literal, i)) return i + literal.length;
  return -1;
}

/** The index of the value after the member name at `i` and its colon, or -1. */
function skipName(text: string, i: number): number {
  if (text.charCodeAt(i) !== QUOTE) return -1;
  const end = skipString(text, i);
  if (end < 0) return -1;
  i = skipSpace(text, end);
  return text.charCodeAt(i) === COLON ? skipSpace(text, i + 1) : -1;
}

/** The kind of the valid JSON value that starts with `c`. */
function kindOf(c: number): JsonShape['kind'] {
  if (c === OPEN_OBJECT) return 'object';
  if (c === OPEN_ARRAY) return 'array';
  if (c === QUOTE) return 'string';
  if (c === 0x74 /* t */ || c === 0x66 /* f */) return 'boolean';
  return c === 0x6e /* n */ ? 'null' : 'number';
}

/**
 * Internal: the shape of the JSON text `text`, or `undefined` when
 * `JSON.parse` would throw for it. Nesting is walked with an explicit stack,
 * so no depth overflows it; `maxDepth` stops the walk early (the text is then
 * reported as that deep, not read to its end: the caller refuses it anyway).
 *
 * @example
 * ```ts
 * import { scanJson } from './json-scan.js';
 *
 * scanJson('{"a":[1,2]}', 64); // { kind: 'object', depth: 2 }
 * scanJson('{"a":1,}', 64); // undefined
 * ```
 */
export function scanJson(text: string, maxDepth: number): JsonShape | undefined {
  const open: number[] = [];
  let depth = 0;
  let i = skipSpace(text, 0);
  const kind = kindOf(text.charCodeAt(i));
  for (;;) {
    // A value starts at i.
    const c = text.charCodeAt(i);
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      open.push(c);
      depth = Math.max(depth, open.length);
      if (depth > maxDepth) return { kind, depth };
      i = skipSpace(text, i + 1);
      if (text.charCodeAt(i) !== (c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        i = c === OPEN_OBJECT ? skipName(text, i) : i;
        if (i < 0) return undefined;
        continue;
      }
      open.pop();
      i++;
    } else {
      i = skipScalar(text, i);
      if (i < 0) return undefined;
    }
    // After a value: close what ends here, then a comma leads to the next value.
    for (;;) {
      i = skipSpace(text, i);
      const container = open[open.length - 1];
      if (container === undefined) return i === text.length ? { kind, depth } : undefined;
      const next = text.charCodeAt(i);
      if (next === COMMA) {
        i = skipSpace(text, i + 1);
        if (container === OPEN_OBJECT) i = skipName(text, i);
        if (i < 0) return undefined;
        break;
      }
      if (next !== (container === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) return undefined;
      open.pop();
      i++;
    }
  }
}
