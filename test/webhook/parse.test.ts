import { describe, expect, it } from 'vitest';
import { isPayhookError, PayhookError } from '../../src/errors.js';
import { parseWebhook, safeParseWebhook, validateWebhookObject } from '../../src/webhook/parse.js';
import type { PaymentWebhook } from '../../src/webhook/types.js';
import { fixtures } from '../conformance/fixtures.js';

const BASE = {
  id: 'a81d8281-120d-4659-87b1-a435147f4ff0_DEBIT',
  transactionId: 'a81d8281-120d-4659-87b1-a435147f4ff0',
  status: 'SUCCEEDED',
  amount: 99.99,
  fields: { amount: 99.99, paymentId: '8f62fe22-e3fd-4836-8f58-365fd2750657', orderId: 'Асель' },
  requestDate: 1764648466800,
  transactionDate: 1764648470315,
};

function body(overrides: Record<string, unknown> = {}, omit: string[] = []): Record<string, unknown> {
  const value: Record<string, unknown> = { ...BASE, ...overrides };
  for (const key of omit) delete value[key];
  return value;
}

const STRICT = { strict: true } as const;

function issuesOf(value: unknown, options?: { strict?: boolean }): Array<{ path: string; message: string }> {
  const result = safeParseWebhook(value as object, options);
  if (result.success) throw new Error('expected a failure');
  expect(result.error.code).toBe('INVALID_PAYLOAD');
  return [...result.error.issues];
}

