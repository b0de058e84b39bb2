import { describe, expectTypeOf, it } from 'vitest';
import type { PayhookIssue } from '../../src/errors.js';
import { parseWebhook, safeParseWebhook } from '../../src/webhook/parse.js';
import { webhookSchema, type StandardSchemaV1 } from '../../src/webhook/standard-schema.js';
import type {
  CanceledPaymentWebhook,
  FailedPaymentWebhook,
  PaymentWebhook,
  PaymentWebhookWithStatus,
  PendingPaymentWebhook,
  SucceededPaymentWebhook,
} from '../../src/webhook/types.js';
import type { WebhookData, WebhookFieldValue, WebhookItem, WebhookService } from '../../src/webhook/fields.js';

declare const webhook: PaymentWebhook;

describe('PaymentWebhook', () => {
  it('is a union discriminated by the normalised status', () => {
    expectTypeOf(webhook.status).toEqualTypeOf<
      'SUCCEEDED' | 'FAILED' | 'CANCELED' | 'PROCESSING' | 'PENDING' | 'UNKNOWN'
    >();
    expectTypeOf(webhook.rawStatus).toEqualTypeOf<string>();
    expectTypeOf(webhook.operation).toEqualTypeOf<'DEBIT' | 'CREDIT' | 'UNKNOWN'>();
    if (webhook.status === 'SUCCEEDED') {
      expectTypeOf(webhook).toEqualTypeOf<SucceededPaymentWebhook>();
    } else {
      expectTypeOf(webhook.status).toEqualTypeOf<'FAILED' | 'CANCELED' | 'PROCESSING' | 'PENDING' | 'UNKNOWN'>();
    }
    expectTypeOf<PaymentWebhookWithStatus<'FAILED'>>().toEqualTypeOf<FailedPaymentWebhook>();
    expectTypeOf<PaymentWebhookWithStatus<'CANCELED'>>().toEqualTypeOf<CanceledPaymentWebhook>();
    expectTypeOf<PaymentWebhookWithStatus<'PENDING'>>().toEqualTypeOf<PendingPaymentWebhook>();
  });

  it('narrows in a switch, and an exhaustive switch reaches never', () => {
    switch (webhook.status) {
      case 'SUCCEEDED':
        expectTypeOf(webhook.status).toEqualTypeOf<'SUCCEEDED'>();
        break;
      case 'FAILED':
        expectTypeOf(webhook).toEqualTypeOf<FailedPaymentWebhook>();
        break;
      case 'CANCELED':
        expectTypeOf(webhook).toEqualTypeOf<CanceledPaymentWebhook>();
        break;
      case 'PROCESSING':
      case 'PENDING':
      case 'UNKNOWN':
        break;
      default:
        expectTypeOf(webhook).toBeNever();
    }
  });

  it('makes a missing case a compile error in an exhaustive switch', () => {
    function handle(w: PaymentWebhook): string {
      switch (w.status) {
        case 'SUCCEEDED':
          return 'fulfil';
        case 'FAILED':
        case 'CANCELED':
          return 'release';
        case 'PROCESSING':
        case 'PENDING':
          return 'wait';
        // 'UNKNOWN' is missing on purpose.
        default: {
          // @ts-expect-error UnknownStatusPaymentWebhook is not assignable to never
          const unreachable: never = w;
          return unreachable;
        }
      }
    }
    expectTypeOf(handle).returns.toEqualTypeOf<string>();
  });

  it('has required core fields with their types', () => {
    expectTypeOf(webhook.id).toEqualTypeOf<string>();
    expectTypeOf(webhook.transactionId).toEqualTypeOf<string>();
    expectTypeOf(webhook.amount).toEqualTypeOf<number>();
    expectTypeOf(webhook.rawAmount).toEqualTypeOf<number | string>();
    expectTypeOf(webhook.deviations).toEqualTypeOf<readonly PayhookIssue[]>();
    expectTypeOf(webhook.raw).toEqualTypeOf<Readonly<Record<string, unknown>>>();
    expectTypeOf(webhook.extra).toEqualTypeOf<Readonly<Record<string, unknown>>>();
  });

  it('makes transactionDate, requestDate and every optional group optional', () => {
    // The payments gateway sends transactionDate only once the payment is final.
    expectTypeOf(webhook.transactionDate).toEqualTypeOf<number | undefined>();
    expectTypeOf(webhook.requestDate).toEqualTypeOf<number | undefined>();
    expectTypeOf(webhook.service).toEqualTypeOf<WebhookService | undefined>();
    expectTypeOf(webhook.accountId).toEqualTypeOf<string | undefined>();
    expectTypeOf(webhook.item).toEqualTypeOf<WebhookItem | undefined>();
    expectTypeOf(webhook.net).toEqualTypeOf<number | undefined>();
    expectTypeOf(webhook.receiptNumber).toEqualTypeOf<string | undefined>();
    expectTypeOf(webhook.transactionType).toEqualTypeOf<string | undefined>();
    expectTypeOf(webhook.clientId).toEqualTypeOf<string | undefined>();
    expectTypeOf(webhook.data).toEqualTypeOf<WebhookData | undefined>();
    expectTypeOf<PaymentWebhook>().toHaveProperty('service');
    // A required key would make `{}` of that group's keys fail; optional ones accept absence.
    /* eslint-disable @typescript-eslint/no-empty-object-type -- `{}` is the point: an object with none of the keys */
    expectTypeOf<Pick<SucceededPaymentWebhook, 'service' | 'data' | 'requestDate'>>().toMatchTypeOf<{}>();
    expectTypeOf<{}>().toMatchTypeOf<
      Pick<SucceededPaymentWebhook, 'service' | 'data' | 'requestDate' | 'clientId' | 'net'>
    >();
    /* eslint-enable @typescript-eslint/no-empty-object-type */
  });

  it('types fields: amount a number, the other keys and merchant field ids as JSON scalars', () => {
    expectTypeOf<WebhookFieldValue>().toEqualTypeOf<string | number | boolean | null>();
    expectTypeOf(webhook.fields.amount).toEqualTypeOf<number | undefined>();
    expectTypeOf(webhook.fields.paymentId).toEqualTypeOf<WebhookFieldValue | undefined>();
    expectTypeOf(webhook.fields.webhook_url).toEqualTypeOf<WebhookFieldValue | undefined>();
    expectTypeOf(webhook.fields['orderId']).toEqualTypeOf<WebhookFieldValue | undefined>();
    expectTypeOf(webhook.data?.amount).toEqualTypeOf<number | undefined>();
    expectTypeOf(webhook.data?.description).toEqualTypeOf<string | undefined>();
    expectTypeOf(webhook.service?.id).toEqualTypeOf<string | undefined>();
  });

  it('is read-only', () => {
    // @ts-expect-error status is readonly
    webhook.status = 'SUCCEEDED';
    // @ts-expect-error amount is readonly
    webhook.amount = 1;
  });
});

