// The Hono app on Node, through @hono/node-server.
import { serve } from '@hono/node-server';
import { app } from './app.mjs';

const hostname = process.env.HOST ?? '127.0.0.1';
serve({ fetch: app.fetch, hostname, port: Number(process.env.PORT ?? 3000) }, (info) => {
  console.log(`listening on http://${hostname}:${info.port}`);
});
