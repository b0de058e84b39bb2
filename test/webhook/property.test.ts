import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseWebhook, safeParseWebhook } from '../../src/webhook/parse.js';

const validDelivery = fc.record(
  {
    id: fc.tuple(fc.string({ minLength: 1 }), fc.constantFrom('_DEBIT', '_CREDIT', '')).map(([a, b]) => a + b),
    transactionId: fc.string({ minLength: 1 }),
    status: fc.oneof(
      fc.constantFrom('SUCCEEDED', 'success', 'Succeeded', 'failed', 'FAILED', 'processing'),
      fc.string(),
    ),
    amount: fc.double({ noNaN: true, noDefaultInfinity: true }),
    fields: fc.dictionary(fc.string(), fc.string()),
    transactionDate: fc.nat(),
    requestDate: fc.nat(),
    clientId: fc.string(),
    service: fc.record({ id: fc.string() }),
    extraKey: fc.jsonValue(),
  },
  { requiredKeys: ['id', 'transactionId', 'status', 'amount', 'fields', 'transactionDate'] },
);

describe('safeParseWebhook on arbitrary input', () => {
  it('never throws on arbitrary JSON values, as values or as text', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        for (const input of [value, JSON.stringify(value)]) {
          const result = safeParseWebhook(input as object);
          if (!result.success) {
            expect(['INVALID_BODY', 'INVALID_PAYLOAD']).toContain(result.error.code);
            expect(result.error.issues.length).toBeGreaterThan(0);
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('never throws on arbitrary objects, including hostile keys, and never pollutes prototypes', () => {
    const key = fc.oneof(
      fc.string(),
      fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'id', 'fields', 'amount'),
    );
    fc.assert(
      fc.property(fc.object({ key, values: [fc.jsonValue(), fc.anything()] }), (value) => {
        const result = safeParseWebhook(value);
        expect(typeof result.success).toBe('boolean');
        expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
      }),
      { numRuns: 500 },
    );
  });

  it('never throws on arbitrary values of any type', () => {
    fc.assert(
      fc.property(
        fc.anything({
          withBigInt: true,
          withDate: true,
          withMap: true,
          withSet: true,
          withTypedArray: true,
          withSparseArray: true,
          withNullPrototype: true,
        }),
        (value) => {
          expect(typeof safeParseWebhook(value as object).success).toBe('boolean');
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never throws on arbitrary text and bytes', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.uint8Array()), (value) => {
        expect(typeof safeParseWebhook(value).success).toBe('boolean');
      }),
      { numRuns: 500 },
    );
  });

  it('parses any well-formed delivery and round-trips its values', () => {
    fc.assert(
      fc.property(validDelivery, (delivery) => {
        const text = JSON.stringify(delivery);
        const webhook = parseWebhook(text);
        const reparsed = JSON.parse(text) as typeof delivery;
        expect(webhook.id).toBe(reparsed.id);
        expect(webhook.transactionId).toBe(reparsed.transactionId);
        expect(webhook.rawStatus).toBe(reparsed.status);
        expect(webhook.amount).toBe(reparsed.amount);
        expect(webhook.transactionDate).toBe(reparsed.transactionDate);
        expect({ ...webhook.fields }).toEqual(reparsed.fields);
        expect(webhook.operation).toBe(
          reparsed.id.endsWith('_DEBIT') ? 'DEBIT' : reparsed.id.endsWith('_CREDIT') ? 'CREDIT' : 'UNKNOWN',
        );
      }),
      { numRuns: 300 },
    );
  });

  it('reports a failure for every required field removed from a valid delivery', () => {
    const required = ['id', 'transactionId', 'status', 'amount', 'fields', 'transactionDate'] as const;
    fc.assert(
      fc.property(validDelivery, fc.subarray([...required], { minLength: 1 }), (delivery, removed) => {
        const value: Record<string, unknown> = { ...delivery };
        for (const key of removed) delete value[key];
        const result = safeParseWebhook(value);
        expect(result.success).toBe(false);
        if (!result.success)
          expect(result.error.issues.map((issue) => issue.path)).toEqual(
            required.filter((key) => removed.includes(key)),
          );
      }),
      { numRuns: 200 },
    );
  });
});
