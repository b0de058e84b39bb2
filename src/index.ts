export { buildCanonicalString } from './canonical.js';
export type { CanonicalRequest } from './canonical.js';
export { captureDelivery } from './capture.js';
export type { CaptureInput, CaptureOptions, CapturedDelivery } from './capture.js';
export { createMemoryStore } from './dedup/memory.js';
export type { MemoryStore, MemoryStoreOptions } from './dedup/memory.js';
export type { ClaimOptions, ClaimResult, CompleteOptions, DedupStore } from './dedup/store.js';
export { PayhookError, isPayhookError } from './errors.js';
export type { PayhookErrorCode, PayhookErrorOptions, PayhookIssue } from './errors.js';
export { checkTimestamp, DEFAULT_TOLERANCE_MS, isTimestampFresh } from './freshness.js';
export type { FreshnessOptions, TimestampCheck } from './freshness.js';
export { clearKeyCache, importPublicKey } from './keys.js';
export type { CryptoKeyLike, KeyInput, KeyOptions, RsaJsonWebKey } from './keys.js';
export type { BodyInput, HeadersInput, HeadersLike, QueryInput, SearchParamsLike } from './request.js';
export { BETA_PUBLIC_KEY, PRODUCTION_PUBLIC_KEY, SERVICE_PUBLIC_KEYS } from './service-keys.js';
export type { ServiceEnvironment } from './service-keys.js';
export { verifySignature } from './signature.js';
export { DEFAULT_MAX_BODY_BYTES, verifyWebhook } from './verify-webhook.js';
export type {
  VerifyWebhookError,
  VerifyWebhookErrorCode,
  VerifyWebhookOptions,
  VerifyWebhookResult,
  WebhookRequest,
  WebhookUrlOption,
  WebhookUrlRequest,
} from './verify-webhook.js';
export { isParked, park } from './park.js';
export type { Parked } from './park.js';
export { retryDelay, retryOffset, retrySchedule } from './retry.js';
export type { ScheduledRetry } from './retry.js';
export { parseServiceError, SERVICE_STATUS_CODES, serviceStatus } from './service-status.js';
export type {
  KnownServiceError,
  ServiceError,
  ServiceStatusCode,
  ServiceStatusInfo,
  UnknownServiceError,
} from './service-status.js';
export { amountMatches, toMinorUnits } from './order/amount.js';
export { orderReference } from './order/reference.js';
export type { OrderReferenceOptions } from './order/reference.js';
export { shouldApplyStatus } from './order/state.js';
export { isFinalStatus, normaliseStatus } from './status.js';
export type { PaymentStatus } from './status.js';
export { parseWebhook, safeParseWebhook } from './webhook/parse.js';
export type { SafeParseWebhookResult, WebhookBody, WebhookParseError } from './webhook/parse.js';
export { createWebhookSchema, webhookSchema } from './webhook/standard-schema.js';
export type {
  StandardSchemaIssue,
  StandardSchemaPathSegment,
  StandardSchemaResult,
  StandardSchemaV1,
  WebhookSchema,
} from './webhook/standard-schema.js';
export type {
  CanceledPaymentWebhook,
  FailedPaymentWebhook,
  ParseWebhookOptions,
  PaymentOperation,
  PaymentWebhook,
  PaymentWebhookBase,
  PaymentWebhookWithStatus,
  PendingPaymentWebhook,
  ProcessingPaymentWebhook,
  SucceededPaymentWebhook,
  UnknownStatusPaymentWebhook,
} from './webhook/types.js';
export type {
  KnownWebhookFields,
  WebhookData,
  WebhookFields,
  WebhookFieldValue,
  WebhookItem,
  WebhookService,
} from './webhook/fields.js';