describe('parseWebhook: the variants of spec §2', () => {
  it('reads the base variant, with every field typed', () => {
    const webhook = parseWebhook(JSON.stringify(BASE));
    expect(webhook.status).toBe('SUCCEEDED');
    expect(webhook.rawStatus).toBe('SUCCEEDED');
    expect(webhook.operation).toBe('DEBIT');
    expect(webhook.id).toBe(BASE.id);
    expect(webhook.transactionId).toBe(BASE.transactionId);
    expect(webhook.amount).toBe(99.99);
    expect(webhook.transactionDate).toBe(1764648470315);
    expect(webhook.requestDate).toBe(1764648466800);
    expect(webhook.fields.amount).toBe(99.99);
    expect(webhook.fields.paymentId).toBe('8f62fe22-e3fd-4836-8f58-365fd2750657');
    expect(webhook.fields['orderId']).toBe('Асель');
    for (const group of [
      'service',
      'accountId',
      'item',
      'net',
      'receiptNumber',
      'transactionType',
      'clientId',
      'data',
    ]) {
      expect(group in webhook, group).toBe(false);
    }
    expect(Object.keys(webhook.extra)).toEqual([]);
  });

  it('reads the credit variant from the _CREDIT suffix', () => {
    const webhook = parseWebhook(body({ id: 't-1_CREDIT', status: 'FAILED' }));
    expect(webhook.operation).toBe('CREDIT');
    expect(webhook.status).toBe('FAILED');
  });

  it('gives UNKNOWN for an id without a known suffix, and matches the suffix exactly', () => {
    expect(parseWebhook(body({ id: 't-1' })).operation).toBe('UNKNOWN');
    expect(parseWebhook(body({ id: 't-1_debit' })).operation).toBe('UNKNOWN');
    expect(parseWebhook(body({ id: 't-1_DEBIT_X' })).operation).toBe('UNKNOWN');
    expect(parseWebhook(body({ id: '_CREDIT' })).operation).toBe('CREDIT');
  });

  it('reads the card-acceptance variant (service VISA, or a generic service id)', () => {
    expect(parseWebhook(body({ service: { id: 'VISA' } })).service).toEqual({ id: 'VISA' });
    expect(parseWebhook(body({ service: { id: 'svc-609' } })).service?.id).toBe('svc-609');
  });

  it('reads the extended variant', () => {
    const webhook = parseWebhook(
      body({
        accountId: 'beb03ae2-330a-4364-839d-4f59ad789621',
        item: { id: '8487187e-d42c-45d7-8753-639d6a78d2b3' },
        net: 98.5,
        receiptNumber: '294593',
        transactionType: 'DEBIT',
      }),
    );
    expect(webhook.accountId).toBe('beb03ae2-330a-4364-839d-4f59ad789621');
    expect(webhook.item).toEqual({ id: '8487187e-d42c-45d7-8753-639d6a78d2b3' });
    expect(webhook.net).toBe(98.5);
    expect(webhook.receiptNumber).toBe('294593');
    expect(webhook.transactionType).toBe('DEBIT');
  });

  it('reads the signed-body variant, which has no requestDate', () => {
    const webhook = parseWebhook(
      body(
        {
          status: 'success',
          clientId: 'client-72294',
          fields: {
            amount: 100,
            paymentId: 'c3057785',
            webhook_url: 'https://shop.example.kg/api/payments/webhook',
            success_redirect_url: 'https://shop.example.kg/thanks',
            name: 'Shop',
            qrTransactionId: 'cd711c67',
          },
        },
        ['requestDate'],
      ),
    );
    expect(webhook.clientId).toBe('client-72294');
    expect(webhook.requestDate).toBeUndefined();
    expect('requestDate' in webhook).toBe(false);
    expect(webhook.fields.webhook_url).toBe('https://shop.example.kg/api/payments/webhook');
    expect(webhook.fields.success_redirect_url).toBe('https://shop.example.kg/thanks');
    expect(webhook.fields.name).toBe('Shop');
    expect(webhook.fields.qrTransactionId).toBe('cd711c67');
    expect(webhook.status).toBe('SUCCEEDED');
    expect(webhook.rawStatus).toBe('success');
  });

  it('reads the WEB variant with its data group, keeping the merchant keys', () => {
    const data = {
      amount: 250,
      accountId: '9dd5cc57',
      description: 'Заказ #7 — доставка',
      webhookUrl: 'https://shop.example.kg/hooks/pay',
      name_en: 'shop',
      'field-6': 'value',
    };
    const webhook = parseWebhook(body({ data }));
    expect({ ...webhook.data }).toEqual(data);
    expect(webhook.data?.description).toBe('Заказ #7 — доставка');
    expect(webhook.data?.['field-6']).toBe('value');
  });

  it('keeps unknown top-level keys in extra and the original object in raw', () => {
    const value = body({ newField: { nested: true }, riskScore: 3 });
    const webhook = parseWebhook(value);
    expect({ ...webhook.extra }).toEqual({ newField: { nested: true }, riskScore: 3 });
    expect(webhook.raw).toBe(value);
    expect('newField' in webhook).toBe(false);
  });

  it('accepts text, UTF-8 bytes, an ArrayBuffer and a parsed object alike', () => {
    const text = JSON.stringify(body({ status: 'failed' }));
    const bytes = new TextEncoder().encode(text);
    const inputs: unknown[] = [text, bytes, bytes.buffer.slice(0), JSON.parse(text)];
    for (const input of inputs) {
      const webhook = parseWebhook(input as object);
      expect(webhook.status).toBe('FAILED');
      expect(webhook.fields['orderId']).toBe('Асель');
    }
  });

  it('normalises every status spelling into the discriminant and keeps rawStatus', () => {
    const cases: Array<[string, PaymentWebhook['status']]> = [
      ['SUCCEEDED', 'SUCCEEDED'],
      ['succeeded', 'SUCCEEDED'],
      ['Succeeded', 'SUCCEEDED'],
      ['success', 'SUCCEEDED'],
      ['SUCCESS', 'SUCCEEDED'],
      [' success\n', 'SUCCEEDED'],
      ['FAILED', 'FAILED'],
      ['failed', 'FAILED'],
      ['Failed', 'FAILED'],
      ['PROCESSING', 'PROCESSING'],
      ['processing', 'PROCESSING'],
      ['refunded', 'UNKNOWN'],
      ['', 'UNKNOWN'],
      ['SUCCEEDEDX', 'UNKNOWN'],
    ];
    for (const [raw, status] of cases) {
      const webhook = parseWebhook(body({ status: raw }));
      expect(webhook.status, raw).toBe(status);
      expect(webhook.rawStatus).toBe(raw);
    }
  });

  it('accepts integer, fractional and exponent amounts as JSON.parse reads them', () => {
    expect(
      parseWebhook(
        '{"id":"a_DEBIT","transactionId":"a","status":"s","amount":1200000e-2,"fields":{"amount":1E2},"transactionDate":1}',
      ).amount,
    ).toBe(12000);
    expect(parseWebhook(body({ amount: 0 })).amount).toBe(0);
  });
});

