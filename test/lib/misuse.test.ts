import { describe, expect, it } from 'vitest';
import { describeError } from '../../src/lib/misuse.js';

function errorWithMessage(message: unknown): Error {
  const error = new Error('placeholder');
  Object.defineProperty(error, 'message', { value: message });
  return error;
}

describe('describeError', () => {
  it("gives an Error's message and stringifies anything else", () => {
    expect(describeError(new Error('boom'))).toBe('boom');
    expect(describeError('text')).toBe('text');
    expect(describeError(42)).toBe('42');
    expect(describeError(undefined)).toBe('undefined');
    expect(describeError(Object.create(null))).toBe('a value that cannot be shown as text');
  });

  it('is always text, whatever the Error carries as its message', () => {
    // A non-text message made the PostgreSQL inbox's replaceAll throw, so the failure was never recorded.
    expect(describeError(errorWithMessage(42))).toBe('42');
    expect(describeError(errorWithMessage(Symbol('s')))).toBe('Symbol(s)');
    expect(describeError(errorWithMessage(null))).toBe('null');
    const throwing = {
      toString() {
        throw new Error('no');
      },
    };
    expect(describeError(errorWithMessage(throwing))).toBe('a value that cannot be shown as text');
    const getter = new Error('x');
    Object.defineProperty(getter, 'message', {
      get() {
        throw new Error('no');
      },
    });
    expect(describeError(getter)).toBe('a value that cannot be shown as text');
  });

  it('never throws, even for a Proxy whose every trap throws', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('no');
        },
        getPrototypeOf() {
          throw new Error('no');
        },
      },
    );
    expect(typeof describeError(hostile)).toBe('string');
  });
});
