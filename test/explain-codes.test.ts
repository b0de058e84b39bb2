// explainVerificationFailure reports the failure verifyWebhook would report,
// and its search reads the body once however many variants it tries.
import { describe, expect, it } from 'vitest';
import { explainVerificationFailure, type ExplainRequest } from '../src/explain/index.js';
import { createTestWebhook, signWebhook, TEST_KEY_PAIR } from '../src/testing/index.js';
import { verifyWebhook } from '../src/verify-webhook.js';

/**
 * An already parsed body (as a framework's JSON parser hands it over) whose
 * `amount` counts how often it is read: the body line reads each member once.
 */
function countingBody(text: string): { body: object; reads: () => number } {
  const body = JSON.parse(text) as Record<string, unknown>;
  const amount = body['amount'];
  let reads = 0;
  Object.defineProperty(body, 'amount', {
    enumerable: true,
    get: () => {
      reads++;
      return amount;
    },
  });
  return { body, reads: () => reads };
}

const NOW = 1763712000000;
const options = { publicKeys: TEST_KEY_PAIR.publicKey, now: NOW };

async function signed(url = 'https://shop.example.kg/webhooks/payments') {
  return signWebhook(createTestWebhook({ now: NOW }), { url, timestamp: NOW });
}

/** The code verifyWebhook reports for a request (null when it verifies). */
async function verifyCode(request: ExplainRequest, with_: object = options): Promise<string | null> {
  const result = await verifyWebhook(request, with_);
  return result.ok ? null : result.error.code;
}

describe('explainVerificationFailure reports what verifyWebhook reports', () => {
  it.each([
    [
      'a query escape that decodes to a malformed one',
      (s: ExplainRequest): ExplainRequest => ({ ...s, url: `${s.url}?a=%25E0` }),
      'MALFORMED_QUERY',
    ],
    [
      'a malformed path escape',
      (s: ExplainRequest): ExplainRequest => ({ ...s, url: '/webhooks/%E0' }),
      'MALFORMED_PATH',
    ],
    [
      'a parsed body JSON cannot write (a BigInt)',
      (s: ExplainRequest): ExplainRequest => ({ ...s, body: { ...(JSON.parse(s.body as string) as object), big: 1n } }),
      'INVALID_BODY',
    ],
    [
      'no signature and a body that is not JSON',
      (s: ExplainRequest): ExplainRequest => ({
        ...s,
        headers: { ...(s.headers as Record<string, string>), signature: '' },
        body: '{',
      }),
      'MISSING_SIGNATURE',
    ],
    [
      'a signature of spaces',
      (s: ExplainRequest): ExplainRequest => ({
        ...s,
        headers: { ...(s.headers as Record<string, string>), signature: '   ' },
      }),
      'SIGNATURE_MISMATCH',
    ],
    [
      'no Host',
      (s: ExplainRequest): ExplainRequest => ({
        ...s,
        url: '/webhooks/payments',
        headers: { ...(s.headers as Record<string, string>), host: undefined as never },
      }),
      'MISSING_HOST',
    ],
  ])('%s', async (_name, change, expected) => {
    const delivery = await signed();
    const request = change({
      method: 'POST',
      url: '/webhooks/payments',
      headers: delivery.headers,
      body: delivery.body,
    });
    expect(await verifyCode(request)).toBe(expected);
    const diagnosis = await explainVerificationFailure(request, options);
    expect(diagnosis.code).toBe(expected);
    expect(diagnosis.ok).toBe(false);
  });
});

