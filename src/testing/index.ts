/**
 * `payhook/testing`: test keys, realistic deliveries of every variant, and
 * signing exactly as the service signs, so a merchant can test an endpoint
 * without the service; `captureDelivery` saves a failing delivery for
 * `payhook verify`. Web Crypto only; runs on every runtime payhook does.
 *
 * @module
 */
export { captureDelivery } from '../capture.js';
export type { CaptureInput, CaptureOptions, CapturedDelivery } from '../capture.js';
export { createTestWebhook, TEST_WEBHOOK_VARIANTS } from './deliveries.js';
export type { TestWebhookBody, TestWebhookOverrides, TestWebhookVariant } from './deliveries.js';
export type { PrivateKeyInput } from './private-key.js';
export { sendWebhook, signWebhook, toRequest } from './sign.js';
export type { SignedWebhook, SignWebhookOptions } from './sign.js';
export { generateTestKeyPair, TEST_KEY_PAIR } from './test-keys.js';
export type { GenerateTestKeyPairOptions, TestKeyPair } from './test-keys.js';
