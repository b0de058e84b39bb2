// Which driver errors mean the connection is gone (it is dropped, and a
// transaction sends nothing more) and which are one statement's failure.
import { describe, expect, it } from 'vitest';
import { isConnectionLoss } from '../../src/postgres/faults.js';

const coded = (code: string) => Object.assign(new Error(code), { code });
const DRIVERS = ['pg', 'postgres.js'] as const;

describe('isConnectionLoss', () => {
  it('is true on both drivers for postgres.js connection codes, socket and stream codes, SQLSTATE 08 and 57P', () => {
    for (const driver of DRIVERS) {
      for (const code of [
        'CONNECTION_CLOSED',
        'CONNECTION_ENDED',
        'CONNECT_TIMEOUT',
        'ECONNRESET',
        'EPIPE',
        'EAI_AGAIN',
        'ERR_SOCKET_CLOSED',
        'ERR_STREAM_DESTROYED',
        'ERR_STREAM_WRITE_AFTER_END',
        '08006',
        '57P01',
      ]) {
        expect(isConnectionLoss(coded(code), driver), `${driver} ${code}`).toBe(true);
      }
    }
  });

  it("is false on both drivers for a statement's own failure: another SQLSTATE, a value that cannot be sent", () => {
    for (const driver of DRIVERS) {
      for (const code of [
        '23505',
        '22P02',
        '42P01',
        'UNDEFINED_VALUE',
        'MAX_PARAMETERS_EXCEEDED',
        'ERR_INVALID_ARG_TYPE',
      ]) {
        expect(isConnectionLoss(coded(code), driver), `${driver} ${code}`).toBe(false);
      }
    }
  });

  it('reads an error without a code as a loss for pg (its "Connection terminated"), as the statement\'s for postgres.js', () => {
    const uncoded = [
      new Error('Connection terminated unexpectedly'),
      new TypeError('Do not know how to serialize a BigInt'),
      'a string',
    ];
    for (const error of uncoded) {
      expect(isConnectionLoss(error, 'pg'), String(error)).toBe(true);
      expect(isConnectionLoss(error, 'postgres.js'), String(error)).toBe(false);
    }
  });
});