describe('parseWebhook: the conformance deliveries', () => {
  const valid = fixtures.requests.filter((vector) => vector.expect['ok'] === true);
  // The forged-signature vectors carry the bodies of their INVALID_BODY namesakes.
  const payloadOnly = fixtures.requests.filter(
    (vector) =>
      vector.expect['ok'] === false &&
      !['INVALID_BODY', 'INVALID_PAYLOAD'].includes(vector.expect['code'] as string) &&
      !vector.name.endsWith('-forged-signature'),
  );

  it('has valid deliveries to check', () => {
    expect(valid.length).toBeGreaterThan(30);
  });

  it.each(valid.map((vector) => [vector.name, vector] as const))('parses %s (lenient) as expected', (_name, vector) => {
    const webhook = parseWebhook(vector.request.body);
    expect(webhook.id).toBe(vector.expect['id']);
    expect(webhook.transactionId).toBe(vector.expect['transactionId']);
    expect(webhook.status).toBe(vector.expect['status']);
    expect(webhook.operation).toBe(vector.expect['operation']);
    expect(webhook.amount).toBe(vector.expect['amount']);
    expect(webhook.raw).toEqual(JSON.parse(vector.request.body));
  });

  it('parses the payload of every delivery rejected for signature or time reasons', () => {
    for (const vector of payloadOnly) {
      expect(safeParseWebhook(vector.request.body).success, vector.name).toBe(true);
    }
  });

  it('rejects signed-but-not-a-webhook as INVALID_PAYLOAD, lenient or strict', () => {
    const vector = fixtures.requests.find((candidate) => candidate.name === 'signed-but-not-a-webhook');
    expect(vector).toBeDefined();
    for (const options of [undefined, STRICT]) {
      const result = safeParseWebhook(vector!.request.body, options);
      expect(result.success).toBe(false);
      if (!result.success) expect(result.error.code).toBe('INVALID_PAYLOAD');
    }
  });

  it('refuses the amount text of signed-amount-string, as the service does, but reads it in fields.amount', () => {
    const vector = fixtures.requests.find((candidate) => candidate.name === 'signed-amount-string');
    expect(vector).toBeDefined();
    expect(issuesOf(vector!.request.body)).toEqual([{ path: 'amount', message: 'expected number, got string' }]);
    // A copy of the service's documentation example sends fields.amount as text.
    const webhook = parseWebhook({
      ...(JSON.parse(vector!.request.body) as object),
      amount: 100,
      fields: { amount: '100' },
    });
    expect(webhook.fields.amount).toBe(100);
    expect((webhook.raw['fields'] as Record<string, unknown>)['amount']).toBe('100');
  });

  it.each(['body-not-json', 'body-json-array'])('rejects %s as INVALID_BODY', (name) => {
    const vector = fixtures.requests.find((candidate) => candidate.name === name)!;
    expect(() => parseWebhook(vector.request.body)).toThrowError(expect.objectContaining({ code: 'INVALID_BODY' }));
  });

  it('parses the canonical vectors that carry a webhook body', () => {
    // Every webhook-* and random-* vector carries a delivery of one of the spec §2 variants.
    const webhookBodies = fixtures.canonical.filter((vector) => /^(webhook-|random-)/.test(vector.name));
    expect(webhookBodies.length).toBeGreaterThan(100);
    for (const vector of webhookBodies) {
      expect(typeof vector.request.rawBody, vector.name).toBe('string');
      const result = safeParseWebhook(vector.request.rawBody!);
      expect(result.success, `${vector.name}: ${result.success ? '' : result.error.message}`).toBe(true);
    }
  });
});

