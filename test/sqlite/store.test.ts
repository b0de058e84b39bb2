// createSqliteStore on its own, in Node, with stand-in databases: misuse is
// INVALID_ARGUMENT at creation; a database that fails (locked, closed, full)
// is STORE_UNAVAILABLE, as a rejection and never a synchronous throw, so the
// handler answers 503; a locked file is tried again after timers, as each
// driver reports it, and only for busyTimeoutMs. The real databases are in
// sqlite.test.ts and busy.test.ts.
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSqliteStore, type SqliteDatabaseLike } from '../../src/sqlite/index.js';

const busy = () => {
  throw Object.assign(new Error('database is locked'), { code: 'ERR_SQLITE_ERROR', errcode: 5 });
};

// The store reads the connection's own busy timeout once, at creation: stand-ins that count runs answer it apart.
const PRAGMA = 'PRAGMA busy_timeout';
const NO_DRIVER_WAIT = { run: () => undefined, get: () => ({ timeout: 0 }), all: () => [{ timeout: 0 }] };

function database(overrides: Partial<SqliteDatabaseLike> = {}): SqliteDatabaseLike {
  return { exec: () => undefined, prepare: () => ({ run: busy, get: busy, all: busy }), ...overrides };
}

/** How long a completion or a release keeps trying on a busy file at least (below the default storeTimeoutMs). */
const SETTLE_BUDGET_MS = 4_000;

/** How `pending` ends once fake timers have moved past the settle budget (installed by the caller). */
async function afterSettleBudget<T>(pending: Promise<T>): Promise<T> {
  const outcome = pending.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await vi.advanceTimersByTimeAsync(SETTLE_BUDGET_MS);
  const ended = await outcome;
  if ('error' in ended) throw ended.error;
  return ended.value;
}

