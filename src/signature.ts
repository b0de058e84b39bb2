import { importKeys } from './lib/key-import.js';
import type { KeyInput, KeyOptions } from './lib/key-types.js';
import { signatureBytes, verifyWithKeys } from './lib/rsa-verify.js';
import { misuse } from './lib/misuse.js';

/**
 * Checks the `signature` header against a canonical string: base64 of an
 * RSASSA-PKCS1-v1_5 / SHA-256 signature over the string's UTF-8 bytes, made
 * with the service's private key. With several keys (key rotation, or
 * production and beta together) it resolves `true` when any of them verifies.
 *
 * The signature is decoded as leniently as the service's own verifier does:
 * standard or URL-safe alphabet, padding optional, surrounding whitespace
 * ignored. Anything else — an empty or absent header, stray characters, the
 * wrong length, a signature by another key — resolves `false`; it never throws
 * for a bad signature.
 *
 * Keys given as PEM are imported once and cached (see {@link importPublicKey}).
 *
 * @param canonical - the string from {@link buildCanonicalString}.
 * @param signature - the `signature` header as received.
 * @param publicKeys - one key or several; see {@link KeyInput}.
 * @throws PayhookError `INVALID_KEY` or `WEAK_KEY` for a key that is
 * unusable, `INVALID_ARGUMENT` for an empty key list or a non-string
 * canonical string. These are configuration mistakes, so they throw.
 *
 * @example
 * ```ts
 * import { buildCanonicalString, isTimestampFresh, PRODUCTION_PUBLIC_KEY, verifySignature } from 'payhook';
 *
 * // The URL you registered: the canonical string is built for it, not for the Host and path the request names,
 * // or a delivery signed for another merchant, sent here with its Host, would verify.
 * const registered = new URL('https://shop.example.kg/webhooks/payments');
 *
 * export async function handle(request: Request): Promise<Response> {
 *   const headers = new Headers(request.headers);
 *   headers.set('host', registered.host);
 *   const canonical = buildCanonicalString({
 *     method: request.method,
 *     path: registered.pathname,
 *     headers,
 *     query: registered.search,
 *     body: await request.text(),
 *   });
 *   const signature = request.headers.get('signature') ?? '';
 *   if (!(await verifySignature(canonical, signature, PRODUCTION_PUBLIC_KEY))) {
 *     return new Response('invalid signature', { status: 401 });
 *   }
 *   if (!isTimestampFresh(request.headers.get('x-api-timestamp'))) return new Response('stale', { status: 401 });
 *   return new Response('ok'); // verifyWebhook does all of this in one call, and parses the payload
 * }
 * ```
 */
export async function verifySignature(
  canonical: string,
  signature: string,
  publicKeys: KeyInput | readonly KeyInput[],
  options?: KeyOptions,
): Promise<boolean> {
  if (typeof canonical !== 'string') {
    throw misuse(`The canonical string must be a string, not ${typeof canonical}.`);
  }
  const keys = await importKeys(publicKeys, options);
  const bytes = signatureBytes(signature, keys);
  return bytes !== null && verifyWithKeys(keys, canonical, bytes);
}