describe('validation failures with strict: true, each with its path', () => {
  it('lists every missing required field of an unrelated object', () => {
    expect(issuesOf({ hello: 'world' }, STRICT)).toEqual([
      { path: 'id', message: 'expected non-empty string, but it is missing' },
      { path: 'transactionId', message: 'expected non-empty string, but it is missing' },
      { path: 'status', message: 'expected string, but it is missing' },
      { path: 'amount', message: 'expected number, but it is missing' },
      { path: 'fields', message: 'expected object, but it is missing' },
      { path: 'transactionDate', message: 'expected integer milliseconds, but it is missing' },
      { path: 'requestDate', message: 'expected integer milliseconds, but it is missing' },
    ]);
  });

  it('lists only what CONTRACT §4 refuses when lenient, and notes the rest', () => {
    expect(issuesOf({ hello: 'world' })).toEqual([
      { path: 'id', message: 'expected string, but it is missing' },
      { path: 'transactionId', message: 'expected string, but it is missing' },
      { path: 'status', message: 'expected string, but it is missing' },
      { path: 'amount', message: 'expected number, but it is missing' },
    ]);
    const webhook = parseWebhook({ id: 'a_DEBIT', transactionId: 'a', status: 'PENDING', amount: 5, hello: 'world' });
    expect(webhook.fields).toEqual({});
    expect(webhook.extra).toEqual({ hello: 'world' });
    expect(webhook.deviations).toEqual([
      { path: 'fields', message: 'expected object, but it is missing' },
      { path: 'transactionDate', message: 'expected integer milliseconds, but it is missing' },
    ]);
  });

  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['empty id', { id: '' }, 'id', 'expected non-empty string, got empty string'],
    ['numeric id', { id: 7 }, 'id', 'expected non-empty string, got number'],
    ['null transactionId', { transactionId: null }, 'transactionId', 'expected non-empty string, got null'],
    ['empty transactionId', { transactionId: '' }, 'transactionId', 'expected non-empty string, got empty string'],
    ['numeric status', { status: 1 }, 'status', 'expected string, got number'],
    ['null status', { status: null }, 'status', 'expected string, got null'],
    ['amount as a numeric string', { amount: '100' }, 'amount', 'expected number, got string'],
    ['amount NaN', { amount: Number.NaN }, 'amount', 'expected number, got NaN'],
    ['amount Infinity', { amount: Number.POSITIVE_INFINITY }, 'amount', 'expected number, got Infinity'],
    ['amount null', { amount: null }, 'amount', 'expected number, got null'],
    ['fields an array', { fields: [] }, 'fields', 'expected object, got array'],
    ['fields a string', { fields: '{}' }, 'fields', 'expected object, got string'],
    ['fields null', { fields: null }, 'fields', 'expected object, got null'],
    ['fields.amount a string', { fields: { amount: '100' } }, 'fields.amount', 'expected number, got string'],
    ['fields.paymentId a number', { fields: { paymentId: 5 } }, 'fields.paymentId', 'expected string, got number'],
    ['a merchant field not a string', { fields: { orderId: 17 } }, 'fields.orderId', 'expected string, got number'],
    [
      'a merchant field with an odd name',
      { fields: { 'field-0': true } },
      'fields["field-0"]',
      'expected string, got boolean',
    ],
    [
      'a merchant field whose name only ends like an identifier',
      { fields: { 'order-id': 5 } },
      'fields["order-id"]',
      'expected string, got number',
    ],
    [
      'fields.webhook_url not a string',
      { fields: { webhook_url: {} } },
      'fields.webhook_url',
      'expected string, got object',
    ],
    [
      'transactionDate as text',
      { transactionDate: '1764648470315' },
      'transactionDate',
      'expected integer milliseconds, got string',
    ],
    [
      'transactionDate fractional',
      { transactionDate: 1.5 },
      'transactionDate',
      'expected integer milliseconds, got number 1.5',
    ],
    [
      'transactionDate negative',
      { transactionDate: -1 },
      'transactionDate',
      'expected integer milliseconds, got number -1',
    ],
    [
      'transactionDate unsafe',
      { transactionDate: 2 ** 53 },
      'transactionDate',
      'expected integer milliseconds, got number 9007199254740992',
    ],
    ['requestDate fractional', { requestDate: 0.5 }, 'requestDate', 'expected integer milliseconds, got number 0.5'],
    ['requestDate null', { requestDate: null }, 'requestDate', 'expected integer milliseconds, got null'],
    ['service a string', { service: 'VISA' }, 'service', 'expected object with a string id, got string'],
    ['service without id', { service: {} }, 'service.id', 'expected string, but it is missing'],
    ['service.id a number', { service: { id: 1 } }, 'service.id', 'expected string, got number'],
    ['item an array', { item: [] }, 'item', 'expected object with a string id, got array'],
    ['item.id null', { item: { id: null } }, 'item.id', 'expected string, got null'],
    ['accountId a number', { accountId: 1 }, 'accountId', 'expected string, got number'],
    ['net a string', { net: '245' }, 'net', 'expected number, got string'],
    ['receiptNumber a number', { receiptNumber: 294593 }, 'receiptNumber', 'expected string, got number'],
    ['transactionType null', { transactionType: null }, 'transactionType', 'expected string, got null'],
    ['clientId a number', { clientId: 72294 }, 'clientId', 'expected string, got number'],
    ['data a string', { data: 'x' }, 'data', 'expected object, got string'],
    ['data.amount a string', { data: { amount: '1' } }, 'data.amount', 'expected number, got string'],
    ['data.accountId a number', { data: { accountId: 1 } }, 'data.accountId', 'expected string, got number'],
    ['data.description null', { data: { description: null } }, 'data.description', 'expected string, got null'],
    ['data.webhookUrl a boolean', { data: { webhookUrl: false } }, 'data.webhookUrl', 'expected string, got boolean'],
    ['data.name_en an object', { data: { name_en: {} } }, 'data.name_en', 'expected string, got object'],
  ];

  it.each(cases)('%s', (_name, overrides, path, message) => {
    const issues = issuesOf(body(overrides), STRICT);
    expect(issues).toEqual([{ path, message }]);
    const result = safeParseWebhook(body(overrides), STRICT);
    if (result.success) throw new Error('expected a failure');
    expect(result.error.message).toContain(`${path}: ${message}`);
  });

  // CONTRACT §4: only these refuse a lenient parse; every other case above is a deviation.
  const fatal = new Set(['id', 'transactionId', 'status', 'amount', 'fields']);
  it.each(cases)('lenient: %s', (_name, overrides, path, message) => {
    const result = safeParseWebhook(body(overrides));
    if (fatal.has(path) && !(path !== 'fields' && overrides[path] === '')) {
      if (result.success) throw new Error('expected a failure');
      expect(result.error.issues.map((issue) => issue.path)).toEqual([path]);
      return;
    }
    if (!result.success) throw new Error(result.error.message);
    expect(result.webhook.deviations).toEqual([{ path, message }]);
    expect(result.webhook.raw).toEqual(body(overrides));
  });

  it('reports every problem at once, in the message and in error.issues', () => {
    let caught: unknown;
    try {
      parseWebhook(body({ amount: '100', fields: { amount: 'x', paymentId: 1 }, service: {} }, ['id']), STRICT);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PayhookError);
    expect(isPayhookError(caught, 'INVALID_PAYLOAD')).toBe(true);
    const error = caught as PayhookError;
    expect(error.issues?.map((issue) => issue.path)).toEqual([
      'id',
      'amount',
      'fields.amount',
      'fields.paymentId',
      'service.id',
    ]);
    for (const path of ['id:', 'amount:', 'fields.amount: expected number', 'fields.paymentId:', 'service.id:']) {
      expect(error.message).toContain(path);
    }
  });

  it('keeps a long list of problems out of the message but in error.issues', () => {
    const fieldsValue = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, i]));
    const result = safeParseWebhook(body({ fields: fieldsValue }), STRICT);
    if (result.success) throw new Error('expected a failure');
    expect(result.error.issues).toHaveLength(50);
    expect(result.error.message).toContain('and 40 more');
    expect(result.error.message.length).toBeLessThan(1000);
  });

  it('spells out ten problems in full, joined by "; ", with no "more"', () => {
    const fieldsValue = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`f${i}`, i]));
    const result = safeParseWebhook(body({ fields: fieldsValue }), STRICT);
    if (result.success) throw new Error('expected a failure');
    const shown = result.error.issues.map((issue) => `${issue.path}: ${issue.message}`);
    expect(shown).toHaveLength(10);
    expect(result.error.message).toBe(`The body is not a payment webhook: ${shown.join('; ')}.`);
  });

  it('does not require requestDate by default, but does with strict: true', () => {
    const value = body({}, ['requestDate']);
    expect(safeParseWebhook(value).success).toBe(true);
    expect(issuesOf(value, { strict: true })).toEqual([
      { path: 'requestDate', message: 'expected integer milliseconds, but it is missing' },
    ]);
    expect(parseWebhook(body(), { strict: true }).requestDate).toBe(BASE.requestDate);
  });

  it('accepts a webhook whose fields object is empty (spec §2.2 promises no key)', () => {
    expect(parseWebhook(body({ fields: {} })).fields).toEqual({});
  });

  it('accepts 0 as a time (a non-negative safe integer), even with strict: true', () => {
    const webhook = parseWebhook(body({ transactionDate: 0, requestDate: 0 }), STRICT);
    expect([webhook.transactionDate, webhook.requestDate]).toEqual([0, 0]);
  });
});

