// createSqliteStore on its own, in Node, with stand-in databases: misuse is
// INVALID_ARGUMENT at creation; a database that fails (locked, closed, full)
// is STORE_UNAVAILABLE, as a rejection and never a synchronous throw, so the
// handler answers 503. The real databases are in sqlite.test.ts.
import { describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteDatabaseLike } from '../../src/sqlite/index.js';

const busy = () => {
  throw Object.assign(new Error('database is locked'), { code: 'ERR_SQLITE_ERROR', errcode: 5 });
};

function database(overrides: Partial<SqliteDatabaseLike> = {}): SqliteDatabaseLike {
  return { exec: () => undefined, prepare: () => ({ run: busy, get: busy }), ...overrides };
}

describe('createSqliteStore', () => {
  it('refuses a missing database, a bad table name or clock with INVALID_ARGUMENT', () => {
    const wrong: unknown[] = [
      undefined,
      null,
      {},
      { database: { exec: () => undefined } },
      { database: database(), table: 'payhook-deliveries' },
      { database: database(), table: '1st' },
      { database: database(), table: 'x; DROP TABLE orders' },
      { database: database(), table: '' },
      { database: database(), now: 5 },
    ];
    for (const options of wrong) {
      expect(() => createSqliteStore(options as never), JSON.stringify(options)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
    }
  });

  it('throws STORE_UNAVAILABLE, with the cause, when the table cannot be created', () => {
    const readOnly = database({
      exec: () => {
        throw new Error('attempt to write a readonly database');
      },
    });
    expect(() => createSqliteStore({ database: readOnly })).toThrow(
      expect.objectContaining({ code: 'STORE_UNAVAILABLE', message: expect.stringContaining('readonly') }),
    );
  });

  it('rejects (never throws) with STORE_UNAVAILABLE when a statement fails', async () => {
    const store = createSqliteStore({ database: database() });
    const calls = [
      () => store.claim('k', { leaseMs: 1000 }),
      () => store.complete('k', 'token', { retentionMs: 1000 }),
      () => store.release('k', 'token'),
    ];
    for (const call of calls) {
      let pending: Promise<unknown> | undefined;
      expect(() => (pending = call())).not.toThrow();
      await expect(pending).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
        message: expect.stringContaining('database is locked'),
      });
    }
  });

  it('rejects misuse of a call with INVALID_ARGUMENT, also as a rejection', async () => {
    const store = createSqliteStore({ database: database() });
    let pending: Promise<unknown> | undefined;
    expect(() => (pending = store.claim('', { leaseMs: 1000 }))).not.toThrow();
    await expect(pending).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});
