// The key mapping the SQLite, PostgreSQL and Redis stores share: rows and keys
// already written must still match, so these outputs must never change.
import { describe, expect, it } from 'vitest';
import { storedKey } from '../../src/dedup/stored-key.js';
import { asText } from '../../src/postgres/values.js';

describe('storedKey', () => {
  it('keeps a plain key as it is and writes the others as their JSON literal', () => {
    expect(storedKey('a_DEBIT:SUCCEEDED')).toBe('a_DEBIT:SUCCEEDED');
    expect(storedKey('emoji \u{1F600}')).toBe('emoji \u{1F600}');
    expect(storedKey('id\uD800')).toBe('"id\\ud800"');
    expect(storedKey('id\uDC00')).toBe('"id\\udc00"');
    expect(storedKey('id\uFFFD')).toBe('id\uFFFD');
    expect(storedKey('x\0y')).toBe('"x\\u0000y"');
    expect(storedKey('"a"')).toBe('"\\"a\\""');
    expect(asText).toBe(storedKey);
  });
});
