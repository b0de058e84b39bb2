// payhook/sqlite on every runtime it claims (Node 22 and 24 and Deno through
// node:sqlite, Bun through bun:sqlite), each in its own process on a real
// database file: the shared store contract, memory across a crash (kill -9,
// then a new process on the same file), and two processes racing one key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeContract } from '../dedup/contract.js';
import { expectDistinctKeys } from '../helpers/distinct-keys.js';
import { databaseFile, runScenario, startStore, type RunningStore, type Runtime } from './runtimes.js';
import { warmBinaryStrings } from '../helpers/fast-check.js';

beforeAll(warmBinaryStrings);

const runtimes: Runtime[] = ['node22', 'node24', 'deno', 'bun'];

for (const runtime of runtimes) {
  describe(`SQLite store on ${runtime}`, () => {
    const file = databaseFile();
    const running: RunningStore[] = [];
    let first: RunningStore;
    beforeAll(async () => {
      first = await startStore(runtime, file);
      running.push(first);
    });
    afterAll(async () => {
      await Promise.all(running.map((process) => process.kill()));
    });

    storeContract(`SQLite (${runtime})`, () => first.store);

    it('keeps any two different keys apart, lone surrogates and NUL included (property)', async () => {
      await expectDistinctKeys(first.store, 100);
    });

    it('remembers completed and claimed deliveries after a kill -9, in a new process on the file', async () => {
      const ownFile = databaseFile();
      const own = await startStore(runtime, ownFile);
      running.push(own);
      const done = `restart-done-${Date.now()}`;
      const held = `restart-held-${Date.now()}`;
      const claim = await own.store.claim(done, { leaseMs: 60_000 });
      if (claim.status !== 'claimed') throw new Error(claim.status);
      await own.store.complete(done, claim.token, { retentionMs: 60_000 });
      expect((await own.store.claim(held, { leaseMs: 60_000 })).status).toBe('claimed');
      await own.kill();
      // The same file, a new process: nothing was lost with the old one.
      const again = await startStore(runtime, ownFile);
      running.push(again);
      expect(await again.store.claim(done, { leaseMs: 60_000 })).toEqual({ status: 'completed' });
      expect(await again.store.claim(held, { leaseMs: 60_000 })).toEqual({ status: 'in-progress' });
    });

    it('grants exactly one claim when two processes on the same file race for one key', async () => {
      const second = await startStore(runtime, file);
      running.push(second);
      const key = `two-processes-${Date.now()}`;
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? first : second).store.claim(key, { leaseMs: 10_000 })),
      );
      expect(results.filter((result) => result.status === 'claimed')).toHaveLength(1);
      expect(results.filter((result) => result.status === 'in-progress')).toHaveLength(59);
    });

    // SQLite's default rollback journal: a claim cannot commit while another connection reads the file. The
    // claim must then be tried again, never reported taken with nothing stored (a second copy would be claimed too).
    it('stores a claim whose commit first met another connection reading the file, or does not report it', async () => {
      expect(await runScenario(runtime, 'commit-busy.mjs')).toEqual({
        claim: 'claimed',
        rows: 1,
        second: 'in-progress',
      });
    });

    // Rollback journal: while another connection holds the file, even finding the existing table waits for it.
    // Creating the store threw at once then, saying the file had stayed locked for busyTimeoutMs.
    it('starts while another connection holds the file, and sets up in its first call, waiting for the lock', async () => {
      expect(await runScenario(runtime, 'locked-start.mjs')).toEqual({
        created: 'ok',
        claim: 'claimed',
        waited: true,
        outlasted: 'STORE_UNAVAILABLE',
        said: true,
      });
    });

    // A file this process may not write fails every claim alike: answered 503 for ever, it read as a store outage.
    it('reports a read-only database as a misconfiguration naming the fix, not as an outage', async () => {
      expect(await runScenario(runtime, 'read-only.mjs')).toEqual({ code: 'INVALID_ARGUMENT', fix: true });
    });

    // Each fault below fails every retry alike, or can be mended by the store: answered 503 for ever (an outage that
    // is none), with a fix that does not apply, or with the process stopped inside the driver.
    it('names a driver wait, a replaced file and a foreign table as misconfiguration, and remakes a dropped table', async () => {
      const misconfigured = (fix: string) => ({ code: 'INVALID_ARGUMENT', message: expect.stringContaining(fix) });
      expect(await runScenario(runtime, 'lasting-faults.mjs')).toEqual({
        driverWait: misconfigured('waits 5000 ms inside the driver for a locked file, stopping the whole process'),
        memory: ['claimed', 0],
        moved: misconfigured('The file was replaced or deleted under this connection: open it again'),
        foreign: misconfigured('Table "payhook_deliveries" has another shape: give the store its own (option table)'),
        columns: misconfigured('Table "payhook_deliveries" has another shape: give the store its own (option table)'),
        // The records went with the table, as with the file; the store makes it again and goes on.
        dropped: ['claimed', 'claimed'],
      });
    });

    // node:sqlite (Bun's too) can hand every row of a connection back as an array. A handled delivery sent
    // again must still read as completed: read as in-progress, it got 409 for the whole retention, then ran again.
    it('tells a completed delivery from a held one on a connection that returns rows as arrays', async () => {
      expect(await runScenario(runtime, 'row-arrays.mjs')).toEqual({
        arrays: true,
        completed: 'completed',
        held: 'in-progress',
      });
    });

    // The merchant's one connection, with another delivery's transaction open across an await: a claim written
    // inside it would be undone by its ROLLBACK after being reported taken, and the next copy claimed as well.
    it('waits for a transaction other code holds open on its connection, never writing inside it', async () => {
      expect(await runScenario(runtime, 'shared-transaction.mjs')).toEqual({
        first: 'claimed',
        second: 'in-progress',
        rows: 1,
        outlasted: 'STORE_UNAVAILABLE',
        afterRollback: 'claimed',
      });
    });
  });
}
