// Misconfigurations the compiler catches: a handler needs keys (environment
// or publicKeys) and a host policy (webhookUrl, or allowAnyHost: true). Each
// expected-error directive below fails the type check if the options it marks compile.
import { describe, expectTypeOf, it } from 'vitest';
import { createNodeWebhookHandler, type NodeWebhookHandler } from '../../src/node/index.js';
import { park } from '../../src/park.js';
import type { SucceededPaymentWebhook } from '../../src/webhook/types.js';
import { createWebhookHandler, type WebhookHandler } from '../../src/web/index.js';

const onPayment = async (): Promise<void> => {};
const webhookUrl = 'https://shop.example.kg/webhooks/payments';
declare const pem: string;
declare const someFlag: boolean;
declare const queue: { publish(message: unknown): Promise<string> };
declare const db: { insert(row: object): Promise<{ rowCount: number }> };
declare const handled: string[];

describe('handler options', () => {
  it('accept keys by environment or by publicKeys, with webhookUrl or allowAnyHost: true', () => {
    expectTypeOf(
      createWebhookHandler({ environment: 'production', webhookUrl, onPayment }),
    ).toEqualTypeOf<WebhookHandler>();
    expectTypeOf(
      createNodeWebhookHandler({ publicKeys: pem, allowAnyHost: true, onPayment }),
    ).toEqualTypeOf<NodeWebhookHandler>();
    createWebhookHandler({ environment: ['production'], publicKeys: [pem], webhookUrl, onPayment });
    createWebhookHandler({ publicKeys: pem, webhookUrl, allowAnyHost: false, onPayment });
    createWebhookHandler({ environment: 'beta', allowAnyHost: true, webhookUrl, onPayment });
  });

  it('refuse options without keys', () => {
    // @ts-expect-error neither environment nor publicKeys
    createWebhookHandler({ webhookUrl, onPayment });
    // @ts-expect-error neither environment nor publicKeys
    createNodeWebhookHandler({ allowAnyHost: true, onPayment });
  });

  it('refuse options without a host policy', () => {
    // @ts-expect-error neither webhookUrl nor allowAnyHost: true
    createWebhookHandler({ environment: 'production', onPayment });
    // @ts-expect-error allowAnyHost: false is no opt-in
    createNodeWebhookHandler({ publicKeys: pem, allowAnyHost: false, onPayment });
    // @ts-expect-error a boolean that may be false is no opt-in either
    createWebhookHandler({ publicKeys: pem, allowAnyHost: someFlag, onPayment });
    // @ts-expect-error trusting X-Forwarded-Host does not pin the host
    createNodeWebhookHandler({ environment: 'production', trustForwardedHeaders: true, onPayment });
  });

  it('refuse options without onPayment', () => {
    // @ts-expect-error onPayment is required
    createWebhookHandler({ environment: 'production', webhookUrl });
  });

  it('take an onPayment that returns anything: park(...) parks, any other result or none means applied', () => {
    createWebhookHandler({ environment: 'production', webhookUrl, onPayment: () => {} });
    createWebhookHandler({ environment: 'production', webhookUrl, onPayment: () => park('unknown order') });
    createNodeWebhookHandler({
      environment: 'production',
      webhookUrl,
      onPayment: (webhook) =>
        Promise.resolve(webhook.amount > 100 ? park('amount differs', { amount: webhook.amount }) : undefined),
    });
    // Concise hand-offs that return what their call resolves with: a queue's message id, an inserted row.
    createWebhookHandler({ environment: 'production', webhookUrl, onPayment: (webhook) => queue.publish(webhook.raw) });
    createNodeWebhookHandler({
      environment: 'production',
      webhookUrl,
      onPayment: async (webhook) => db.insert({ id: webhook.id, status: webhook.status }),
    });
    createWebhookHandler({ environment: 'production', webhookUrl, onPayment: (webhook) => handled.push(webhook.id) });
  });

  it('refuse an onPayment that takes only some statuses: it is given every delivery', () => {
    // A merchant's fulfilment function, passed as it is: a FAILED delivery would reach it too.
    const fulfil = (webhook: SucceededPaymentWebhook): Promise<void> => {
      expectTypeOf(webhook.status).toEqualTypeOf<'SUCCEEDED'>();
      return Promise.resolve();
    };
    // @ts-expect-error onPayment receives every status, not only SUCCEEDED
    createWebhookHandler({ environment: 'production', webhookUrl, onPayment: fulfil });
    createNodeWebhookHandler({
      environment: 'production',
      webhookUrl,
      // @ts-expect-error the same written inline
      onPayment: (webhook: SucceededPaymentWebhook) => {
        void webhook;
      },
    });
    // A method in the options object literal still takes the webhook from the option's type.
    createWebhookHandler({
      environment: 'production',
      webhookUrl,
      onPayment(webhook) {
        return webhook.status === 'UNKNOWN' ? park('unknown status') : undefined;
      },
    });
  });

  it('take hooks that return anything, as a query or a publish does', () => {
    createWebhookHandler({
      environment: 'production',
      webhookUrl,
      onPayment,
      deadLetter: (delivery) => db.insert({ reason: delivery.message }),
      onError: (error) => queue.publish(error.code),
      onDuplicate: (duplicate) => handled.push(duplicate.key),
      onInvalidPayload: (delivery) => db.insert({ reason: delivery.message }),
      onSignatureMismatch: (_request, { capture }) => queue.publish(capture),
    });
  });
});
