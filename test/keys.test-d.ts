// The standard JsonWebKey types are accepted as keys without a cast: the DOM's
// (what crypto.subtle.exportKey('jwk', …) resolves to, every member optional)
// and node:crypto's (what KeyObject.export({ format: 'jwk' }) returns). Each
// call below fails the type check if the key it passes is refused.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expectTypeOf, it } from 'vitest';
import { importPublicKey, type KeyInput, type RsaJsonWebKey } from '../src/keys.js';
import { createNodeWebhookHandler } from '../src/node/index.js';
import { signWebhook, type PrivateKeyInput } from '../src/testing/index.js';
import { verifyWebhook } from '../src/verify-webhook.js';
import { createWebhookHandler } from '../src/web/index.js';

declare const domPublicJwk: JsonWebKey;
declare const domPrivateJwk: JsonWebKey;
declare const cryptoKey: CryptoKey;
const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
const nodePublicJwk = pair.publicKey.export({ format: 'jwk' });
const nodePrivateJwk = pair.privateKey.export({ format: 'jwk' });
const request = { method: 'POST', url: '/webhooks/payments', headers: {}, body: '' };
const onPayment = (): void => {};

describe('JSON Web Keys', () => {
  it('a DOM JsonWebKey and a node:crypto one are public keys', async () => {
    expectTypeOf(domPublicJwk).toExtend<KeyInput>();
    expectTypeOf(nodePublicJwk).toExtend<KeyInput>();
    await verifyWebhook(request, { publicKeys: domPublicJwk });
    await verifyWebhook(request, { publicKeys: [nodePublicJwk, domPublicJwk] });
    createWebhookHandler({ publicKeys: domPublicJwk, allowAnyHost: true, onPayment });
    createWebhookHandler({ publicKeys: [nodePublicJwk], allowAnyHost: true, onPayment });
    createNodeWebhookHandler({ publicKeys: nodePublicJwk, allowAnyHost: true, onPayment });
    await importPublicKey(await crypto.subtle.exportKey('jwk', cryptoKey));
  });

  it('a DOM JsonWebKey and a node:crypto one are private keys for signWebhook', async () => {
    expectTypeOf(domPrivateJwk).toExtend<PrivateKeyInput>();
    await signWebhook({}, { url: 'https://shop.example.kg/webhooks/payments', privateKey: domPrivateJwk });
    await signWebhook({}, { url: 'https://shop.example.kg/webhooks/payments', privateKey: nodePrivateJwk });
  });

  it('a JWK written out may carry the registered members, such as kid', () => {
    const jwk: RsaJsonWebKey = { kty: 'RSA', n: '…', e: 'AQAB', kid: 'payments-2025', use: 'sig', alg: 'RS256' };
    expectTypeOf(jwk).toExtend<KeyInput>();
  });
});
