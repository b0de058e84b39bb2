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

  it('reports a failure for every required field removed from a valid delivery (strict)', () => {
    const required = ['id', 'transactionId', 'status', 'amount', 'fields', 'transactionDate'] as const;
    fc.assert(
      fc.property(validDelivery, fc.subarray([...required], { minLength: 1 }), (delivery, removed) => {
        const value: Record<string, unknown> = { requestDate: 1, ...delivery };
        for (const key of removed) delete value[key];
        const result = safeParseWebhook(value, { strict: true });
        expect(result.success).toBe(false);
        if (!result.success)
          expect(result.error.issues.map((issue) => issue.path)).toEqual(
            required.filter((key) => removed.includes(key)),
          );
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a delivery with a field removed only when CONTRACT §4 does, and notes the rest (lenient)', () => {
    const required = ['id', 'transactionId', 'status', 'amount', 'fields', 'transactionDate'] as const;
    const fatal: readonly string[] = ['id', 'transactionId', 'status', 'amount'];
    fc.assert(
      fc.property(validDelivery, fc.subarray([...required], { minLength: 1 }), (delivery, removed) => {
        const value: Record<string, unknown> = { ...delivery };
        for (const key of removed) delete value[key];
        const result = safeParseWebhook(value);
        const refused = removed.filter((key) => fatal.includes(key));
        if (refused.length > 0) {
          if (result.success) throw new Error('expected a failure');
          expect(result.error.issues.map((issue) => issue.path)).toEqual(
            required.filter((key) => refused.includes(key)),
          );
        } else {
          if (!result.success) throw result.error;
          expect(result.webhook.deviations.map((issue) => issue.path)).toEqual(removed);
        }
      }),
      { numRuns: 200 },
    );
  });
});

/** Any JSON-ish value for a field, biased towards the shapes the rules distinguish. */
const anyValue = fc.oneof(
  fc.constantFrom(undefined, null, '', 'x', '100', '99.90', '-5', '1e2', ' 7', '.5', true, 0, -1, 1.5, {}, []),
  fc.string(),
  fc.double(),
  fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.object())),
);

/** CONTRACT §4, written out on its own: does it refuse this object? */
function contractRefuses(value: Record<string, unknown>): boolean {
  const text = (key: string) => typeof value[key] === 'string';
  const amount = value['amount'];
  // Text is refused at the top level, as the service's conformance vector signed-amount-string says.
  const amountOk = Number.isFinite(amount);
  const fields = value['fields'];
  const fieldsOk = fields === undefined || (typeof fields === 'object' && fields !== null && !Array.isArray(fields));
  return !(text('id') && text('transactionId') && text('status') && amountOk && fieldsOk);
}

describe('the lenient rule (CONTRACT §4) over arbitrary objects', () => {
  const candidate = fc.record(
    {
      id: anyValue,
      transactionId: anyValue,
      status: anyValue,
      amount: anyValue,
      fields: anyValue,
      transactionDate: anyValue,
      requestDate: anyValue,
      net: anyValue,
      service: anyValue,
      data: anyValue,
      unknownKey: anyValue,
    },
    { requiredKeys: [] },
  );

  it('refuses exactly what the contract refuses, and a strict success is a lenient one without deviations', () => {
    fc.assert(
      fc.property(candidate, (value) => {
        const lenient = safeParseWebhook(value);
        expect(lenient.success).toBe(!contractRefuses(value));
        const strict = safeParseWebhook(value, { strict: true });
        if (strict.success) {
          if (!lenient.success) throw lenient.error;
          expect(lenient.webhook.deviations).toEqual([]);
          expect(lenient.webhook).toEqual(strict.webhook);
        }
        if (lenient.success) {
          // Every typed value is of its type; anything else stays in raw.
          expect(Number.isFinite(lenient.webhook.amount)).toBe(true);
          expect(lenient.webhook.raw).toBe(value);
          expect(lenient.webhook.rawAmount).toBe(value.amount);
          const { transactionDate } = lenient.webhook;
          expect(transactionDate === undefined || Number.isSafeInteger(transactionDate)).toBe(true);
          for (const entry of Object.values(lenient.webhook.fields)) {
            expect(entry === null || ['string', 'number', 'boolean'].includes(typeof entry)).toBe(true);
          }
          if (lenient.webhook.fields.amount !== undefined) {
            expect(Number.isFinite(lenient.webhook.fields.amount)).toBe(true);
          }
          if ('unknownKey' in value) expect(lenient.webhook.extra['unknownKey']).toBe(value.unknownKey);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
