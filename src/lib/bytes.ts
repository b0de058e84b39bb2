/**
 * Small byte arrays for the verify path, cut from a shared block.
 *
 * Each delivery needs two short-lived arrays (the signature and the
 * canonical string's UTF-8), and allocating an `ArrayBuffer` that small
 * costs more than filling it (about 1.4 µs each in V8, where it is a
 * separate allocation outside the JavaScript heap). So they are cut from a
 * 64 KiB block instead, as Node's `Buffer` pool does. A region is handed out
 * once and never written again, so what a caller keeps (or what a Web Crypto
 * job still reads) stays as it was; a block is garbage once no region of it
 * is referenced.
 *
 * @module
 */

const BLOCK_BYTES = 65_536;
let block = new Uint8Array(0);
let used = 0;
let encoder: TextEncoder | undefined;

/**
 * `length` bytes of their own (callers fill them).
 *
 * @example
 * ```ts
 * import { allot } from './bytes.js';
 *
 * const bytes = allot(256); // a Uint8Array of 256 bytes no other call gets
 * ```
 */
export function allot(length: number): Uint8Array {
  if (block.length - used < length) {
    block = new Uint8Array(Math.max(BLOCK_BYTES, length));
    used = 0;
  }
  return block.subarray(used, (used += length));
}

/**
 * The UTF-8 bytes of `text`, in a region of their own.
 *
 * @example
 * ```ts
 * import { utf8 } from './bytes.js';
 *
 * utf8('é'); // Uint8Array [195, 169]
 * ```
 */
export function utf8(text: string): Uint8Array {
  // Every UTF-16 unit is at most 3 UTF-8 bytes; the unused tail goes back.
  const region = allot(text.length * 3);
  const { written } = (encoder ??= new TextEncoder()).encodeInto(text, region);
  used -= region.length - written;
  return region.subarray(0, written);
}
