import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createTestWebhook, TEST_WEBHOOK_VARIANTS, type TestWebhookOverrides } from '../../src/testing/index.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('createTestWebhook', () => {
  it('defaults to a fresh successful 100 debit of the base variant', () => {
    const now = 1763712000000;
    const body = createTestWebhook({ now });
    expect(body.transactionId).toMatch(UUID);
    expect(body.id).toBe(`${body.transactionId}_DEBIT`);
    expect(body.status).toBe('SUCCEEDED');
    expect(body.amount).toBe(100);
    expect(body.fields.amount).toBe(100);
    expect(body.fields.paymentId).toMatch(UUID);
    expect(body.requestDate).toBeLessThan(body.transactionDate);
    expect(body.transactionDate).toBeLessThanOrEqual(now);
    expect(Object.keys(body).sort()).toEqual([
      'amount',
      'fields',
      'id',
      'requestDate',
      'status',
      'transactionDate',
      'transactionId',
    ]);
    expect(createTestWebhook().transactionId).not.toBe(createTestWebhook().transactionId);
  });

  it('builds every variant of spec §2', () => {
    expect(TEST_WEBHOOK_VARIANTS).toEqual(['base', 'card', 'extended', 'signed-body', 'web', 'credit']);
    const card = createTestWebhook({ variant: 'card' });
    expect(card['service']).toEqual({ id: 'VISA' });
    const extended = createTestWebhook({ variant: 'extended' });
    expect(extended).toMatchObject({
      transactionType: 'DEBIT',
      accountId: expect.stringMatching(UUID),
      item: { id: expect.stringMatching(UUID) },
    });
    expect(typeof extended['net']).toBe('number');
    expect(extended['receiptNumber']).toMatch(/^\d{6}$/);
    const signedBody = createTestWebhook({ variant: 'signed-body' });
    expect('requestDate' in signedBody).toBe(false);
    expect(signedBody['clientId']).toMatch(/^client-\d{5}$/);
    expect(Object.keys(signedBody.fields).sort()).toEqual([
      'amount',
      'name',
      'paymentId',
      'qrTransactionId',
      'success_redirect_url',
      'webhook_url',
    ]);
    const web = createTestWebhook({ variant: 'web', amount: 250 });
    expect(web['data']).toMatchObject({ amount: 250, webhookUrl: expect.any(String), name_en: 'shop' });
    const credit = createTestWebhook({ variant: 'credit' });
    expect(credit.id.endsWith('_CREDIT')).toBe(true);
    for (const variant of TEST_WEBHOOK_VARIANTS) {
      expect(JSON.parse(JSON.stringify(createTestWebhook({ variant })))).toEqual(
        expect.objectContaining({ status: 'SUCCEEDED' }),
      );
    }
  });

  it('applies overrides: status, amount (fields follow), ids, fields merged, extra keys, removals', () => {
    const body = createTestWebhook({
      status: 'failed',
      amount: 99.99,
      transactionId: 'tx-1',
      fields: { orderId: 'A-17' },
      clientId: 'client-1',
      requestDate: undefined,
    });
    expect(body).toMatchObject({
      status: 'failed',
      amount: 99.99,
      transactionId: 'tx-1',
      id: 'tx-1_DEBIT',
      clientId: 'client-1',
    });
    expect(body.fields).toMatchObject({ amount: 99.99, orderId: 'A-17' });
    expect('requestDate' in body).toBe(false);
    expect('variant' in body || 'now' in body).toBe(false);
    expect(createTestWebhook({ id: 'op-9', fields: { amount: 5 } })).toMatchObject({
      id: 'op-9',
      amount: 100,
      fields: { amount: 5 },
    });
  });

  it('keeps the default for a declared key given as undefined; a body without one is made by taking it out', () => {
    // A declared key given as undefined (which the option types allow) gets its default.
    const body = createTestWebhook({
      status: undefined,
      amount: undefined,
      transactionId: undefined,
      id: undefined,
      fields: undefined,
      variant: undefined,
      now: undefined,
      webhookUrl: undefined,
    });
    expect(body).toMatchObject({ status: 'SUCCEEDED', amount: 100, fields: { amount: 100 } });
    expect(body.id).toBe(`${body.transactionId}_DEBIT`);
    expect(Object.keys(body).sort()).toEqual(Object.keys(createTestWebhook()).sort());
    // As the README and the TSDoc show it.
    const { status: _status, ...noStatus } = createTestWebhook();
    expect('status' in noStatus).toBe(false);
    expect(noStatus).toHaveProperty('transactionId');
  });

  it('sends null for a declared key as given, never as the default', () => {
    // JavaScript (or a cast) can pass null: a body to test that a null status is refused, not a SUCCEEDED one.
    const body = createTestWebhook({
      status: null,
      amount: null,
      transactionId: null,
      id: null,
    } as unknown as TestWebhookOverrides);
    expect(body).toMatchObject({ status: null, amount: null, transactionId: null, id: null, fields: { amount: null } });
  });

  it('puts the given webhookUrl into the web and signed-body bodies, never as a body field', () => {
    const webhookUrl = 'https://pay.example.kg/hooks/payments?shop=1';
    const web = createTestWebhook({ variant: 'web', webhookUrl });
    expect((web['data'] as { webhookUrl: string }).webhookUrl).toBe(webhookUrl);
    const signedBody = createTestWebhook({ variant: 'signed-body', webhookUrl });
    expect(signedBody.fields['webhook_url']).toBe(webhookUrl);
    expect(signedBody.fields['success_redirect_url']).toBe('https://pay.example.kg/thanks');
    for (const variant of TEST_WEBHOOK_VARIANTS)
      expect(createTestWebhook({ variant, webhookUrl })).not.toHaveProperty('webhookUrl');
    expect(() => createTestWebhook({ webhookUrl: '/hooks' })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });

  it('refuses an unknown variant or a bad clock with INVALID_ARGUMENT', () => {
    expect(() => createTestWebhook({ variant: 'nope' as 'base' })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    expect(() => createTestWebhook({ now: Number.NaN })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });

  it('takes a Date from another realm (a vm context, an iframe) as a Date', () => {
    const body = createTestWebhook({ now: runInNewContext('new Date(1763712000000)') as Date });
    expect(body.transactionDate).toBeLessThanOrEqual(1763712000000);
    expect(body.transactionDate).toBeGreaterThan(1763712000000 - 60_000);
  });
});
