// The tests' throw-away PostgreSQL cluster: the one starter in
// scripts/lib/postgres-server.mjs (the chaos run uses it too), typed here.
import { startPostgresServer as start } from '../../scripts/lib/postgres-server.mjs';

export interface PostgresServer {
  port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication, loopback only). */
  url: string;
  /** Stops the server, keeping its data (for restart tests). */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>;
  /** Stops the server and removes its data directory. */
  destroy(): Promise<void>;
}

export interface PostgresServerOptions {
  /**
   * Flush to disk on commit as a production server does. Off by default:
   * the tests kill clients and stop the server cleanly, never the machine,
   * so fsync only costs time there. The benchmark turns it on.
   */
  durable?: boolean;
}

export const startPostgresServer: (options?: PostgresServerOptions) => Promise<PostgresServer> = start;
