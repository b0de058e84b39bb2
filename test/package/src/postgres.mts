// payhook/postgres with no @types/node and no pg or postgres.js types
// installed: the clients are structural.
import { createPostgresInbox, createPostgresStore, type DedupStore, type PostgresInbox } from 'payhook/postgres';

export function store(client: Parameters<typeof createPostgresStore>[0]['client']): DedupStore {
  return createPostgresStore({ client, table: 'shop.payhook_dedup' });
}

export function inbox(client: Parameters<typeof createPostgresInbox>[0]['client']): PostgresInbox {
  return createPostgresInbox({ client });
}
