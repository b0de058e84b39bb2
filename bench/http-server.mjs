// A server for the HTTP figures, run in its own process by bench/http.mjs so that the load generator and the server
// do not share an event loop or a thread pool.
//   node bench/http-server.mjs payhook-node   node:http + payhook/node createNodeWebhookHandler + memory store
//   node bench/http-server.mjs payhook-web    payhook/web createWebhookHandler + memory store, served on node:http
//                                             through @hono/node-server's getRequestListener (see serveFetch)
//   node bench/http-server.mjs bare-node      node:http + a receiver written by hand with node:crypto (bench/bare.mjs)
//   node bench/http-server.mjs bare-web       the same by hand with Web Crypto, through the same adaptor as payhook-web
//   node bench/http-server.mjs bare-web-stream  the same, reading request.body as a stream (as payhook/web reads a
//                                             body that declares no length)
//   node bench/http-server.mjs peer:<id>      a webhook library's own server (bench/peers.mjs)
//   node bench/http-server.mjs peer-bare:<id> the same checks as that library, by hand with node:crypto
// The parent sends { pem, storeOptions, packageDir?, webAdaptor? } over IPC (packageDir: another build of payhook for the
// payhook modes); the server answers { port } once listening; 'start' marks the start of the measured window;
// 'stats' is answered with { handled, answered, cpuMicros, systemMicros } (CPU µs of this process, all threads, and
// the kernel's part of them, since 'start'); 'exit' closes and exits.
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { getRequestListener } from '@hono/node-server';
import { bareNodeReceiver, bareWebReceiver } from './bare.mjs';
import { peerBareListener, peerListener } from './peers.mjs';

const mode = process.argv[2];

function reply(message) {
  process.send?.(message);
}

/**
 * The fetch-to-node:http adaptor both Web servers use, so that their ratio compares the receivers alone: by default
 * @hono/node-server's getRequestListener (what a Hono app on Node runs); with setup.webAdaptor 'node', a minimal one
 * by hand on Node's own classes (the body as Readable.toWeb, the answer's bytes written back).
 */
function serveFetch(fetch, adaptor) {
  if (adaptor !== 'node') return getRequestListener((request) => fetch(request));
  return async (req, res) => {
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
    const bodyless = req.method === 'GET' || req.method === 'HEAD';
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url}`, {
      method: req.method,
      headers,
      body: bodyless ? undefined : Readable.toWeb(req),
      duplex: 'half',
    });
    const response = await fetch(request);
    const body = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, Object.fromEntries(response.headers)).end(body);
  };
}

async function payhookHandler(setup, web) {
  const dir = setup.packageDir;
  const entry = (name) => (dir ? pathToFileURL(`${dir}/dist/${name}.js`).href : `payhook/${name}`);
  const { createMemoryStore } = await import(dir ? pathToFileURL(`${dir}/dist/index.js`).href : 'payhook');
  let handled = 0;
  const options = {
    publicKeys: setup.pem,
    // The load generator sends the Host each delivery was signed for; a pinned webhookUrl costs the same.
    allowAnyHost: true,
    store: createMemoryStore(setup.storeOptions ?? {}),
    onPayment() {
      handled++;
    },
  };
  let listener;
  if (web) {
    const { createWebhookHandler } = await import(entry('web'));
    listener = serveFetch(createWebhookHandler(options), setup.webAdaptor);
  } else {
    const { createNodeWebhookHandler } = await import(entry('node'));
    listener = createNodeWebhookHandler(options);
  }
  return {
    listener,
    stats: () => ({ handled }),
    reset() {
      handled = 0;
    },
  };
}

async function makeListener(setup) {
  if (mode === 'payhook-node') return payhookHandler(setup, false);
  if (mode === 'payhook-web') return payhookHandler(setup, true);
  if (mode === 'bare-node') return bareNodeReceiver(setup.pem);
  if (mode === 'bare-web' || mode === 'bare-web-stream') {
    const { fetch, stats, reset } = await bareWebReceiver(setup.pem, { stream: mode === 'bare-web-stream' });
    return { listener: serveFetch(fetch, setup.webAdaptor), stats, reset };
  }
  if (mode.startsWith('peer:')) return peerListener(mode.slice(5));
  if (mode.startsWith('peer-bare:')) return peerBareListener(mode.slice(10));
  throw new Error(`unknown mode ${mode}`);
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
            cpuMicros: used.user + used.system,
            systemMicros: used.system,
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
