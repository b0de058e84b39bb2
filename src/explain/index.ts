/**
 * The `payhook/explain` entry: why a delivery's signature does not verify,
 * and the fix. `diagnose.ts` runs the diagnosis over the signed target that
 * verifyWebhook checks; `candidates.ts`, `keys.ts` and `search.ts` decide
 * what is tried; `fixes.ts` words the finding; `hook.ts` makes it a
 * rate-limited handler hook.
 *
 * @module
 */
export { explainVerificationFailure } from './diagnose.js';
export { explainSignatureMismatch } from './hook.js';
export type { ExplainHookOptions } from './hook.js';
export type { DiagnosisChange, ExplainOptions, ExplainRequest, VerificationDiagnosis } from './types.js';
