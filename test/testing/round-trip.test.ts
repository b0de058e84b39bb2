import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { explainVerificationFailure } from '../../src/explain/index.js';
import {
  createTestWebhook,
  signWebhook,
  TEST_KEY_PAIR,
  TEST_WEBHOOK_VARIANTS,
  type SignedWebhook,
} from '../../src/testing/index.js';
import { verifyWebhook } from '../../src/verify-webhook.js';

const NOW = 1763712000000;
const options = { publicKeys: TEST_KEY_PAIR.publicKey, now: NOW };
const SAFE = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~';

const segment = fc.string({ unit: fc.constantFrom(...SAFE.split('')), minLength: 1, maxLength: 8 });
const deliveryArb = fc.record({
  variant: fc.constantFrom(...TEST_WEBHOOK_VARIANTS),
  status: fc.constantFrom('SUCCEEDED', 'FAILED', 'success', 'failed', 'Succeeded'),
  amount: fc.integer({ min: 1, max: 10_000_000 }).map((cents) => cents / 100),
  note: fc.string({ unit: 'grapheme', maxLength: 20 }),
  host: fc
    .tuple(segment, fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }))
    .map(
      ([name, port]) =>
        `${name.toLowerCase().replace(/[^a-z0-9]/g, 'x')}.example.kg${port === undefined || port === 443 ? '' : `:${port}`}`,
    ),
  path: fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => `/${parts.join('/')}`),
  query: fc.dictionary(segment, fc.string({ unit: fc.constantFrom(...SAFE.split('')), maxLength: 6 }), { maxKeys: 3 }),
  age: fc.integer({ min: -300_000, max: 300_000 }),
});

type DeliveryInput = typeof deliveryArb extends fc.Arbitrary<infer T> ? T : never;

async function sign(input: DeliveryInput): Promise<SignedWebhook> {
  const body = createTestWebhook({
    variant: input.variant,
    status: input.status,
    amount: input.amount,
    fields: { note: input.note },
    now: NOW,
  });
  const query = new URLSearchParams(input.query).toString();
  return signWebhook(body, {
    url: `https://${input.host}${input.path}${query === '' ? '' : `?${query}`}`,
    timestamp: NOW - input.age,
  });
}

function mutate(text: string, index: number, replacement: string): string {
  const position = index % text.length;
  const current = text[position]!;
  const next = replacement === current ? (current === 'a' ? 'b' : 'a') : replacement;
  return text.slice(0, position) + next + text.slice(position + 1);
}

describe('round trip: payhook/testing signs, verifyWebhook verifies', () => {
  it('anything signed verifies, and explain agrees on the canonical string', async () => {
    await fc.assert(
      fc.asyncProperty(deliveryArb, async (input) => {
        const signed = await sign(input);
        const result = await verifyWebhook(signed, options);
        if (!result.ok) throw new Error(`${result.error.code}: ${result.error.message}\n${signed.canonical}`);
        expect(result.canonical).toBe(signed.canonical);
        const diagnosis = await explainVerificationFailure(signed, options);
        expect(diagnosis.ok).toBe(true);
        expect(diagnosis.canonical).toBe(signed.canonical);
      }),
      { numRuns: 80 },
    );
  });

  it('any single-byte change of body, path, host or timestamp does not verify', async () => {
    const encoder = new TextEncoder();
    await fc.assert(
      fc.asyncProperty(
        deliveryArb,
        fc.constantFrom('body', 'path', 'host', 'timestamp'),
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        async (input, part, index, byte) => {
          const signed = await sign(input);
          let request: { method: string; url: string; headers: Record<string, string>; body: string | Uint8Array } = {
            ...signed,
            headers: { ...signed.headers },
          };
          if (part === 'body') {
            const bytes = encoder.encode(signed.body);
            const position = index % bytes.length;
            bytes[position] = byte === bytes[position] ? (byte + 1) % 256 : byte;
            request = { ...request, body: bytes };
          } else if (part === 'path') {
            const url = new URL(signed.url);
            // Position 0 is the leading slash; change a byte after it.
            const path = url.pathname.slice(0, 1) + mutate(url.pathname.slice(1), index, SAFE[byte % SAFE.length]!);
            request = { ...request, url: `${path}${url.search}` };
          } else if (part === 'host') {
            request.headers['host'] = mutate(signed.headers['host']!, index, SAFE[byte % SAFE.length]!.toLowerCase());
          } else {
            request.headers['x-api-timestamp'] = mutate(signed.headers['x-api-timestamp']!, index, String(byte % 10));
          }
          const result = await verifyWebhook(request, options);
          expect(result.ok).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });
});
