import { describe, expect, it } from 'vitest';
import { isPayhookError, PayhookError, type PayhookErrorCode } from '../src/errors.js';

describe('PayhookError', () => {
  it('carries its code, message, name and cause', () => {
    const cause = new Error('root');
    const error = new PayhookError('INVALID_KEY', 'bad key', { cause });
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe('INVALID_KEY');
    expect(error.message).toBe('bad key');
    expect(error.name).toBe('PayhookError');
    expect(error.cause).toBe(cause);
    expect(error.stack).toContain('bad key');
  });

  it('has no cause property when none was given, and keeps an explicit undefined cause', () => {
    expect('cause' in new PayhookError('WEAK_KEY', 'x')).toBe(false);
    expect('cause' in new PayhookError('WEAK_KEY', 'x', {})).toBe(false);
    expect('cause' in new PayhookError('WEAK_KEY', 'x', { cause: undefined })).toBe(true);
  });
});

describe('isPayhookError', () => {
  const error = new PayhookError('MISSING_HOST', 'no host');

  it('recognises payhook errors, optionally by code', () => {
    expect(isPayhookError(error)).toBe(true);
    expect(isPayhookError(error, 'MISSING_HOST')).toBe(true);
    expect(isPayhookError(error, 'INVALID_BODY', 'MISSING_HOST')).toBe(true);
    expect(isPayhookError(error, 'INVALID_BODY')).toBe(false);
  });

  it('recognises an error from another copy of the package by name and code', () => {
    const foreign = Object.assign(new Error('from the CJS copy'), { name: 'PayhookError', code: 'WEAK_KEY' });
    expect(foreign instanceof PayhookError).toBe(false);
    expect(isPayhookError(foreign, 'WEAK_KEY')).toBe(true);
  });

  it.each([
    ['a plain Error', new Error('x')],
    ['an Error with an unknown code', Object.assign(new Error('x'), { name: 'PayhookError', code: 'NOPE' })],
    ['an Error with the right code but another name', Object.assign(new Error('x'), { code: 'MISSING_HOST' })],
    ['a code that is not a string', { name: 'PayhookError', code: 1 }],
    ['null', null],
    ['undefined', undefined],
    ['a string', 'PayhookError'],
  ])('is false for %s', (_label, value) => {
    expect(isPayhookError(value)).toBe(false);
  });

  it('knows every documented code', () => {
    // `satisfies` makes this list fail to compile when a code is added to
    // the union without being listed here.
    const every = {
      MISSING_HOST: true,
      MALFORMED_PATH: true,
      MALFORMED_QUERY: true,
      URL_MISMATCH: true,
      INVALID_BODY: true,
      INVALID_PAYLOAD: true,
      INVALID_KEY: true,
      WEAK_KEY: true,
      MISSING_SIGNATURE: true,
      SIGNATURE_MISMATCH: true,
      MISSING_TIMESTAMP: true,
      MALFORMED_TIMESTAMP: true,
      TIMESTAMP_OUT_OF_WINDOW: true,
      BODY_TOO_LARGE: true,
      BODY_TIMEOUT: true,
      INVALID_ARGUMENT: true,
      METHOD_NOT_ALLOWED: true,
      DELIVERY_IN_PROGRESS: true,
      STORE_UNAVAILABLE: true,
      HANDLER_FAILED: true,
    } satisfies Record<PayhookErrorCode, true>;
    const codes = Object.keys(every) as PayhookErrorCode[];
    for (const code of codes) expect(isPayhookError(new PayhookError(code, code), code)).toBe(true);
  });
});
