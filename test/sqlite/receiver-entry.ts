// What test/sqlite/receiver.mjs needs from the sources, bundled into one ESM
// file every runtime can import (see runtimes.ts): the SQLite store and the
// Web handler.
export { createSqliteStore } from '../../src/sqlite/index.js';
export { createWebhookHandler } from '../../src/web/index.js';
