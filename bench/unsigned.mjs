// What an unsigned request costs the receiver: a body of the largest size the defaults accept, made of tiny keys
// (the most parsing and sorting per byte), with a fresh timestamp and either a junk signature of the right length
// or a genuine signature of another delivery (which every merchant of the service holds: the service signs all of
// them with one key), which no cheap test can tell from this body's. Under the genuine signature the body is read,
// so it is also measured with its names under one key: not refused for its width, it is parsed and written out whole
// for the canonical string, the costlier of the two.
import { median } from './lib.mjs';

const REPEATS = 12;
const SKIPPED = 2; // the first calls warm the JIT up

// Keys of letters of both cases, digits and punctuation, in a shuffled order: the en-US collator's costliest
// comparisons (keys of one class in order, `k0`, `k1`…, sort at half the cost).
const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~!$';

function tinyKeys(count) {
  const keys = [];
  for (let i = 0; keys.length < count; i++) {
    let key = '';
    for (let n = i; key === '' || n > 0; n = Math.floor(n / ALPHABET.length)) key += ALPHABET[n % ALPHABET.length];
    keys.push(key);
  }
  // A fixed shuffle (a linear congruential sequence), so every run sorts the same order.
  for (let i = keys.length - 1, seed = 12_345; i > 0; i--) {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    const j = seed % (i + 1);
    [keys[i], keys[j]] = [keys[j], keys[i]];
  }
  return keys;
}

function unsignedRequest(limit, signature, underOneKey) {
  const keys = tinyKeys(Math.ceil(limit / 6));
  const [open, close] = underOneKey ? ['{"a":{', '}}'] : ['{', '}'];
  let body = open;
  for (let i = 0; body.length < limit - 16; i++) body += `${i === 0 ? '' : ','}"${keys[i]}":0`;
  body += close;
  const headers = {
    host: 'shop.example.kg',
    'content-type': 'application/json',
    signature,
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
 * store, default options but a silent logger) of the build whose entries are `core` and `web`, under `signature`,
 * with the names at the top level or `underOneKey`.
 */
async function costUnder(core, web, pem, signature, underOneKey = false) {
  const limit = core.DEFAULT_MAX_BODY_BYTES ?? 1_048_576;
  const { body, headers } = unsignedRequest(limit, signature, underOneKey);
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
      // 401 (the signature), or 400 INVALID_BODY for a body refused before its signature is checked.
      if (response.status !== 401 && response.status !== 400) {
        throw new Error(`the handler answered ${response.status} to an unsigned request`);
      }
    },
    () => new Request(url, { method: 'POST', headers, body }),
  );
  return { bytes, verify, handler: handled };
}

/**
 * The costs of the unsigned maximal body under a junk signature and under a genuine one of another delivery, the
 * latter also with the names under one key.
 */
export async function unsignedCost(core, web, pem, genuineSignature) {
  return {
    junk: await costUnder(core, web, pem, Buffer.alloc(256, 7).toString('base64')),
    genuine: await costUnder(core, web, pem, genuineSignature),
    underOneKey: await costUnder(core, web, pem, genuineSignature, true),
  };
}
