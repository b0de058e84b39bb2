// Every statement payhook sends to PostgreSQL, for review: a change to any of
// them shows up in this snapshot. Plain and schema-qualified tables.
import { describe, expect, it } from 'vitest';
import {
  MIGRATION_LOCK,
  MIGRATION_QUIET,
  controlSql,
  inboxSql,
  inboxSteps,
  storeSql,
  storeSteps,
  versionSql,
  versionTableOf,
} from '../../src/postgres/sql.js';

describe('payhook SQL', () => {
  for (const table of ['payhook_dedup', 'shop.payhook_dedup']) {
    it(`store statements on ${table}`, () => {
      expect({ steps: storeSteps(table), statements: storeSql(table) }).toMatchSnapshot();
    });
  }
  for (const table of ['payhook_inbox', 'shop.payment_inbox']) {
    it(`inbox statements on ${table}`, () => {
      expect({ steps: inboxSteps(table), statements: inboxSql(table) }).toMatchSnapshot();
    });
  }
  it('schema versions, the migration lock and transaction control', () => {
    expect(versionTableOf('payhook_inbox')).toBe('payhook_schema');
    expect(versionTableOf('shop.payment_inbox')).toBe('shop.payhook_schema');
    expect({
      lock: MIGRATION_LOCK,
      quiet: MIGRATION_QUIET,
      create: versionSql.create('shop.payhook_schema'),
      read: versionSql.read('shop.payhook_schema'),
      record: versionSql.record('shop.payhook_schema'),
      control: controlSql,
    }).toMatchSnapshot();
  });
  it('names no table but the one given', () => {
    const text = JSON.stringify([storeSql('a.t1'), storeSteps('a.t1'), inboxSql('a.t2'), inboxSteps('a.t2')]);
    const tables = new Set(
      text.match(/\b(?:FROM|INTO|UPDATE|TABLE|ON)\s+([a-z_.0-9]+)/g)?.map((m) => m.split(/\s+/)[1]),
    );
    // clock_timestamp (ON CONFLICT … clock_timestamp()) and the catalog the inbox's step 2 reads are not tables of ours.
    expect([...tables].sort()).toEqual(['a.t1', 'a.t2', 'clock_timestamp', 'pg_constraint']);
  });
});
