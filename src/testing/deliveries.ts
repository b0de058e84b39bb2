import { PayhookError } from '../errors.js';
import { dateToMillis } from '../lib/clock.js';

/**
 * The documented body variants that {@link createTestWebhook} builds:
 *
 * | variant | adds to the base body |
 * |---|---|
 * | `base` | nothing: `id` (`…_DEBIT`), `transactionId`, `status`, `amount`, `fields`, `requestDate`, `transactionDate` |
 * | `card` | `service: { id: 'VISA' }` (card acceptance enabled) |
 * | `extended` | `accountId`, `item`, `net`, `receiptNumber`, `transactionType: 'DEBIT'` |
 * | `signed-body` | `clientId` and the extra `fields` keys (`webhook_url`, `success_redirect_url`, `name`, `qrTransactionId`); no `requestDate`, as real deliveries of this variant omit it |
 * | `web` | `data` (a WEB integration's `amount`, `accountId`, `description`, `webhookUrl`, `name_en`) |
 * | `credit` | `id` ends with `_CREDIT` |
 *
 * @example
 * ```ts
 * import { createTestWebhook, TEST_WEBHOOK_VARIANTS } from 'payhook/testing';
 *
 * const all = TEST_WEBHOOK_VARIANTS.map((variant) => createTestWebhook({ variant }));
 * ```
 */
export type TestWebhookVariant = 'base' | 'card' | 'extended' | 'signed-body' | 'web' | 'credit';

/**
 * Every {@link TestWebhookVariant}, in a stable order.
 *
 * @example
 * ```ts
 * import { TEST_WEBHOOK_VARIANTS } from 'payhook/testing';
 *
 * for (const variant of TEST_WEBHOOK_VARIANTS) console.log(variant);
 * ```
 */
export const TEST_WEBHOOK_VARIANTS: readonly TestWebhookVariant[] = /* @__PURE__ */ Object.freeze([
  'base',
  'card',
  'extended',
  'signed-body',
  'web',
  'credit',
] as const);

/**
 * A webhook body as the service sends it: a plain JSON object,
 * ready for {@link signWebhook} or `JSON.stringify`.
 *
 * @example
 * ```ts
 * import { createTestWebhook, type TestWebhookBody } from 'payhook/testing';
 *
 * const body: TestWebhookBody = createTestWebhook({ status: 'FAILED' });
 * console.log(body.transactionId);
 * ```
 */
export interface TestWebhookBody {
  id: string;
  transactionId: string;
  status: string;
  amount: number;
  fields: { amount: number; paymentId: string; [fieldId: string]: unknown };
  transactionDate: number;
  requestDate?: number;
  [key: string]: unknown;
}

/**
 * What {@link createTestWebhook} may change. The keys declared here take
 * their default when they are missing or `undefined`, as options do (any
 * other value, `null` too, is sent as given);
 * `variant`, `now` and `webhookUrl` steer the defaults and are not body
 * fields. Every other key is put into the body as given, and a value of
 * `undefined` removes it, to build incomplete bodies (`requestDate:
 * undefined`). To build a body without one of the declared keys, take it
 * out of the result instead (see the example).
 *
 * @example
 * ```ts
 * import { createTestWebhook, type TestWebhookOverrides } from 'payhook/testing';
 *
 * const overrides: TestWebhookOverrides = { variant: 'card', status: 'failed', amount: 250, fields: { orderId: 'A-17' } };
 * // status: undefined would mean the default status; a body without one is made like this:
 * const { status: _status, ...withoutStatus } = createTestWebhook(overrides);
 * ```
 */
export interface TestWebhookOverrides {
  /** Which documented body to start from. @defaultValue `'base'` */
  variant?: TestWebhookVariant | undefined;
  /** The status, sent as given (the service uses any letter case). @defaultValue `'SUCCEEDED'` */
  status?: string | undefined;
  /** The amount; `fields.amount` (and `data.amount`) follow it unless given. @defaultValue 100 */
  amount?: number | undefined;
  /** The transaction ID. @defaultValue a random UUID */
  transactionId?: string | undefined;
  /** The operation ID. @defaultValue `<transactionId>_DEBIT` (`_CREDIT` for the credit variant) */
  id?: string | undefined;
  /** Fields merged over the default `fields` (`amount`, `paymentId`, and the variant's extras). */
  fields?: Record<string, unknown> | undefined;
  /** The time `requestDate` and `transactionDate` are derived from. @defaultValue `Date.now()` */
  now?: number | Date | undefined;
  /**
   * The callback URL registered with the service, which the `web` variant
   * carries in `data.webhookUrl` and the `signed-body` variant in
   * `fields.webhook_url` (its origin also starts `success_redirect_url`).
   * Not a body field itself. Give the URL you sign for.
   * @defaultValue `'https://shop.example.kg/webhooks/payments'`
   */
  webhookUrl?: string | undefined;
  /** Any other body key, or `undefined` to remove it (the keys declared above take their default instead). */
  [key: string]: unknown;
}

