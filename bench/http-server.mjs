// A server for the HTTP figures, run in its own process by bench/http.mjs so
// that the load generator and the server do not share an event loop.
//   node bench/http-server.mjs bare     node:http + raw node:crypto verify only
//   node bench/http-server.mjs payhook  node:http + createNodeWebhookHandler + memory store
//   (with setup.packageDir: the same, from another build of payhook, for a same-run A/B)
// The parent sends { pem, canonicalByBody? } over IPC; the server answers
// { port } once listening; 'start' marks the start of the load; 'stats' is
// answered with { handled, answered, cpuPerRequest } (CPU µs of this process,
// all threads, per request answered since 'start'); 'exit' closes and exits.
import { createPublicKey, verify } from 'node:crypto';
import { createServer } from 'node:http';

const mode = process.argv[2];

function reply(message) {
  process.send?.(message);
}

async function makeListener(setup) {
  if (mode === 'bare') {
    const key = createPublicKey(setup.pem);
    const canonicalByBody = setup.canonicalByBody;
    const listener = (req, res) => {
      const chunks = [];
      req.on('data', (chunk) => chunks.push(chunk));
      req.on('end', () => {
        const canonical = canonicalByBody.get(Buffer.concat(chunks).toString('utf8'));
        const signature = req.headers.signature;
        const ok =
          req.method === 'POST' &&
          canonical !== undefined &&
          typeof signature === 'string' &&
          verify('sha256', canonical, key, Buffer.from(signature, 'base64'));
        res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
        res.end(ok ? '{"ok":true}' : '{"ok":false}');
      });
    };
    return { listener, stats: () => ({ handled: null }), reset() {} };
  }
  if (mode === 'payhook') {
    const dir = setup.packageDir;
    const { createNodeWebhookHandler } = await import(dir ? `${dir}/dist/node.js` : 'payhook/node');
    const { createMemoryStore } = await import(dir ? `${dir}/dist/index.js` : 'payhook');
    let handled = 0;
    const listener = createNodeWebhookHandler({
      publicKeys: setup.pem,
      // The load generator sends the Host each delivery was signed for; a
      // pinned webhookUrl would cost the same (one header lookup fewer).
      allowAnyHost: true,
      store: createMemoryStore(setup.storeOptions ?? {}),
      onPayment() {
        handled++;
      },
    });
    return {
      listener,
      stats: () => ({ handled }),
      reset() {
        handled = 0;
      },
    };
  }
  throw new Error(`unknown mode ${mode}; expected bare or payhook`);
}

process.once('message', async (setup) => {
  try {
    const { listener, stats, reset } = await makeListener(setup);
    const server = createServer(listener);
    server.keepAliveTimeout = 30_000;
    let answered = 0;
    let cpu = process.cpuUsage();
    server.on('request', (_req, res) => res.once('finish', () => answered++));
    server.listen(0, '127.0.0.1', () => reply({ port: server.address().port }));
    process.on('message', (message) => {
      if (message === 'start') {
        reset();
        answered = 0;
        cpu = process.cpuUsage();
      }
      if (message === 'stats') {
        const used = process.cpuUsage(cpu);
        reply({
          stats: {
            ...stats(),
            answered,
            cpuPerRequest: (used.user + used.system) / answered,
            systemPerRequest: used.system / answered,
          },
        });
      }
      if (message === 'exit') {
        server.closeAllConnections();
        server.close(() => process.exit(0));
      }
    });
  } catch (error) {
    reply({ error: String(error?.stack ?? error) });
    process.exit(1);
  }
});
