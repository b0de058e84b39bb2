// What an unsigned request costs the receiver: a body of the largest size the defaults accept, made of tiny keys
// (the most parsing and sorting per byte), with a junk signature of the right length and a fresh timestamp.
import { median } from './lib.mjs';

const REPEATS = 12;
const SKIPPED = 2; // the first calls warm the JIT up

function unsignedRequest(limit) {
  let body = '{';
  for (let i = 0; body.length < limit - 16; i++) body += `${i === 0 ? '' : ','}"k${i.toString(36)}":0`;
  body += '}';
  const headers = {
    host: 'shop.example.kg',
    'content-type': 'application/json',
    signature: Buffer.alloc(256, 7).toString('base64'),
    'x-api-timestamp': String(Date.now()),
  };
  return { body, headers };
}

/**
 * Times `call` REPEATS times, one at a time (on what `prepare` made outside the timing), and returns the medians
 * of the wall time and of the event loop's busy time per call (performance.eventLoopUtilization: the time the
 * JavaScript thread was not idle), in ms.
 */
async function measure(call, prepare = () => undefined) {
  const wall = [];
  const busy = [];
  for (let i = 0; i < REPEATS; i++) {
    const input = prepare();
    const before = performance.eventLoopUtilization();
    const started = performance.now();
    await call(input);
    wall.push(performance.now() - started);
    busy.push(performance.eventLoopUtilization(before).active);
  }
  return { wallMs: median(wall.slice(SKIPPED)), busyMs: median(busy.slice(SKIPPED)) };
}

/**
 * The unsigned maximal body through `verifyWebhook` and through the payhook/web handler (a Web Request, the memory
 * store, default options but a silent logger) of the build whose entries are `core` and `web`.
 */
export async function unsignedCost(core, web, pem) {
  const limit = core.DEFAULT_MAX_BODY_BYTES ?? 1_048_576;
  const { body, headers } = unsignedRequest(limit);
  const bytes = Buffer.byteLength(body);
  const url = 'https://shop.example.kg/webhooks/payments';
  const verifyOptions = { publicKeys: pem };
  const verify = await measure(async () => {
    const result = await core.verifyWebhook({ method: 'POST', url, headers, body }, verifyOptions);
    if (result.ok) throw new Error('an unsigned request verified');
  });
  const handler = web.createWebhookHandler({
    publicKeys: pem,
    allowAnyHost: true,
    store: core.createMemoryStore(),
    logger: false,
    onPayment() {
      throw new Error('an unsigned request reached onPayment');
    },
  });
  const handled = await measure(
    async (request) => {
      const response = await handler(request);
      if (response.status !== 401) throw new Error(`the handler answered ${response.status} to an unsigned request`);
    },
    () => new Request(url, { method: 'POST', headers, body }),
  );
  return { bytes, verify, handler: handled };
}