function uuid(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (typeof crypto?.randomUUID === 'function') return crypto.randomUUID();
  // Secure contexts and every server runtime have randomUUID; this is for the rest.
  const hex = Array.from({ length: 32 }, () => Math.floor(Math.random() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}

function digits(count: number): string {
  let out = '';
  for (let i = 0; i < count; i++) out += Math.floor(Math.random() * 10).toString();
  return out;
}

/**
 * Builds a realistic webhook body of any documented variant, with sensible
 * defaults (a successful 100.00 debit with fresh random IDs, dated now) and
 * any field overridden. Give the result to {@link signWebhook}.
 *
 * @throws PayhookError `INVALID_ARGUMENT` for an unknown variant, a
 * `now` that is not a valid time or a `webhookUrl` that is not absolute.
 *
 * @example
 * ```ts
 * import { createTestWebhook } from 'payhook/testing';
 *
 * const paid = createTestWebhook();
 * const failedCard = createTestWebhook({ variant: 'card', status: 'FAILED', amount: 250 });
 * const noRequestDate = createTestWebhook({ requestDate: undefined });
 * const { status: _status, ...noStatus } = createTestWebhook(); // status: undefined would keep the default
 * const web = createTestWebhook({ variant: 'web', webhookUrl: 'https://pay.example.kg/hooks/payments' });
 * ```
 */
export function createTestWebhook(overrides?: TestWebhookOverrides): TestWebhookBody {
  const {
    variant = 'base',
    now: rawNow,
    webhookUrl = 'https://shop.example.kg/webhooks/payments',
    status,
    amount,
    transactionId,
    id,
    fields,
    ...rest
  } = overrides ?? {};
  if (!TEST_WEBHOOK_VARIANTS.includes(variant)) {
    throw new PayhookError(
      'INVALID_ARGUMENT',
      `Unknown webhook variant ${JSON.stringify(variant)}; expected one of ${TEST_WEBHOOK_VARIANTS.join(', ')}.`,
    );
  }
  let origin: string;
  try {
    origin = new URL(webhookUrl).origin;
  } catch (cause) {
    throw new PayhookError(
      'INVALID_ARGUMENT',
      `The "webhookUrl" option must be an absolute URL; got ${JSON.stringify(webhookUrl)}.`,
      { cause },
    );
  }
  const now = rawNow === undefined ? Date.now() : dateToMillis(rawNow);
  if (typeof now !== 'number' || !Number.isFinite(now)) {
    throw new PayhookError(
      'INVALID_ARGUMENT',
      'The "now" option must be a finite number of milliseconds or a valid Date.',
    );
  }
  // Only undefined takes the default: anything else, null too, is sent as given (a body to test a refusal with).
  const tx = transactionId === undefined ? uuid() : transactionId;
  const total = amount === undefined ? 100 : amount;
  const body: TestWebhookBody = {
    id: id === undefined ? `${tx}_${variant === 'credit' ? 'CREDIT' : 'DEBIT'}` : id,
    transactionId: tx,
    status: status === undefined ? 'SUCCEEDED' : status,
    amount: total,
    fields: { amount: total, paymentId: uuid() },
    requestDate: Math.round(now) - 4_000,
    transactionDate: Math.round(now) - 1_000,
  };
  switch (variant) {
    case 'card':
      body['service'] = { id: 'VISA' };
      break;
    case 'extended':
      body['accountId'] = uuid();
      body['item'] = { id: uuid() };
      body['net'] = Math.round(total * 98) / 100;
      body['receiptNumber'] = digits(6);
      body['transactionType'] = 'DEBIT';
      break;
    case 'signed-body':
      delete body.requestDate;
      body['clientId'] = `client-${digits(5)}`;
      Object.assign(body.fields, {
        webhook_url: webhookUrl,
        success_redirect_url: `${origin}/thanks`,
        name: 'Shop',
        qrTransactionId: uuid(),
      });
      break;
    case 'web':
      body['data'] = {
        amount: total,
        accountId: uuid(),
        description: 'Order #17',
        webhookUrl,
        name_en: 'shop',
      };
      break;
    default:
      break;
  }
  if (fields !== undefined) Object.assign(body.fields, fields);
  for (const key of Object.keys(rest)) {
    const value = rest[key];
    if (value === undefined) delete body[key];
    else body[key] = value;
  }
  return body;
}
