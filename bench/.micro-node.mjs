// temp: in-process CPU per delivery of payhook/node vs the bare node receiver, no sockets
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { makeDeliveries, PUBLIC_KEY_PEM } from './deliveries.mjs';
import { bareNodeReceiver } from './bare.mjs';
const dir = process.env.PKG ?? process.cwd();
const { createNodeWebhookHandler } = await import(pathToFileURL(`${dir}/dist/node.js`).href);
const { createMemoryStore } = await import(pathToFileURL(`${dir}/dist/index.js`).href);
const N = Number(process.env.N ?? 6000);
const deliveries = await makeDeliveries(N * 2);
function fakeReq(d) {
  const req = Readable.from([d.bodyBytes]);
  req.method = 'POST'; req.url = d.url; req.headers = { ...d.headers, 'content-length': String(d.bodyBytes.length) };
  return req;
}
function fakeRes(done) {
  return { statusCode: 200, headersSent: false, setHeader() {}, writeHead() { return this; }, end(b) { done(b); }, once() {}, on() {} };
}
const payhook = createNodeWebhookHandler({ publicKeys: PUBLIC_KEY_PEM, allowAnyHost: true, store: createMemoryStore(), onPayment() {}, logger: false });
const bare = bareNodeReceiver(PUBLIC_KEY_PEM).listener;
const run = (listener, d) => new Promise((resolve) => listener(fakeReq(d), fakeRes(resolve)));
async function measure(listener, slice) {
  const c0 = process.cpuUsage(); const t0 = performance.now();
  for (const d of slice) await run(listener, d);
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / slice.length, wall: (performance.now() - t0) * 1000 / slice.length };
}
const which = process.argv[2] ?? 'both';
for (let round = 0; round < 4; round++) {
  const a = deliveries.slice(round * 1500, round * 1500 + 1500), b = deliveries.slice(N + round * 1500, N + round * 1500 + 1500);
  const out = [];
  if (which !== 'payhook') out.push(['bare', await measure(bare, a)]);
  if (which !== 'bare') out.push(['payhook', await measure(payhook, b)]);
  console.log(round, out.map(([n, m]) => `${n} ${m.cpu.toFixed(1)}µs cpu ${m.wall.toFixed(1)}µs wall`).join('  |  '));
}
