// payhook/testing's options take an explicit `undefined` wherever a missing
// option means the default, also in a merchant's project compiled with
// exactOptionalPropertyTypes (as this one is: test/tsconfig.json extends the
// root tsconfig, which sets it). Each call below fails the type check if an
// option it passes as `T | undefined` is refused.
import { describe, expectTypeOf, it } from 'vitest';
import {
  createTestWebhook,
  generateTestKeyPair,
  signWebhook,
  type GenerateTestKeyPairOptions,
  type PrivateKeyInput,
  type SignWebhookOptions,
  type TestWebhookOverrides,
  type TestWebhookVariant,
} from '../../src/testing/index.js';

declare const maybeTimestamp: number | undefined;
declare const maybeKey: PrivateKeyInput | undefined;
declare const maybeString: string | undefined;
declare const maybeHeaders: Record<string, string> | undefined;
declare const maybeNumber: number | undefined;
declare const maybeVariant: TestWebhookVariant | undefined;
declare const maybeNow: Date | undefined;
declare const maybeFields: Record<string, unknown> | undefined;

describe('options under exactOptionalPropertyTypes', () => {
  it('this file is compiled with exactOptionalPropertyTypes', () => {
    // @ts-expect-error an optional property that does not declare undefined refuses it under the flag
    const sentinel: { value?: string } = { value: undefined };
    expectTypeOf(sentinel).toEqualTypeOf<{ value?: string }>();
  });

  it('signWebhook takes undefined for every option with a default', async () => {
    const url = 'https://shop.example.kg/webhooks/payments';
    await signWebhook({}, { url, timestamp: maybeTimestamp });
    await signWebhook({}, { url, privateKey: maybeKey, host: maybeString, method: maybeString, headers: maybeHeaders });
    expectTypeOf<{ url: string; timestamp: undefined; headers: undefined }>().toExtend<SignWebhookOptions>();
  });

  it('createTestWebhook takes undefined for every declared override', () => {
    createTestWebhook({ variant: maybeVariant, status: maybeString, amount: maybeNumber, now: maybeNow });
    createTestWebhook({ transactionId: maybeString, id: maybeString, fields: maybeFields, webhookUrl: maybeString });
    expectTypeOf<{ variant: undefined; now: undefined }>().toExtend<TestWebhookOverrides>();
  });

  it('generateTestKeyPair takes undefined for modulusLength', async () => {
    await generateTestKeyPair({ modulusLength: maybeNumber });
    expectTypeOf<{ modulusLength: undefined }>().toExtend<GenerateTestKeyPairOptions>();
  });
});
