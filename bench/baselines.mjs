// The two baselines payhook is measured against, both written with node:crypto.
import { createPublicKey, createVerify, verify } from 'node:crypto';
import { PUBLIC_KEY_OBJECT, PUBLIC_KEY_PEM } from './deliveries.mjs';

/**
 * The one-thread ceiling: node:crypto's synchronous RSA verify with a
 * KeyObject created once, over the canonical string and signature already in
 * bytes. Nothing else is done: no header lookup, no JSON, no base64.
 */
export function rawVerify(delivery) {
  return verify('sha256', delivery.canonicalBytes, PUBLIC_KEY_OBJECT, delivery.signatureBytes);
}

/**
 * node:crypto's callback form of the same verify: it runs on libuv's thread
 * pool, so it shows how far several threads take node:crypto itself.
 */
export function rawVerifyAsync(delivery) {
  return new Promise((resolve, reject) => {
    verify('sha256', delivery.canonicalBytes, PUBLIC_KEY_OBJECT, delivery.signatureBytes, (error, ok) =>
      error ? reject(error) : resolve(ok),
    );
  });
}

/**
 * What merchants' snippets do for every delivery: read the PEM again, parse
 * the body and sort its keys with `localeCompare`, build the string, then
 * verify synchronously with createVerify.
 */
export function naiveReceiver(delivery) {
  const { headers } = delivery;
  const publicKey = createPublicKey(PUBLIC_KEY_PEM);
  const payload = JSON.parse(delivery.body);
  const sorted = {};
  for (const key of Object.keys(payload).sort((a, b) => a.localeCompare(b, 'en-US'))) sorted[key] = payload[key];
  const apiHeaders = Object.keys(headers)
    .filter((name) => name.toLowerCase().startsWith('x-api-'))
    .sort()
    .map((name) => `${name.toLowerCase()}:${headers[name]}`);
  const lines = [
    delivery.method.toLowerCase(),
    decodeURI(delivery.path),
    ['host:' + headers.host, ...apiHeaders].join('&'),
  ];
  if (delivery.query) {
    const params = [...new URLSearchParams(delivery.query)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    lines.push(params.map(([name, value]) => `${encodeURI(name)}=${encodeURI(value)}`).join('&'));
  }
  lines.push(JSON.stringify(sorted));
  return createVerify('RSA-SHA256').update(lines.join('\n')).verify(publicKey, headers.signature, 'base64');
}

/**
 * A floor, not a receiver: the least JavaScript any receiver that follows
 * the contract must run per delivery with Web Crypto, and nothing more. It
 * parses the body once, writes the body line (each key list's order sorted
 * once and cached, as payhook does), assembles and encodes the canonical
 * string, and calls `subtle.verify`. It is handed the sorted query line and
 * the decoded signature, and skips what payhook must also do: header
 * lookups, base64, payload validation, the timestamp window, the result.
 * Where even this stays below the raw figure, so must a full verifyWebhook.
 */
export function makeFloorReceiver(cryptoKey) {
  const collator = new Intl.Collator('en-US');
  const orders = new Map();
  const encoder = new TextEncoder();
  const algorithm = { name: 'RSASSA-PKCS1-v1_5' };
  return (delivery) => {
    const parsed = JSON.parse(delivery.body);
    const keys = Object.keys(parsed);
    const id = keys.join('\n');
    let order = orders.get(id);
    if (order === undefined) orders.set(id, (order = [...keys].sort(collator.compare)));
    const sorted = {};
    for (const key of order) sorted[key] = parsed[key];
    const { headers } = delivery;
    const canonical = `post\n${delivery.path}\nhost:${headers.host}&x-api-timestamp:${headers['x-api-timestamp']}\n${delivery.queryLine}${JSON.stringify(sorted)}`;
    return globalThis.crypto.subtle.verify(algorithm, cryptoKey, delivery.signatureBytes, encoder.encode(canonical));
  };
}