describe('parse functions', () => {
  it('parseWebhook returns the union; safeParseWebhook a result to branch on', () => {
    expectTypeOf(parseWebhook).returns.toEqualTypeOf<PaymentWebhook>();
    expectTypeOf(parseWebhook).parameter(0).toMatchTypeOf<string | object>();
    const result = safeParseWebhook('{}');
    if (result.success) {
      expectTypeOf(result.webhook).toEqualTypeOf<PaymentWebhook>();
    } else {
      expectTypeOf(result.error.code).toEqualTypeOf<'INVALID_BODY' | 'INVALID_PAYLOAD'>();
      expectTypeOf(result.error.issues).toEqualTypeOf<readonly PayhookIssue[]>();
    }
  });

  it('webhookSchema is a Standard Schema whose output is the webhook', () => {
    expectTypeOf(webhookSchema).toMatchTypeOf<StandardSchemaV1<unknown, PaymentWebhook>>();
    const result = webhookSchema['~standard'].validate({});
    if (result.issues === undefined) expectTypeOf(result.value).toEqualTypeOf<PaymentWebhook>();
  });
});

// How validator-aware libraries infer a Standard Schema's output type.
type InferOutput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output'];

describe('Standard Schema inference', () => {
  it('infers PaymentWebhook as the output of webhookSchema', () => {
    expectTypeOf<InferOutput<typeof webhookSchema>>().toEqualTypeOf<PaymentWebhook>();
  });
});
