// What a failed verification carries is told by its code: `issues` exactly for INVALID_PAYLOAD, which a
// check of the code narrows to. Each line fails the type check if that stops holding.
import { describe, expectTypeOf, it } from 'vitest';
import type { InvalidPayloadDelivery } from '../src/handler/hooks.js';
import type { PayhookIssue } from '../src/lib/errors.js';
import type { VerifyWebhookError } from '../src/verify-webhook.js';

declare const error: VerifyWebhookError;
declare const delivery: InvalidPayloadDelivery;

describe('VerifyWebhookError', () => {
  it('narrows to its issues by its code', () => {
    if (error.code === 'INVALID_PAYLOAD') expectTypeOf(error.issues).toEqualTypeOf<readonly PayhookIssue[]>();
    else expectTypeOf(error.issues).toEqualTypeOf<undefined>();
    // Unnarrowed, reading them still compiles (what `error.issues ?? []` relies on).
    expectTypeOf(error.issues).toEqualTypeOf<readonly PayhookIssue[] | undefined>();
  });

  it('has no INVALID_PAYLOAD without issues, and no issues on another code', () => {
    // @ts-expect-error -- an INVALID_PAYLOAD always says what was not understood
    const bare: VerifyWebhookError = { code: 'INVALID_PAYLOAD', message: 'no' };
    // @ts-expect-error -- only a payload's problems have paths
    const stray: VerifyWebhookError = { code: 'SIGNATURE_MISMATCH', message: 'no', issues: [] };
    expectTypeOf([bare, stray]).toBeArray();
  });

  it('hands deadLetter and onInvalidPayload the issues, always', () => {
    expectTypeOf(delivery.issues).toEqualTypeOf<readonly PayhookIssue[]>();
  });
});
