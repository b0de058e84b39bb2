/**
 * The public face of payhook's errors: the class, its code union and the
 * cross-realm guard. They are declared in `lib/errors.ts` so that internals
 * can throw them without importing the public layer.
 *
 * @module
 */
export { isPayhookError, PayhookError } from './lib/errors.js';
export type { PayhookErrorCode, PayhookErrorOptions, PayhookIssue } from './lib/errors.js';