describe('a lenient parse: what it keeps and what it leaves out', () => {
  it('leaves a top-level field of another shape out: no key, not one holding undefined (raw keeps it)', () => {
    const odd = { service: 'VISA', net: '245', transactionDate: '1764648470315' };
    const webhook = parseWebhook(body(odd));
    for (const name of Object.keys(odd)) expect(webhook).not.toHaveProperty(name);
    expect(webhook.deviations.map((issue) => issue.path)).toEqual(['transactionDate', 'service', 'net']);
    expect(webhook.raw).toMatchObject(odd);
  });

  it('keeps a merchant field of any JSON scalar as given, noted, and leaves out an object or an array', () => {
    const fields = { text: 'a', count: 3, live: true, none: null, nested: { a: 1 }, list: ['a'] };
    const webhook = parseWebhook(body({ fields }));
    // Only the kept keys: a value left out is no key at all, not one holding undefined.
    expect(Object.keys(webhook.fields)).toEqual(['text', 'count', 'live', 'none']);
    expect({ ...webhook.fields }).toEqual({ text: 'a', count: 3, live: true, none: null });
    expect(webhook.deviations.map((issue) => issue.path)).toEqual([
      'fields.count',
      'fields.live',
      'fields.none',
      'fields.nested',
      'fields.list',
    ]);
    expect(webhook.raw['fields']).toEqual(fields);
  });

  it.each(['100', '-5', '99.90', '0'])('reads numeric text %j in fields.amount as its number', (text) => {
    const webhook = parseWebhook(body({ fields: { amount: text } }));
    expect(webhook.fields.amount).toBe(Number(text));
    expect(webhook.deviations).toEqual([{ path: 'fields.amount', message: 'expected number, got string' }]);
  });

  it.each<[string, unknown]>([
    ['an exponent', '1e3'],
    ['hexadecimal', '0x10'],
    ['empty text', ''],
    ['a leading space', ' 100'],
    ['a trailing space', '100 '],
    ['a plus sign', '+5'],
    ['a thousands separator', '1,000'],
    ['a dot without digits after it', '5.'],
    ['digits too many for a finite number', '9'.repeat(400)],
    ['numeric text in an array', ['100']],
  ])('leaves out fields.amount holding %s, which is not numeric text, and notes it', (_label, amount) => {
    const webhook = parseWebhook(body({ fields: { amount, paymentId: 'p' } }));
    expect(Object.keys(webhook.fields)).toEqual(['paymentId']);
    expect(webhook.deviations.map((issue) => issue.path)).toEqual(['fields.amount']);
    expect((webhook.raw['fields'] as Record<string, unknown>)['amount']).toEqual(amount);
  });
});

