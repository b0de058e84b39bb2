import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { orderReference } from '../../src/order/reference.js';
import { parseWebhook } from '../../src/webhook/parse.js';
import { fixtures } from '../conformance/fixtures.js';

const delivery = (extra: Record<string, unknown>) =>
  parseWebhook({ id: 'a_DEBIT', transactionId: 'tx-1', status: 'SUCCEEDED', amount: 100, ...extra });

describe('orderReference', () => {
  it.each([undefined, null])('throws INVALID_ARGUMENT for no webhook (%j: a failed result has none)', (none) => {
    expect(() => orderReference(none as never)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });

  it('throws INVALID_ARGUMENT for fieldIds that are not an array of text, never reading a string letter by letter', () => {
    const webhook = delivery({ fields: { o: 'another order', orderId: 'ord-1' } });
    for (const fieldIds of ['orderId', [1], { 0: 'orderId' }]) {
      expect(() => orderReference(webhook, { fieldIds: fieldIds as never })).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
    }
    expect(orderReference(webhook, { fieldIds: ['orderId'] })).toBe('ord-1');
  });

  it('reads fields.paymentId, the PaymentId passed to POST /v1/payment (spec §2.2)', () => {
    expect(orderReference(delivery({ fields: { paymentId: 'order-17', orderId: 'other' } }))).toBe('order-17');
  });

  it('reads the paymentId of every valid conformance delivery', () => {
    const valid = fixtures.requests.filter((vector) => vector.expect['ok'] === true);
    expect(valid.length).toBeGreaterThan(30);
    for (const vector of valid) {
      const raw = JSON.parse(vector.request.body) as { fields: { paymentId: string } };
      expect(orderReference(parseWebhook(vector.request.body)), vector.name).toBe(raw.fields.paymentId);
    }
  });

  it('gives a numeric paymentId as its text (a merchant field may come back as a number)', () => {
    expect(orderReference(delivery({ fields: { paymentId: 17 } }))).toBe('17');
  });

  it('skips a number JSON parsing rounded, which would name another order, and a fraction', () => {
    // 9007199254740993 parses as 9007199254740992: its text is another order's id.
    const body = (paymentId: string) =>
      `{"id":"a_DEBIT","transactionId":"a","status":"SUCCEEDED","amount":1,"fields":{"paymentId":${paymentId}}}`;
    expect(orderReference(parseWebhook(body('9007199254740993')))).toBeUndefined();
    expect(orderReference(parseWebhook(body('12345678901234567890')))).toBeUndefined();
    expect(orderReference(parseWebhook(body('1e21')))).toBeUndefined();
    expect(orderReference(parseWebhook(body('17.5')))).toBeUndefined();
    expect(orderReference(parseWebhook(body('9007199254740991')))).toBe('9007199254740991');
    expect(orderReference(parseWebhook(body('-42')))).toBe('-42');
    // The next candidate is tried instead.
    expect(
      orderReference(delivery({ fields: { paymentId: 2 ** 60, orderId: 'o' } }), {
        fieldIds: ['paymentId', 'orderId'],
      }),
    ).toBe('o');
  });

  it('falls back to your own field ids, in order, then to data (WEB integrations)', () => {
    const fields = { orderId: 'ord-1', cartId: 'cart-9' };
    expect(orderReference(delivery({ fields }), { fieldIds: ['orderId', 'cartId'] })).toBe('ord-1');
    expect(orderReference(delivery({ fields }), { fieldIds: ['cartId', 'orderId'] })).toBe('cart-9');
    expect(orderReference(delivery({ fields: {}, data: { paymentId: 'web-3' } }))).toBe('web-3');
    expect(orderReference(delivery({ fields: {}, data: { orderId: 42 } }), { fieldIds: ['orderId'] })).toBe('42');
    // fields wins over data.
    expect(
      orderReference(delivery({ fields: { orderId: 'f' }, data: { paymentId: 'd' } }), { fieldIds: ['orderId'] }),
    ).toBe('f');
  });

  it('with fieldIds, tries only those, in order, each in fields then data: paymentId never names another order', () => {
    // An orderId-keyed shop: the PaymentId '42' is another customer's order id there.
    const webhook = delivery({ fields: { paymentId: '42', orderId: '17' } });
    expect(orderReference(webhook, { fieldIds: ['orderId'] })).toBe('17');
    expect(orderReference(webhook, { fieldIds: ['orderId', 'paymentId'] })).toBe('17');
    expect(orderReference(webhook, { fieldIds: ['paymentId', 'orderId'] })).toBe('42');
    expect(orderReference(webhook)).toBe('42');
    // No orderId: unknown order, unless paymentId is listed.
    expect(orderReference(delivery({ fields: { paymentId: '42' } }), { fieldIds: ['orderId'] })).toBeUndefined();
    expect(orderReference(delivery({ fields: { paymentId: '42' } }), { fieldIds: ['orderId', 'paymentId'] })).toBe(
      '42',
    );
    // Each id in fields, then in data, before the next id.
    const web = delivery({ fields: { paymentId: 'p' }, data: { orderId: 'd' } });
    expect(orderReference(web, { fieldIds: ['orderId', 'paymentId'] })).toBe('d');
    // An empty list would never find an order.
    expect(() => orderReference(webhook, { fieldIds: [] })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });

  it('skips empty text, booleans and null, and gives undefined when nothing is left (park: unknown order)', () => {
    const both = { fieldIds: ['paymentId', 'orderId'] };
    expect(orderReference(delivery({ fields: { paymentId: '', orderId: 'o' } }), both)).toBe('o');
    expect(orderReference(delivery({ fields: { paymentId: null } }))).toBeUndefined();
    expect(orderReference(delivery({ fields: { paymentId: true } }))).toBeUndefined();
    expect(orderReference(delivery({}))).toBeUndefined();
    // Never the transaction id, never an inherited key.
    expect(orderReference(delivery({ fields: {} }), { fieldIds: ['transactionId', 'constructor', '__proto__'] })).toBe(
      undefined,
    );
  });

  it('returns the first usable value of the documented order, for any fields and data', () => {
    const value = fc.oneof(fc.string(), fc.double(), fc.maxSafeInteger(), fc.boolean(), fc.constant(null));
    const keys = fc.constantFrom('paymentId', 'orderId', 'cartId', 'other');
    fc.assert(
      fc.property(fc.dictionary(keys, value), fc.dictionary(keys, value), (fields, data) => {
        const webhook = delivery({ fields, data });
        const usable = (v: unknown) => (typeof v === 'string' ? v !== '' : Number.isSafeInteger(v));
        const order = ['orderId', 'paymentId'];
        const candidates: unknown[] = order.flatMap((k) => [webhook.fields[k], webhook.data?.[k]]);
        const first = candidates.find(usable) as string | number | undefined;
        expect(orderReference(webhook, { fieldIds: order })).toBe(first === undefined ? undefined : String(first));
      }),
      { numRuns: 2_000 },
    );
  });
});
