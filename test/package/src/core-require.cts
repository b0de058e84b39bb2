// The main entry as a CommonJS consumer sees it (require condition, .d.cts).
import { buildCanonicalString, verifySignature, verifyWebhook, type PaymentWebhook } from 'payhook';

export const canonical: string = buildCanonicalString({ method: 'POST', path: '/', headers: { host: 'h' } });
export const valid: Promise<boolean> = verifySignature(canonical, 'c2ln', '-----BEGIN PUBLIC KEY-----');
export type Verified = Awaited<ReturnType<typeof verifyWebhook>>;
export const id = (webhook: PaymentWebhook): string => webhook.id;
