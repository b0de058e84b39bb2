/**
 * Small object helpers shared by the readers of untrusted input.
 *
 * @module
 */

/**
 * An own property's value, `undefined` when the key is only inherited (or
 * absent): `__proto__`, `constructor` and the like never reach the prototype.
 *
 * @example
 * ```ts
 * import { ownValue } from './object.js';
 *
 * ownValue({ id: 'x' }, 'id'); // 'x'
 * ownValue({}, 'constructor'); // undefined
 * ```
 */
export function ownValue(record: object, key: string): unknown {
  return Object.hasOwn(record, key) ? (record as Record<string, unknown>)[key] : undefined;
}
