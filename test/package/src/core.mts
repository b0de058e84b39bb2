// The main entry as an ES module consumer sees it, with no DOM and no
// @types/node: the pinned names of CONTRACT §4 and the types they use.
import {
  buildCanonicalString,
  isPayhookError,
  isTimestampFresh,
  normaliseStatus,
  parseWebhook,
  retryDelay,
  serviceStatus,
  verifySignature,
  verifyWebhook,
  PRODUCTION_PUBLIC_KEY,
  type KeyInput,
  type PaymentWebhook,
} from 'payhook';

const canonical: string = buildCanonicalString({
  method: 'POST',
  path: '/webhooks/payments',
  headers: { host: 'shop.example.kg', 'x-api-timestamp': '1763712000000' },
  query: null,
  body: '{"amount":100}',
});
const keys: readonly KeyInput[] = [PRODUCTION_PUBLIC_KEY];
export const valid: Promise<boolean> = verifySignature(canonical, 'c2ln', keys, { allowWeakKeys: false });
export const fresh: boolean = isTimestampFresh('1763712000000', { now: 1763712000000, toleranceMs: 1000 });
export const status: 'SUCCEEDED' | 'FAILED' | 'CANCELED' | 'PROCESSING' | 'PENDING' | 'UNKNOWN' =
  normaliseStatus('success');
export const delay: number = retryDelay(1);
export const retriable: boolean | undefined = serviceStatus(502)?.retriable;

export function describe(webhook: PaymentWebhook): string {
  switch (webhook.status) {
    case 'SUCCEEDED':
    case 'FAILED':
    case 'CANCELED':
    case 'PROCESSING':
    case 'PENDING':
    case 'UNKNOWN':
      return `${webhook.id} ${webhook.transactionId} ${webhook.operation} ${webhook.amount}`;
  }
}

export async function receive(body: string, headers: Record<string, string>): Promise<string> {
  const result = await verifyWebhook(
    { method: 'POST', url: '/webhooks/payments', headers, body },
    { publicKeys: keys, now: 0 },
  );
  if (!result.ok) return result.error.code;
  return describe(result.webhook);
}

export function parse(body: string): PaymentWebhook | string {
  try {
    return parseWebhook(body, { strict: true });
  } catch (error) {
    if (isPayhookError(error)) return error.code;
    throw error;
  }
}
