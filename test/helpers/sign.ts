// Signs test deliveries with the conformance-2048 private key, using
// node:crypto (independent of payhook's own Web Crypto verify path).
import { randomUUID, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { buildCanonicalString } from '../../src/canonical.js';

const keys = JSON.parse(readFileSync(new URL('../fixtures/keys.json', import.meta.url), 'utf8')) as Record<
  string,
  { publicKeyPem: string; privateKeyPem?: string }
>;

export const PUBLIC_KEY: string = keys['conformance-2048']!.publicKeyPem;
export const PRIVATE_KEY: string = keys['conformance-2048']!.privateKeyPem!;
export const STRANGER_PRIVATE_KEY: string = keys['stranger-2048']!.privateKeyPem!;
export const STRANGER_PUBLIC_KEY: string = keys['stranger-2048']!.publicKeyPem;

/** A valid webhook body (spec §2) with a fresh transaction id. */
export function webhookBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const transactionId = randomUUID();
  return {
    id: `${transactionId}_DEBIT`,
    transactionId,
    status: 'SUCCEEDED',
    amount: 100,
    fields: { amount: 100, paymentId: `order-${transactionId.slice(0, 8)}` },
    requestDate: 1_763_712_000_000,
    transactionDate: 1_763_712_001_000,
    ...overrides,
  };
}

export interface SignOptions {
  method?: string;
  /** Path plus query, as sent. */
  target?: string;
  host?: string;
  timestamp?: number | string | null;
  privateKey?: string;
  /** Extra headers sent (and signed when they are x-api-*). */
  headers?: Record<string, string>;
  /** The canonical string is built for these instead (what the service thought it sent). */
  signedHost?: string;
  signedTarget?: string;
}

export interface SignedDelivery {
  method: string;
  target: string;
  headers: Record<string, string>;
  body: string;
  transactionId: string;
  id: string;
}

/** Signs `body` as the service does: canonical string, RSA-SHA256, base64. */
export function signDelivery(body: Record<string, unknown> | string, options: SignOptions = {}): SignedDelivery {
  const method = options.method ?? 'POST';
  const target = options.target ?? '/webhooks/payments';
  const host = options.host ?? 'shop.example.kg';
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string> = { host, 'content-type': 'application/json', ...options.headers };
  const timestamp = options.timestamp === undefined ? Date.now() : options.timestamp;
  if (timestamp !== null) headers['x-api-timestamp'] = String(timestamp);
  const signedTarget = options.signedTarget ?? target;
  const question = signedTarget.indexOf('?');
  let canonical: string;
  try {
    canonical = buildCanonicalString({
      method,
      path: question === -1 ? signedTarget : signedTarget.slice(0, question),
      query: question === -1 ? null : signedTarget.slice(question + 1),
      headers: { ...headers, host: options.signedHost ?? host },
      body: text,
    });
  } catch {
    // Not a body the service could sign (bad JSON…): sign something else,
    // the checks before the signature must refuse it anyway.
    canonical = `unsignable\n${text}`;
  }
  headers['signature'] = sign('sha256', Buffer.from(canonical, 'utf8'), options.privateKey ?? PRIVATE_KEY).toString(
    'base64',
  );
  const parsed = typeof body === 'string' ? {} : body;
  const field = (name: string): string => {
    const value = parsed[name];
    return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
  };
  return {
    method,
    target,
    headers,
    body: text,
    transactionId: field('transactionId'),
    id: field('id'),
  };
}