describe('explainVerificationFailure search cost', () => {
  it('reads the body once, whatever the number of variants tried', async () => {
    const delivery = await signed();
    // A tampered body: no variant verifies, so every host, path and query candidate is tried.
    const counted = countingBody(delivery.body.replace('"amount":', '"amount":1'));
    const request = {
      method: 'POST',
      url: '/internal/webhooks/payments?x=1',
      headers: {
        ...delivery.headers,
        host: 'internal:8080',
        'x-forwarded-host': 'shop.example.kg',
        'x-forwarded-prefix': '/api',
      },
      body: counted.body,
    };
    const diagnosis = await explainVerificationFailure(request, options);
    expect(diagnosis.code).toBe('SIGNATURE_MISMATCH');
    expect(diagnosis.checks).toBeGreaterThan(5);
    // Once to measure its depth, once to write the body line: never once per variant.
    expect(counted.reads()).toBe(2);
  });

  it('checks no variant when no key has the signature length', async () => {
    const delivery = await signed();
    const counted = countingBody(delivery.body);
    const diagnosis = await explainVerificationFailure(
      {
        method: 'POST',
        url: '/internal?x=1',
        headers: {
          ...delivery.headers,
          host: 'internal:8080',
          'x-forwarded-host': 'shop.example.kg',
          signature: 'AAAA',
        },
        body: counted.body,
      },
      options,
    );
    expect(diagnosis.code).toBe('SIGNATURE_MISMATCH');
    expect(diagnosis.message).toContain('matches none of the keys tried');
    // Only the configured key's check of the as-received string, which the length alone refuses.
    expect(diagnosis.checks).toBeLessThanOrEqual(1);
    expect(counted.reads()).toBe(2);
  });
});

describe('explainVerificationFailure with trustForwardedHeaders', () => {
  it('blames the trusted X-Forwarded-Host, not a rewritten Host, when the received Host is the signed one', async () => {
    const delivery = await signed();
    const request = {
      method: 'POST',
      url: '/webhooks/payments',
      headers: { ...delivery.headers, 'x-forwarded-host': 'cdn.example.net' },
      body: delivery.body,
    };
    const trusting = { ...options, trustForwardedHeaders: true };
    expect((await verifyWebhook(request as never, trusting)).ok).toBe(false);
    const diagnosis = await explainVerificationFailure(request, trusting);
    expect(diagnosis.changes).toEqual([{ part: 'host', received: 'cdn.example.net', expected: 'shop.example.kg' }]);
    expect(diagnosis.message).toContain('(your request has `cdn.example.net` in X-Forwarded-Host, which you trust)');
    expect(diagnosis.fix).toContain('turn `trustForwardedHeaders` off');
    expect(diagnosis.fix).not.toContain('rewrites Host');
  });

  it('does not blame trusting X-Forwarded-Host when the received Host would not verify either', async () => {
    const delivery = await signed();
    const request = {
      method: 'POST',
      url: '/webhooks/payments',
      headers: { ...delivery.headers, host: 'internal:8080', 'x-forwarded-host': 'cdn.example.net' },
      body: delivery.body,
    };
    const diagnosis = await explainVerificationFailure(request, {
      ...options,
      trustForwardedHeaders: true,
      registeredUrl: 'https://shop.example.kg/webhooks/payments',
    });
    expect(diagnosis.changes).toEqual([{ part: 'host', received: 'cdn.example.net', expected: 'shop.example.kg' }]);
    expect(diagnosis.fix).toContain('which is not the host the service signed');
    expect(diagnosis.fix).not.toContain('turn `trustForwardedHeaders` off');
  });

  it('treats a blank X-Forwarded-Host as none, like verifyWebhook: an absolute URL stands in for a missing Host', async () => {
    const delivery = await signed();
    const { host: _host, ...withoutHost } = delivery.headers as Record<string, string>;
    for (const forwarded of ['', ' , cdn.example.net']) {
      const request = {
        method: 'POST',
        url: 'https://shop.example.kg/webhooks/payments',
        headers: { ...withoutHost, 'x-forwarded-host': forwarded },
        body: delivery.body,
      };
      const trusting = { ...options, trustForwardedHeaders: true };
      expect(await verifyCode(request, trusting), JSON.stringify(forwarded)).toBeNull();
      expect((await explainVerificationFailure(request, trusting)).ok).toBe(true);
    }
  });
});