describe('INVALID_BODY', () => {
  const bad: Array<[string, unknown, string]> = [
    ['not JSON', 'status=SUCCEEDED&amount=100', 'The body must be a JSON object, but it starts with "s".'],
    ['whitespace only', ' \n', 'The body must be a JSON object, but it starts with "".'],
    [
      'too deep',
      `{"a":${'['.repeat(64)}${']'.repeat(64)}}`,
      'The body nests arrays and objects more than 64 levels deep.',
    ],
    [
      'too wide: 1,001 top-level members',
      JSON.stringify(Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`m${i}`, i]))),
      'The body has more than 1000 top-level members, or their names add up to more than 4096 characters.',
    ],
    [
      'too wide: 4,097 characters of top-level names, given parsed',
      { ['n'.repeat(4_097)]: 1 },
      'The body has more than 1000 top-level members, or their names add up to more than 4096 characters.',
    ],
    ['truncated JSON', '{"id":', 'The body is not valid JSON.'],
    ['a JSON array', '[{"status":"SUCCEEDED"}]', 'The body must be a JSON object, but it starts with "[".'],
    ['a JSON string', '"hello"', 'The body must be a JSON object, but it starts with "\\"".'],
    ['a JSON number', '42', 'The body must be a JSON object, but it starts with "4".'],
    ['JSON null in whitespace', ' null\n', 'The body is empty.'],
    ['empty text', '', 'The body is empty.'],
    ['JSON null', 'null', 'The body is empty.'],
    ['invalid UTF-8 bytes', new Uint8Array([0x7b, 0xff, 0x7d]), 'The body is not valid UTF-8.'],
    ['an array value', [], 'The body must be a JSON object, but it is an array.'],
    ['a number value', 5, 'The body must be a JSON object, but it is a number.'],
    ['undefined', undefined, 'The body is empty.'],
  ];

  it.each(bad)('%s', (_name, input, message) => {
    const result = safeParseWebhook(input as object);
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(result.error.code).toBe('INVALID_BODY');
    expect(result.error.message).toBe(message);
    expect(result.error.issues).toEqual([{ path: '', message }]);
    expect(() => parseWebhook(input as object)).toThrowError(message);
  });
});

