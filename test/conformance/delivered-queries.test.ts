// Every canonical vector with a query, delivered as the service would deliver
// it: the query written into the request URL (as URLSearchParams writes the
// vector's map), the vector's own canonical string signed, and verifyWebhook
// without webhookUrl. The canonical cases check the string payhook builds; these
// check that no rule about the request's query (MALFORMED_QUERY) refuses a
// query the service signs.
import { sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from 'payhook';
import { fixtures } from './fixtures.js';

const key = fixtures.keys['conformance-2048']!;
const delivered = fixtures.canonical.filter(
  (vector) =>
    vector.error === undefined &&
    vector.request.rawBody !== null &&
    vector.request.query !== null &&
    typeof vector.request.query === 'object' &&
    Object.keys(vector.request.query).length > 0,
);

describe('canonical vectors with a query, delivered in the request URL (no webhookUrl)', () => {
  it('covers the vectors whose values hold "&", "=" and escapes', () => {
    expect(delivered.map((vector) => vector.name)).toContain('query-already-encoded-values');
    expect(delivered.length).toBeGreaterThan(20);
  });

  for (const vector of delivered) {
    it(vector.name, async () => {
      const { method, path, headers, query, rawBody } = vector.request;
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(query!)) params.append(name, value ?? '');
      const url = `${path}?${params.toString()}`;
      const signature = sign('sha256', Buffer.from(vector.canonical!, 'utf8'), key.privateKeyPem!).toString('base64');
      const timestamp = Object.entries(headers).find(([name]) => name.toLowerCase() === 'x-api-timestamp')?.[1];
      expect(timestamp).toBeDefined();
      const result = await verifyWebhook(
        { method, url, headers: { ...headers, signature }, body: rawBody! },
        { publicKeys: key.publicKeyPem, now: Number(timestamp) },
      );
      // INVALID_PAYLOAD comes only after the signature and the timestamp passed: a body such as {"a":1}, signed,
      // is not a payment webhook. Every other refusal would be a delivery the service signed, refused.
      expect(result.ok ? 'OK' : result.error.code).toMatch(/^(OK|INVALID_PAYLOAD)$/);
      if (result.ok) expect(result.canonical).toBe(vector.canonical);
    });
  }
});
