// Issue 14's explain findings: payhook's own test key is named, an unknown
// host asks for the registered URL, and a prefix stripped by a proxy is
// worded apart from one stripped by the app's router.
import { describe, expect, it } from 'vitest';
import { explainVerificationFailure, type ExplainRequest } from '../src/explain/index.js';
import { createTestWebhook, signWebhook, TEST_KEY_PAIR } from '../src/testing/index.js';

const NOW = 1763712000000;

async function delivery(url: string) {
  return signWebhook(createTestWebhook({ now: NOW }), { url, timestamp: NOW });
}

function received(
  signed: { headers: Readonly<Record<string, string>>; body: string },
  url: string,
  headers: Record<string, string> = {},
): ExplainRequest {
  return { method: 'POST', url, headers: { ...signed.headers, ...headers }, body: signed.body };
}

const testKeys = { publicKeys: TEST_KEY_PAIR.publicKey, now: NOW };

describe("payhook's published test key", () => {
  it('is named when a test delivery reaches a production receiver, with the fix', async () => {
    const signed = await delivery('https://shop.example.kg/webhooks/payments');
    const diagnosis = await explainVerificationFailure(signed, { environment: 'production', now: NOW });
    expect(diagnosis.code).toBe('SIGNATURE_MISMATCH');
    expect(diagnosis.keyName).toBe('payhook-test');
    expect(diagnosis.changes).toEqual([{ part: 'key', received: 'service-production', expected: 'payhook-test' }]);
    expect(diagnosis.fix).toContain("payhook's published test key");
    expect(diagnosis.fix).toContain('never accept that key in production');
    expect(diagnosis.tried.keys).toContain('payhook-test');
  });

  it('is found together with a URL change, and the service keys go by their conformance names', async () => {
    const signed = await delivery('https://shop.example.kg/api/hook');
    const diagnosis = await explainVerificationFailure(received(signed, '/hook'), {
      environment: ['production', 'beta'],
      now: NOW,
    });
    expect(diagnosis.keyName).toBe('payhook-test');
    expect(diagnosis.changes).toEqual([
      { part: 'path', received: '/hook', expected: '/api/hook' },
      { part: 'key', received: 'service-production, service-beta', expected: 'payhook-test' },
    ]);
  });
});

describe('an unknown host', () => {
  it('asks for the registered URL when Host was rewritten with no X-Forwarded-Host', async () => {
    const signed = await delivery('https://shop.example.kg/webhooks/payments');
    const diagnosis = await explainVerificationFailure(
      received(signed, '/webhooks/payments', { host: 'internal:8080' }),
      testKeys,
    );
    expect(diagnosis.changes).toEqual([]);
    expect(diagnosis.message).toContain('--registered-url');
    expect(diagnosis.fix).toContain('registeredUrl');
    // Given it, the search finds the host at once.
    const withUrl = await explainVerificationFailure(
      received(signed, '/webhooks/payments', { host: 'internal:8080' }),
      { ...testKeys, registeredUrl: 'https://shop.example.kg/webhooks/payments' },
    );
    expect(withUrl.changes).toEqual([{ part: 'host', received: 'internal:8080', expected: 'shop.example.kg' }]);
  });

  it('asks for it when there is no Host at all', async () => {
    const signed = await delivery('https://shop.example.kg/webhooks/payments');
    const { host: _host, ...hostless } = signed.headers;
    const diagnosis = await explainVerificationFailure(
      { ...signed, url: '/webhooks/payments', headers: hostless },
      testKeys,
    );
    expect(diagnosis.code).toBe('MISSING_HOST');
    expect(diagnosis.message).toContain('--registered-url');
  });

  it('does not ask for it when a forwarding header named a host (the body was tampered)', async () => {
    const signed = await delivery('https://shop.example.kg/webhooks/payments');
    const request = received(signed, '/webhooks/payments', {
      host: 'internal:8080',
      'x-forwarded-host': 'shop.example.kg',
    });
    const tampered = { ...request, body: signed.body.replace('"amount":100', '"amount":1000') };
    const diagnosis = await explainVerificationFailure(tampered, testKeys);
    expect(diagnosis.changes).toEqual([]);
    expect(diagnosis.message).not.toContain('--registered-url');
    expect(diagnosis.fix).toBeNull();
  });
});

describe('a stripped path prefix', () => {
  it('stripped by a proxy that says so (X-Forwarded-Prefix) is the proxy, without req.originalUrl', async () => {
    const signed = await delivery('https://shop.example.kg/shop-7/payhook-in');
    const diagnosis = await explainVerificationFailure(
      received(signed, '/payhook-in', { 'x-forwarded-prefix': '/shop-7' }),
      testKeys,
    );
    expect(diagnosis.changes).toEqual([{ part: 'path', received: '/payhook-in', expected: '/shop-7/payhook-in' }]);
    expect(diagnosis.fix).toContain('your proxy strips the prefix `/shop-7`');
    expect(diagnosis.fix).toContain("set `webhookUrl: 'https://shop.example.kg/shop-7/payhook-in'`");
    expect(diagnosis.fix).not.toContain('originalUrl');
    expect(diagnosis.fix).not.toContain('router');
  });

  it('stripped by a proxy that keeps the original in X-Original-URI is the proxy too', async () => {
    const signed = await delivery('https://shop.example.kg/api/hook');
    const diagnosis = await explainVerificationFailure(
      received(signed, '/hook', { 'x-original-uri': '/api/hook' }),
      testKeys,
    );
    expect(diagnosis.changes).toEqual([{ part: 'path', received: '/hook', expected: '/api/hook' }]);
    expect(diagnosis.fix).toContain('your proxy strips the prefix `/api`');
    expect(diagnosis.fix).not.toContain('originalUrl');
  });

  it('with no proxy trace is the router (a mounted sub-app), and mentions req.originalUrl', async () => {
    const signed = await delivery('https://shop.example.kg/api/hook');
    const diagnosis = await explainVerificationFailure(received(signed, '/hook'), testKeys);
    expect(diagnosis.changes).toEqual([{ part: 'path', received: '/hook', expected: '/api/hook' }]);
    expect(diagnosis.fix).toContain('your router strips the prefix `/api`');
    expect(diagnosis.fix).toContain('req.originalUrl');
    expect(diagnosis.fix).not.toContain('proxy');
  });
});
