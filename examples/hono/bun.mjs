// The same Hono app on Bun: `bun hono/bun.mjs`.
import { app } from './app.mjs';

const server = Bun.serve({
  fetch: app.fetch,
  hostname: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.PORT ?? 3000),
});
console.log(`listening on http://${server.hostname}:${server.port}`);
