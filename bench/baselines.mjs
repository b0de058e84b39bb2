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
  const lines = [delivery.method.toLowerCase(), decodeURI(delivery.path), ['host:' + headers.host, ...apiHeaders].join('&')];
  if (delivery.query) {
    const params = [...new URLSearchParams(delivery.query)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    lines.push(params.map(([name, value]) => `${encodeURI(name)}=${encodeURI(value)}`).join('&'));
  }
  lines.push(JSON.stringify(sorted));
  return createVerify('RSA-SHA256').update(lines.join('\n')).verify(publicKey, headers.signature, 'base64');
}