describe('createSqliteStore', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

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
      // SQLite keeps these names for itself: CREATE TABLE would fail as if the file were out of reach.
      { database: database(), table: 'sqlite_deliveries' },
      { database: database(), table: 'SQLITE_payhook' },
      // Each store names its index <table>_expires_at, and tables and indexes share SQLite's names: a store on
      // this table beside one on payhook_deliveries failed (STORE_UNAVAILABLE, "there is already an index named").
      { database: database(), table: 'payhook_deliveries_expires_at' },
      { database: database(), table: 'Shop_EXPIRES_AT' },
      { database: database(), now: 5 },
      { database: database(), busyTimeoutMs: -1 },
      { database: database(), busyTimeoutMs: Number.NaN },
      { database: database(), busyTimeoutMs: 2_147_483_648 },
      { database: database(), busyTimeoutMs: '100' },
    ];
    for (const options of wrong) {
      expect(() => createSqliteStore(options as never), JSON.stringify(options)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
    }
  });

  // The drivers are synchronous: a connection that waits inside the driver for a locked file stops every request of
  // the process meanwhile (measured: 3 s of event loop for one claim), and busyTimeoutMs no longer bounds a call.
  it('refuses a connection that waits inside the driver, whatever shape its rows have', () => {
    const waits = (row: unknown) =>
      database({
        prepare: (sql) => (sql === PRAGMA ? { run: busy, get: () => row, all: () => [row] } : NO_DRIVER_WAIT),
      });
    // A connection set to read integers as BigInt (better-sqlite3's safeIntegers, node:sqlite's readBigInts).
    for (const row of [{ timeout: 5_000 }, [250], { timeout: 5_000n }, [250n]]) {
      expect(() => createSqliteStore({ database: waits(row) }), String(Object.values(row)[0])).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('inside the driver') }),
      );
    }
    for (const row of [{ timeout: 0 }, [0], undefined, null]) {
      expect(() => createSqliteStore({ database: waits(row) }), JSON.stringify(row)).not.toThrow();
    }
    // A database in memory (its file name empty): its wait is set to 0 rather than refused.
    const executed: string[] = [];
    const inMemory = database({
      exec: (sql) => void executed.push(sql),
      prepare: (sql) =>
        sql === PRAGMA
          ? { run: busy, get: () => ({ timeout: 5_000 }), all: busy }
          : sql.includes('pragma_database_list')
            ? { run: busy, get: () => ({ file: '' }), all: busy }
            : NO_DRIVER_WAIT,
    });
    expect(() => createSqliteStore({ database: inMemory })).not.toThrow();
    expect(executed[0]).toBe('PRAGMA busy_timeout = 0');
  });

  it('throws STORE_UNAVAILABLE, with the cause, when the table cannot be created', () => {
    const notADatabase = database({
      exec: () => {
        throw new Error('file is not a database');
      },
    });
    expect(() => createSqliteStore({ database: notADatabase })).toThrow(
      expect.objectContaining({ code: 'STORE_UNAVAILABLE', message: expect.stringContaining('not a database') }),
    );
  });

  // A table dropped under the store is made again once per call: one that cannot stay must be an error, not a loop
  // (a synchronous one would stop the process).
  it('rejects STORE_UNAVAILABLE when a table made again is still missing, after one remake', async () => {
    let gone = false;
    let tries = 0;
    const missing = () => {
      // Past a few tries, another error: a loop that never stops still ends the test.
      throw new Error(++tries > 5 ? 'disk I/O error' : 'no such table: payhook_deliveries');
    };
    const vanishing = database({
      prepare: (sql) => {
        if (sql === PRAGMA) return NO_DRIVER_WAIT;
        if (gone) missing();
        return { run: missing, get: missing, all: missing };
      },
    });
    const store = createSqliteStore({ database: vanishing });
    gone = true;
    await expect(store.claim('k', { leaseMs: 1_000 })).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringContaining('no such table'),
    });
    expect(tries).toBeLessThanOrEqual(2);
  });

  it('throws INVALID_ARGUMENT naming the fix for a read-only file without the table', () => {
    const readOnly = database({
      exec: () => {
        throw new Error('attempt to write a readonly database');
      },
    });
    expect(() => createSqliteStore({ database: readOnly })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('write the file') }),
    );
  });

  // Rollback journal: while another connection holds the file, even finding the table waits. The synchronous
  // set-up cannot wait (it would stop the event loop), so the first call does, as it waits for any lock.
  it('starts on a file locked at creation, and sets the table up in its first call, waiting with timers', async () => {
    const lock = { held: true, setUps: 0 };
    const db = database({
      exec: () => {
        lock.setUps++;
        if (lock.held) busy();
      },
      prepare: (sql) => ({
        run: () => undefined,
        get: () => undefined,
        all: () => (sql.includes('RETURNING') ? [{}] : []),
      }),
    });
    const store = createSqliteStore({ database: db, busyTimeoutMs: 2_000 });
    setTimeout(() => (lock.held = false), 60);
    expect((await store.claim('k', { leaseMs: 1_000 })).status).toBe('claimed');
    const setUps = lock.setUps;
    expect(setUps).toBeGreaterThan(2);
    await store.release('k', 't');
    expect(lock.setUps).toBe(setUps); // set up once
  });

  it('rejects (never throws) with STORE_UNAVAILABLE when a statement fails', async () => {
    vi.useFakeTimers();
    const store = createSqliteStore({ database: database(), busyTimeoutMs: 20 });
    const calls = [
      () => store.claim('k', { leaseMs: 1000 }),
      () => store.complete('k', 'token', { retentionMs: 1000 }),
      () => store.release('k', 'token'),
    ];
    for (const call of calls) {
      let pending: Promise<unknown> | undefined;
      expect(() => (pending = call())).not.toThrow();
      await expect(afterSettleBudget(pending!)).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
        message: expect.stringContaining('database is locked'),
      });
    }
  });

  it('rejects with INVALID_ARGUMENT, writing nothing, when its clock answers no finite time', async () => {
    let runs = 0;
    const counting: SqliteDatabaseLike = {
      exec: () => undefined,
      prepare: (sql) =>
        sql === PRAGMA ? NO_DRIVER_WAIT : { run: () => runs++, get: () => runs++, all: () => (runs++, []) },
    };
    const store = createSqliteStore({ database: counting, now: () => Number.NaN });
    await expect(store.claim('k', { leaseMs: 1000 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('now must return finite milliseconds'),
    });
    await expect(store.complete('k', 'token', { retentionMs: 1000 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    expect(runs).toBe(0);
  });

  it('rejects misuse of a call with INVALID_ARGUMENT, also as a rejection', async () => {
    const store = createSqliteStore({ database: database() });
    let pending: Promise<unknown> | undefined;
    expect(() => (pending = store.claim('', { leaseMs: 1000 }))).not.toThrow();
    await expect(pending).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  describe('a transaction other code holds open on the same connection', () => {
    /** A working database whose connection reports a transaction open while `open.now` is true. */
    function sharedConnection(name: 'isTransaction' | 'inTransaction') {
      const open = { now: true, runs: 0 };
      const run =
        <T>(result: T) =>
        (): T => {
          open.runs++;
          return result;
        };
      const db = {
        exec: () => undefined,
        prepare: (sql: string) =>
          sql === PRAGMA
            ? NO_DRIVER_WAIT
            : {
                run: run(undefined),
                get: run(undefined),
                all: run<unknown[]>(sql.includes('RETURNING') ? [{ token: 't' }] : []),
              },
        get [name]() {
          return open.now;
        },
      } as SqliteDatabaseLike;
      return { db, open };
    }

    // Written inside it, a claim would be undone by its ROLLBACK after being reported taken.
    for (const name of ['isTransaction', 'inTransaction'] as const) {
      it(`writes nothing until it ends (${name}), waiting with timers`, async () => {
        const { db, open } = sharedConnection(name);
        const store = createSqliteStore({ database: db, busyTimeoutMs: 2_000 });
        setTimeout(() => (open.now = false), 60);
        const started = performance.now();
        const claim = store.claim('k', { leaseMs: 1_000 });
        await new Promise((resolve) => setTimeout(resolve, 30));
        expect(open.runs).toBe(0);
        expect((await claim).status).toBe('claimed');
        expect(performance.now() - started).toBeGreaterThanOrEqual(55);
      });
    }

    it('rejects with STORE_UNAVAILABLE, naming the transaction, once busyTimeoutMs (a claim) has passed', async () => {
      vi.useFakeTimers();
      const { db, open } = sharedConnection('isTransaction');
      const store = createSqliteStore({ database: db, busyTimeoutMs: 100 });
      for (const call of [
        () => store.claim('k', { leaseMs: 1_000 }),
        () => store.complete('k', 'token', { retentionMs: 1_000 }),
        () => store.release('k', 'token'),
      ]) {
        await expect(afterSettleBudget<unknown>(call())).rejects.toMatchObject({
          code: 'STORE_UNAVAILABLE',
          message: expect.stringContaining('transaction open on this connection'),
        });
      }
      expect(open.runs).toBe(0);
    });

    it('rejects with STORE_UNAVAILABLE when the connection cannot say (closed)', async () => {
      let isOpen = true;
      const closing = {
        ...database(),
        get isTransaction(): boolean {
          if (isOpen) return false;
          throw new Error('database is not open');
        },
      };
      const store = createSqliteStore({ database: closing });
      isOpen = false;
      await expect(store.claim('k', { leaseMs: 1_000 })).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
        message: expect.stringContaining('database is not open'),
      });
      // Closed already when the store is made: the table cannot be set up, as the TSDoc says.
      expect(() => createSqliteStore({ database: closing })).toThrow(
        expect.objectContaining({
          code: 'STORE_UNAVAILABLE',
          message: expect.stringContaining('database is not open'),
        }),
      );
    });
  });

  describe('a file locked by another connection', () => {
    /** How each driver reports SQLITE_BUSY / SQLITE_LOCKED (primary and extended codes). */
    const busyErrors: Record<string, () => Error> = {
      'node:sqlite SQLITE_BUSY': () =>
        Object.assign(new Error('database is locked'), { code: 'ERR_SQLITE_ERROR', errcode: 5 }),
      'node:sqlite SQLITE_BUSY_SNAPSHOT': () =>
        Object.assign(new Error('database is locked'), { code: 'ERR_SQLITE_ERROR', errcode: 517 }),
      'node:sqlite SQLITE_LOCKED': () =>
        Object.assign(new Error('database table is locked'), { code: 'ERR_SQLITE_ERROR', errcode: 6 }),
      // Deno's node:sqlite, from exec() (the table's set-up): no errcode, SQLite's own message.
      'Deno node:sqlite exec SQLITE_BUSY': () =>
        Object.assign(new Error('database is locked'), { code: 'ERR_SQLITE_ERROR' }),
      'bun:sqlite SQLITE_BUSY': () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY', errno: 5 }),
      'better-sqlite3 SQLITE_BUSY_RECOVERY': () =>
        Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY_RECOVERY' }),
      'better-sqlite3 SQLITE_LOCKED_SHAREDCACHE': () =>
        Object.assign(new Error('database table is locked'), { code: 'SQLITE_LOCKED_SHAREDCACHE' }),
    };

    /** A database whose statements throw `error()` for the first `failures` runs, counting every run. */
    function lockedFor(failures: number, error: () => Error) {
      const counter = { runs: 0 };
      const step =
        <T>(result: T) =>
        (): T => {
          counter.runs++;
          if (counter.runs <= failures) throw error();
          return result;
        };
      const db: SqliteDatabaseLike = {
        exec: () => undefined,
        prepare: (sql) =>
          sql === PRAGMA
            ? NO_DRIVER_WAIT
            : {
                run: step(undefined),
                get: step(undefined),
                all: step<unknown[]>(sql.includes('RETURNING') ? [{ token: 't' }] : []),
              },
      };
      return { db, counter };
    }

    for (const [driver, error] of Object.entries(busyErrors)) {
      it(`tries again after timers (${driver}), never waiting inside the driver`, async () => {
        const { db, counter } = lockedFor(3, error);
        const store = createSqliteStore({ database: db, busyTimeoutMs: 2_000 });
        let ticks = 0;
        const ticker = setInterval(() => ticks++, 0);
        try {
          const result = await store.claim('k', { leaseMs: 1_000 });
          expect(result.status).toBe('claimed');
        } finally {
          clearInterval(ticker);
        }
        // Three busy attempts, then the sweep and the claim.
        expect(counter.runs).toBe(5);
        // The waits were timers: other work ran in between.
        expect(ticks).toBeGreaterThan(0);
      });
    }

    it('rejects a claim with STORE_UNAVAILABLE once busyTimeoutMs has passed, saying the file stayed locked', async () => {
      const { db, counter } = lockedFor(Infinity, busyErrors['node:sqlite SQLITE_BUSY']!);
      const store = createSqliteStore({ database: db, busyTimeoutMs: 150 });
      const started = performance.now();
      await expect(store.claim('k', { leaseMs: 1_000 })).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
        message: expect.stringMatching(/locked by another connection for 150 ms.*database is locked/),
      });
      const took = performance.now() - started;
      expect(took).toBeGreaterThanOrEqual(140);
      expect(took).toBeLessThan(1_000);
      expect(counter.runs).toBeGreaterThan(2);
    });

    // Under a burst, payhook's own workers on one file can find it locked at every try for a second: a completion
    // given up then left the delivery claimed, and a copy after the lease was handled a second time.
    it('keeps a completion or a release trying for 4 s at least, whatever busyTimeoutMs', async () => {
      vi.useFakeTimers();
      for (const busyTimeoutMs of [0, 150]) {
        const { db, counter } = lockedFor(Infinity, busyErrors['node:sqlite SQLITE_BUSY']!);
        const store = createSqliteStore({ database: db, busyTimeoutMs });
        for (const call of [
          () => store.complete('k', 'token', { retentionMs: 1_000 }),
          () => store.release('k', 'token'),
        ]) {
          const before = counter.runs;
          let ended = false;
          const pending = call().finally(() => (ended = true));
          pending.catch(() => {});
          await vi.advanceTimersByTimeAsync(SETTLE_BUDGET_MS - 100);
          expect(ended).toBe(false);
          await expect(afterSettleBudget(pending)).rejects.toMatchObject({
            code: 'STORE_UNAVAILABLE',
            message: expect.stringMatching(/locked by another connection for 4000 ms.*database is locked/),
          });
          expect(counter.runs - before).toBeGreaterThan(50);
        }
        // Once the file is free within that time, the completion lands.
        const freed = lockedFor(3, busyErrors['node:sqlite SQLITE_BUSY']!);
        const store2 = createSqliteStore({ database: freed.db, busyTimeoutMs });
        await expect(afterSettleBudget(store2.complete('k', 'token', { retentionMs: 1_000 }))).resolves.toBe(undefined);
      }
    });

    it('does not wait at all with busyTimeoutMs 0 (a claim)', async () => {
      const { db, counter } = lockedFor(Infinity, busyErrors['bun:sqlite SQLITE_BUSY']!);
      const store = createSqliteStore({ database: db, busyTimeoutMs: 0 });
      await expect(store.claim('k', { leaseMs: 1_000 })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      expect(counter.runs).toBe(1);
    });

    it('tries again exactly the errors whose SQLite code is BUSY or LOCKED, primary or extended (property)', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: -0xffff, max: 0xffff }),
          fc.constantFrom('errcode', 'errno'),
          async (code, field) => {
            const { db, counter } = lockedFor(1, () =>
              Object.assign(new Error(`sqlite error ${code}`), { [field]: code }),
            );
            const store = createSqliteStore({ database: db, busyTimeoutMs: 500 });
            const outcome = await store.release('k', 'token').then(
              () => 'done',
              (error: { code?: string }) => error.code,
            );
            const busy = code >= 0 && ((code & 0xff) === 5 || (code & 0xff) === 6);
            expect(outcome).toBe(busy ? 'done' : 'STORE_UNAVAILABLE');
            expect(counter.runs).toBe(busy ? 2 : 1);
          },
        ),
        { numRuns: 300 },
      );
    });
  });
});
