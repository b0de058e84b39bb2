import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseServiceError, SERVICE_STATUS_CODES, serviceStatus } from '../src/service-status.js';

// Spec §7, row by row: code, meaning, retriable (the table's "Yes"), what the advice must say, condition.
const TABLE: Array<[number, string, boolean, RegExp, string | undefined, string[]]> = [
  [
    200,
    'Success',
    true,
    /SUCCEEDED, FAILED or PROCESSING/,
    undefined,
    ['Payment status SUCCEEDED, FAILED or PROCESSING'],
  ],
  [201, 'Accepted for asynchronous processing', false, /later/, undefined, []],
  [
    400,
    'Bad request',
    false,
    /^Fix the request/,
    undefined,
    [
      'Transaction ID is required',
      'a valid service is required',
      'fields must be an object including all required fields',
      'invalid amount (amount must be greater than 0)',
      'user is disabled',
      'source and destination accounts must be different',
    ],
  ],
  [
    401,
    'Authorization error',
    false,
    /signature, the key and the timestamp/,
    undefined,
    ['Invalid or missing Authorization header', 'invalid client ID'],
  ],
  [
    402,
    'Insufficient funds',
    false,
    /^Top up the account first/,
    'after topping up the account',
    ['Insufficient funds'],
  ],
  [
    403,
    'No permission',
    false,
    /do not retry/,
    undefined,
    ['User has no permission to access this account', 'client has no permission to access this payment'],
  ],
  [404, 'Resource not found', false, /do not retry/, undefined, ['User does not exist']],
  [
    409,
    'Duplicate transaction',
    false,
    /new transactionId, or request the status of the existing payment/,
    undefined,
    ['Transaction with the same ID already exists'],
  ],
  [500, 'Internal server error', true, /^Retry/, undefined, ['An unexpected error has occurred']],
  [
    502,
    'Service provider unavailable',
    true,
    /^Retry later/,
    'later',
    ['Service "<service_name>" is temporarily unavailable'],
  ],
  [503, 'Server overloaded or under maintenance', true, /^Retry later/, 'later', []],
];

describe('serviceStatus (spec §7)', () => {
  it.each(TABLE)('%i: %s', (code, meaning, retriable, advice, condition, examples) => {
    const info = serviceStatus(code);
    expect(info).toBeDefined();
    expect(info!.statusCode).toBe(code);
    expect(info!.meaning).toBe(meaning);
    expect(info!.retriable).toBe(retriable);
    expect(info!.advice).toMatch(advice);
    expect(info!.condition).toBe(condition);
    expect('condition' in info!).toBe(condition !== undefined);
    expect(info!.exampleMessages).toEqual(examples);
  });

  it('lists exactly the codes of the table', () => {
    expect([...SERVICE_STATUS_CODES]).toEqual(TABLE.map(([code]) => code));
    // Shared by every importer: one that empties it must not empty it for the others.
    expect(Object.isFrozen(SERVICE_STATUS_CODES)).toBe(true);
    expect(() => ((SERVICE_STATUS_CODES as number[]).length = 0)).toThrow(TypeError);
  });

  it.each([0, 100, 202, 204, 301, 405, 418, 422, 429, 501, 504, 999, -1, 1.5, Number.NaN, 4e2 + 0.1])(
    'is undefined for %s',
    (code) => {
      expect(serviceStatus(code)).toBeUndefined();
    },
  );

  it('is undefined for non-numbers and inherited keys', () => {
    expect(serviceStatus('400' as unknown as number)).toBeUndefined();
    expect(serviceStatus('constructor' as unknown as number)).toBeUndefined();
    expect(serviceStatus(null as unknown as number)).toBeUndefined();
  });

  it('returns a fresh object each time, so a caller cannot corrupt the table', () => {
    const first = serviceStatus(400);
    (first.exampleMessages as string[]).push('mutated');
    expect(serviceStatus(400).exampleMessages).not.toContain('mutated');
  });
});

