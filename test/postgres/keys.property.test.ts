// Any string the service could put in a delivery id is a distinct key in the
// PostgreSQL store and a storable inbox row: NUL (which PostgreSQL text
// refuses) and lone surrogates (which UTF-8 cannot carry) included.
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresInbox, createPostgresStore } from '../../src/postgres/index.js';
import { parseWebhook } from '../../src/webhook/parse.js';
import { startPostgresServer, type PostgresServer } from '../helpers/postgres-server.js';
import { webhookBody } from '../helpers/sign.js';

let server: PostgresServer;
let pool: pg.Pool;

beforeAll(async () => {
  server = await startPostgresServer();
  pool = new pg.Pool({ connectionString: server.url, max: 10 });
  pool.on('error', () => {});
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await server?.destroy();
});

// Any UTF-16 code units: NUL, lone surrogates, quotes, pairs.
const units = fc.string({ unit: fc.nat(0xffff).map((code) => String.fromCharCode(code)), minLength: 1 });
const tricky = fc.oneof(
  units,
  fc.constantFrom('\0', '\ud800', '\udc00', '\ufffd', '"\\ud800"', '"\\u0000"', '"', 'a\0b', '\ud83d\ude00'),
);

describe('PostgreSQL keys, property-based', () => {
  it('keeps any two different keys apart and any key equal to itself', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(tricky, tricky, async (a, b) => {
        fc.pre(a !== b);
        const store = createPostgresStore({ client: pool, table: 'prop_keys', pruneEvery: 0, autoMigrate: true });
        const prefix = `${run++}:`;
        expect((await store.claim(prefix + a, { leaseMs: 60_000 })).status).toBe('claimed');
        expect((await store.claim(prefix + b, { leaseMs: 60_000 })).status).toBe('claimed');
        expect((await store.claim(prefix + a, { leaseMs: 60_000 })).status).toBe('in-progress');
      }),
      { numRuns: 150 },
    );
  });

  it('stores and hands back a delivery whatever its id holds', async () => {
    const inbox = createPostgresInbox({ client: pool, table: 'prop_inbox', autoMigrate: true });
    await fc.assert(
      fc.asyncProperty(tricky, async (suffix) => {
        const webhook = parseWebhook({ ...webhookBody(), id: `${crypto.randomUUID()}${suffix}_DEBIT` });
        await inbox.enqueue(webhook);
        await inbox.enqueue(webhook);
        let seen: unknown;
        expect(await inbox.processNext((received) => void (seen = received.raw))).toBe('done');
        expect(seen).toEqual(webhook.raw);
        expect(await inbox.processNext(() => {})).toBe('idle');
      }),
      { numRuns: 60 },
    );
  });
});
