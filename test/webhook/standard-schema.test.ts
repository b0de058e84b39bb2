import { describe, expect, it } from 'vitest';
import { createWebhookSchema, webhookSchema, type StandardSchemaV1 } from '../../src/webhook/standard-schema.js';

const delivery = {
  id: 't-1_DEBIT',
  transactionId: 't-1',
  status: 'success',
  amount: 100,
  fields: { amount: 100, paymentId: 'order-17', 'field-0': 'x' },
  transactionDate: 1763712345000,
};

// A generic consumer, as a validator-aware framework would call any Standard Schema.
async function validateWith<T>(schema: StandardSchemaV1<unknown, T>, value: unknown) {
  return schema['~standard'].validate(value);
}

describe('webhookSchema (Standard Schema v1)', () => {
  it('declares version 1 and the payhook vendor', () => {
    expect(webhookSchema['~standard'].version).toBe(1);
    expect(webhookSchema['~standard'].vendor).toBe('payhook');
    expect(typeof webhookSchema['~standard'].validate).toBe('function');
  });

  it('returns the typed webhook as value for a valid delivery (object or text)', async () => {
    for (const input of [delivery, JSON.stringify(delivery)]) {
      const result = await validateWith(webhookSchema, input);
      expect(result.issues).toBeUndefined();
      if (result.issues === undefined) {
        expect(result.value.status).toBe('SUCCEEDED');
        expect(result.value.fields.paymentId).toBe('order-17');
      }
    }
  });

  it('validates synchronously', () => {
    const result = webhookSchema['~standard'].validate(delivery);
    expect(result).not.toBeInstanceOf(Promise);
  });

  it('returns issues with key paths for an invalid delivery', () => {
    expect(webhookSchema['~standard'].validate({ ...delivery, amount: 'x', fields: [] }).issues).toEqual([
      { message: 'expected number, got string', path: ['amount'] },
      { message: 'expected object, got array', path: ['fields'] },
    ]);
    const result = createWebhookSchema({ strict: true })['~standard'].validate({
      ...delivery,
      requestDate: 1763712340000,
      amount: '100',
      fields: { amount: 'x', 'field-0': 1 },
      service: {},
    });
    expect(result.issues).toEqual([
      { message: 'expected number, got string', path: ['amount'] },
      { message: 'expected number, got string', path: ['fields', 'amount'] },
      { message: 'expected string, got number', path: ['fields', 'field-0'] },
      { message: 'expected string, but it is missing', path: ['service', 'id'] },
    ]);
  });

  it('returns one path-less issue for a value that is not an object', () => {
    for (const value of [null, 42, [], 'not json', '"text"']) {
      const result = webhookSchema['~standard'].validate(value);
      expect(result.issues).toHaveLength(1);
      expect(result.issues?.[0]?.path).toBeUndefined();
      expect(result.issues?.[0]?.message).toMatch(/^The body/);
    }
  });

  it('accepts what the lenient parse accepts, noting the deviations on the value', () => {
    const result = webhookSchema['~standard'].validate({
      ...delivery,
      fields: { amount: 'x', 'field-0': 1 },
      service: {},
    });
    if (result.issues !== undefined) throw new Error('expected a value');
    expect(result.value.fields['field-0']).toBe(1);
    expect(result.value.fields.amount).toBeUndefined();
    expect(result.value.service).toBeUndefined();
    expect(result.value.deviations.map((issue) => issue.path)).toEqual([
      'fields.amount',
      'fields["field-0"]',
      'service.id',
    ]);
  });

  it('is lenient about requestDate; createWebhookSchema({ strict: true }) is not', () => {
    expect(webhookSchema['~standard'].validate(delivery).issues).toBeUndefined();
    const strict = createWebhookSchema({ strict: true });
    expect(strict['~standard'].validate(delivery).issues).toEqual([
      { message: 'expected integer milliseconds, but it is missing', path: ['requestDate'] },
    ]);
    expect(strict['~standard'].validate({ ...delivery, requestDate: 1763712340000 }).issues).toBeUndefined();
  });
});
