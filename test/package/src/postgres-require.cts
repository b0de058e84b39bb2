import { createPostgresInbox, createPostgresStore, type PostgresStore } from 'payhook/postgres';

export type Store = PostgresStore;
export type Create = typeof createPostgresStore;
export type CreateInbox = typeof createPostgresInbox;