describe('hostile keys', () => {
  it('keeps __proto__, constructor and prototype as ordinary data, touching no prototype', () => {
    const text =
      '{"__proto__":{"polluted":true,"status":"SUCCEEDED"},"constructor":{"prototype":{"polluted":true}},"prototype":1,' +
      '"id":"a_DEBIT","transactionId":"a","status":"FAILED","amount":1,"transactionDate":1,' +
      '"fields":{"__proto__":"x","constructor":"y","prototype":"z","toString":"w","amount":1},' +
      '"data":{"__proto__":{"polluted":true},"constructor":"c"}}';
    const webhook = parseWebhook(text);
    expect(webhook.status).toBe('FAILED');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect((Object.prototype as unknown as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.getPrototypeOf(webhook)).toBe(Object.prototype);
    expect((webhook as unknown as Record<string, unknown>)['polluted']).toBeUndefined();

    expect(Object.getPrototypeOf(webhook.fields)).toBeNull();
    expect(Object.getOwnPropertyDescriptor(webhook.fields, '__proto__')?.value).toBe('x');
    expect(webhook.fields['constructor']).toBe('y');
    expect(webhook.fields['prototype']).toBe('z');
    expect(Object.getOwnPropertyDescriptor(webhook.fields, 'toString')?.value).toBe('w');

    expect(Object.getPrototypeOf(webhook.extra)).toBeNull();
    expect(Object.keys(webhook.extra).sort()).toEqual(['__proto__', 'constructor', 'prototype']);
    expect(Object.getOwnPropertyDescriptor(webhook.extra, '__proto__')?.value).toEqual({
      polluted: true,
      status: 'SUCCEEDED',
    });

    expect(Object.getPrototypeOf(webhook.data)).toBeNull();
    expect(Object.getOwnPropertyDescriptor(webhook.data, '__proto__')?.value).toEqual({ polluted: true });
  });

  it('rejects hostile keys in fields when their values are not strings, by path (strict)', () => {
    const value: unknown = JSON.parse(
      '{"id":"a","transactionId":"a","status":"s","amount":1,"transactionDate":1,"fields":{"__proto__":{"x":1}}}',
    );
    expect(issuesOf(value, STRICT)).toEqual([
      { path: 'fields.__proto__', message: 'expected string, got object' },
      { path: 'requestDate', message: 'expected integer milliseconds, but it is missing' },
    ]);
    // Lenient: the object value is left out of fields (no prototype touched) and noted.
    const webhook = parseWebhook(value as object);
    expect(Object.getPrototypeOf(webhook.fields)).toBeNull();
    expect(Object.keys(webhook.fields)).toEqual([]);
    expect(webhook.deviations).toEqual([{ path: 'fields.__proto__', message: 'expected string, got object' }]);
    expect(({} as Record<string, unknown>)['x']).toBeUndefined();
  });

  it('reads only own keys of a caller-built object, never inherited ones', () => {
    const inherited = Object.create({
      id: 'x_DEBIT',
      transactionId: 'x',
      status: 'SUCCEEDED',
      amount: 1,
      fields: {},
      transactionDate: 1,
    }) as object;
    const result = safeParseWebhook(inherited);
    expect(result.success).toBe(false);
  });

  it('never throws on a caller-built object whose getters throw', () => {
    const hostile = { ...BASE };
    Object.defineProperty(hostile, 'amount', {
      enumerable: true,
      get: () => {
        throw new Error('boom');
      },
    });
    const result = safeParseWebhook(hostile);
    expect(result.success).toBe(false);
    if (!result.success) expect(result.error.code).toBe('INVALID_PAYLOAD');
    const proxy = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('boom');
        },
      },
    );
    expect(safeParseWebhook(proxy).success).toBe(false);
  });
});

describe('validateWebhookObject (shared with verifyWebhook)', () => {
  it('returns the webhook for a parsed object, without copying raw', () => {
    const value = body();
    const result = validateWebhookObject(value);
    expect(result.success).toBe(true);
    if (result.success) expect(result.webhook.raw).toBe(value);
  });

  it('returns an INVALID_PAYLOAD error listing issues, and honours strict', () => {
    const result = validateWebhookObject(body({}, ['requestDate']), { strict: true });
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(result.error.code).toBe('INVALID_PAYLOAD');
    expect(result.error.issues).toEqual([
      { path: 'requestDate', message: 'expected integer milliseconds, but it is missing' },
    ]);
  });
});
