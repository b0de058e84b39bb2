// Which driver errors mean the connection is gone (it is dropped, and a
// transaction sends nothing more) and which are one statement's failure.
import { describe, expect, it } from 'vitest';
import { isConnectionLoss } from '../../src/postgres/faults.js';

const coded = (code: string) => Object.assign(new Error(code), { code });

describe('isConnectionLoss', () => {
  it('is true for no code at all, postgres.js connection codes, socket and stream codes, SQLSTATE 08 and 57P', () => {
    for (const error of [
      new Error('Connection terminated unexpectedly'),
      'a string',
      coded('CONNECTION_CLOSED'),
      coded('CONNECTION_ENDED'),
      coded('CONNECT_TIMEOUT'),
      coded('ECONNRESET'),
      coded('EPIPE'),
      coded('EAI_AGAIN'),
      coded('ERR_SOCKET_CLOSED'),
      coded('ERR_STREAM_DESTROYED'),
      coded('08006'),
      coded('57P01'),
    ]) {
      expect(isConnectionLoss(error), String((error as { code?: string }).code ?? error)).toBe(true);
    }
  });

  it("is false for a statement's own failure: another SQLSTATE, or postgres.js refusing to send it", () => {
    for (const code of ['23505', '22P02', '42P01', 'UNDEFINED_VALUE', 'MAX_PARAMETERS_EXCEEDED']) {
      expect(isConnectionLoss(coded(code)), code).toBe(false);
    }
  });
});
