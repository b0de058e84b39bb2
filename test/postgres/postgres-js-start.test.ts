// A postgres.js transaction that never begins: after a database restart postgres.js 3.4 can leave sql.begin
// waiting for ever, its callback never called. Without a bound an inbox worker's loop waits with it, silently.
import { describe, expect, it } from 'vitest';
import type { PostgresJsTransactionLike } from '../../src/postgres/driver.js';
import { postgresJsTransactor } from '../../src/postgres/postgres-js.js';

type Callback = (tx: PostgresJsTransactionLike) => PromiseLike<unknown>;

const tx: PostgresJsTransactionLike = {
  unsafe: () => Promise.resolve([]),
  savepoint: (fn) => fn(tx),
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A postgres.js `sql` whose begin calls its callback after `delayMs` (never, when undefined). */
function sqlBeginning(delayMs: number | undefined) {
  const late: Promise<unknown>[] = [];
  const sql = {
    unsafe: () => Promise.resolve([]),
    begin(fn: Callback) {
      if (delayMs === undefined) return new Promise(() => {});
      const run = sleep(delayMs).then(() => fn(tx));
      late.push(run.then(undefined, (error: unknown) => error));
      return run;
    },
  };
  return { sql, late };
}

describe('a postgres.js transaction that does not begin', () => {
  it('is given up once the bound passes, as a failure naming postgres.js, and the work never runs', async () => {
    const { sql } = sqlBeginning(undefined);
    let ran = false;
    const started = performance.now();
    await expect(
      postgresJsTransactor(
        sql,
        'test',
        50,
      )(() => {
        ran = true;
        return Promise.resolve();
      }),
    ).rejects.toThrow(/postgres\.js did not begin a transaction within 0\.05 s/);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(ran).toBe(false);
  });

  it('runs nothing when postgres.js begins it after it was given up: the callback fails, so it is rolled back', async () => {
    const { sql, late } = sqlBeginning(120);
    let ran = false;
    await expect(
      postgresJsTransactor(
        sql,
        'test',
        30,
      )(() => {
        ran = true;
        return Promise.resolve();
      }),
    ).rejects.toThrow(/did not begin/);
    const [outcome] = await Promise.all(late);
    expect(outcome).toEqual(new Error('given up before it began'));
    expect(ran).toBe(false);
  });

  it('bounds only the start: work that began in time may take longer than the bound', async () => {
    const { sql } = sqlBeginning(5);
    const value = await postgresJsTransactor(
      sql,
      'test',
      40,
    )(async () => {
      await sleep(150);
      return 'done';
    });
    expect(value).toBe('done');
  });
});