describe('parseServiceError', () => {
  it('reads statusCode / errorMessage from text, bytes and objects', () => {
    const text = '{"statusCode":409,"errorMessage":"Transaction with the same ID already exists"}';
    for (const body of [text, new TextEncoder().encode(text), JSON.parse(text) as object]) {
      const error = parseServiceError(body);
      expect(error).toMatchObject({
        known: true,
        statusCode: 409,
        message: 'Transaction with the same ID already exists',
        retriable: false,
      });
      expect(error?.status?.advice).toMatch(/new transactionId/);
    }
  });

  it('reads the capitalised StatusCode / ErrorMessage', () => {
    const error = parseServiceError('{"StatusCode":402,"ErrorMessage":"Insufficient funds"}');
    expect(error).toMatchObject({ known: true, statusCode: 402, message: 'Insufficient funds', retriable: false });
    expect(error?.status?.condition).toBe('after topping up the account');
  });

  it('prefers the lower-case names when both spellings are present', () => {
    expect(parseServiceError({ statusCode: 500, StatusCode: 400, errorMessage: 'a', ErrorMessage: 'b' })).toMatchObject(
      { statusCode: 500, message: 'a' },
    );
  });

  it('falls back to the capitalised name when the lower-case one cannot be read', () => {
    expect(parseServiceError({ statusCode: 'abc', StatusCode: 409 })).toMatchObject({ statusCode: 409 });
    expect(parseServiceError({ statusCode: 500, errorMessage: 42, ErrorMessage: 'b' })).toMatchObject({
      statusCode: 500,
      message: 'b',
    });
  });

  it('accepts a status code written as digits', () => {
    expect(parseServiceError({ statusCode: '503' })).toMatchObject({
      known: true,
      statusCode: 503,
      retriable: true,
      message: '',
    });
  });

  it('property: reads a code from 0 to 999 (a 2xx success aside) alike as a number and as digits, and no other', () => {
    fc.assert(
      // Random draws seldom land on an edge: each is drawn on purpose too.
      fc.property(
        fc.oneof(fc.constantFrom(-1, 0, 199, 200, 299, 300, 999, 1000), fc.integer({ min: -2_000, max: 2_000 })),
        (code) => {
          const asNumber = parseServiceError({ statusCode: code });
          if (code < 0 || code > 999 || (code >= 200 && code <= 299)) expect(asNumber).toBeUndefined();
          else expect(asNumber?.statusCode).toBe(code);
          if (code >= 0) expect(parseServiceError({ statusCode: String(code) })).toEqual(asNumber);
        },
      ),
    );
    for (const edge of [0, 999]) expect(parseServiceError({ statusCode: edge })?.statusCode).toBe(edge);
  });

  it('narrows on known / statusCode for branching', () => {
    const error = parseServiceError({ statusCode: 400, errorMessage: 'user is disabled' });
    if (error === undefined || !error.known) throw new Error('expected a known error');
    expect(error.status.meaning).toBe('Bad request');
  });

  it('reports codes outside the table as unknown, retriable for 429 and 5xx', () => {
    expect(parseServiceError({ statusCode: 418, errorMessage: 'teapot' })).toEqual({
      known: false,
      statusCode: 418,
      message: 'teapot',
      retriable: false,
    });
    expect(parseServiceError({ statusCode: 504 })).toEqual({
      known: false,
      statusCode: 504,
      message: '',
      retriable: true,
    });
    expect(parseServiceError({ StatusCode: 429 })).toEqual({
      known: false,
      statusCode: 429,
      message: '',
      retriable: true,
    });
    // 5xx is 500 to 599, both ends included; 428, 430 and 6xx are not retried.
    for (const [statusCode, retriable] of [
      [501, true],
      [599, true],
      [600, false],
      [999, false],
      [428, false],
      [430, false],
    ] as const) {
      expect([statusCode, parseServiceError({ statusCode })?.retriable]).toEqual([statusCode, retriable]);
    }
  });

  it('gives undefined for a success answer, so `retriable` never says to repeat a call that worked', () => {
    expect(parseServiceError('{"statusCode":200,"errorMessage":"Payment status SUCCEEDED"}')).toBeUndefined();
    expect(parseServiceError({ StatusCode: '201' })).toBeUndefined();
    expect(parseServiceError({ statusCode: 204 })).toBeUndefined();
    // The table's row for 200 is unchanged: serviceStatus still reports it as documented.
    expect(serviceStatus(200)?.retriable).toBe(true);
    // The neighbours of the success range are still errors.
    expect(parseServiceError({ statusCode: 199 })).toMatchObject({ known: false, statusCode: 199 });
    expect(parseServiceError({ statusCode: 300 })).toMatchObject({ known: false, statusCode: 300 });
  });

  it('ignores a message that is not a string', () => {
    expect(parseServiceError({ statusCode: 500, errorMessage: { text: 'x' } })?.message).toBe('');
  });

  it.each<[string, unknown]>([
    ['not JSON', 'Bad Gateway'],
    ['HTML', '<html>502</html>'],
    ['empty text', ''],
    ['JSON null', 'null'],
    ['an array', '[{"statusCode":400}]'],
    ['a number', 400],
    ['no code', '{"errorMessage":"x"}'],
    ['a fractional code', { statusCode: 400.5 }],
    ['a negative code', { statusCode: -1 }],
    ['a code with sign', { statusCode: '+400' }],
    ['a code with spaces', { statusCode: ' 400' }],
    ['a four-digit code', { statusCode: 4000 }],
    ['a boolean code', { statusCode: true }],
    ['a code in an array', { statusCode: ['409'] }],
    ['invalid UTF-8', new Uint8Array([0xff])],
    ['undefined', undefined],
    ['null', null],
    ['an inherited code', Object.create({ statusCode: 400 })],
  ])('returns undefined for %s', (_name, body) => {
    expect(parseServiceError(body)).toBeUndefined();
  });

  it('never throws, whatever it is given', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything(),
          fc.jsonValue().map((value) => JSON.stringify(value)),
          fc.string(),
        ),
        (body) => {
          const error = parseServiceError(body);
          if (error !== undefined) expect(Number.isInteger(error.statusCode)).toBe(true);
        },
      ),
    );
    const throwing = Object.defineProperty({}, 'statusCode', {
      enumerable: true,
      get: () => {
        throw new Error('boom');
      },
    });
    expect(parseServiceError(throwing)).toBeUndefined();
    // A readable code does not save a body whose message getter throws.
    const throwingMessage = Object.defineProperty({ statusCode: 500 }, 'errorMessage', {
      enumerable: true,
      get: () => {
        throw new Error('boom');
      },
    });
    expect(parseServiceError(throwingMessage)).toBeUndefined();
  });
});
