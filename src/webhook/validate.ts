/**
 * The one-pass validator behind parseWebhook, safeParseWebhook, the Standard
 * Schema object and verifyWebhook. Internal: not re-exported.
 *
 * It walks the body's own keys once, checks each known key's type, copies
 * everything into fresh objects (the webhook itself has only fixed keys;
 * `fields`, `data` and `extra` have no prototype, so a `__proto__`,
 * `constructor` or `prototype` key is an ordinary entry), and collects every
 * problem with its path instead of stopping at the first.
 *
 * @module
 */
import { PayhookError, type PayhookIssue } from '../errors.js';
import { normaliseStatus } from '../status.js';
import type {
  PaymentOperation,
  PaymentWebhook,
  WebhookData,
  WebhookFields,
  WebhookItem,
  WebhookService,
} from './types.js';

/** An `INVALID_PAYLOAD` or `INVALID_BODY` error that always lists its issues. */
export type WebhookParseError = PayhookError & {
  readonly code: 'INVALID_BODY' | 'INVALID_PAYLOAD';
  readonly issues: readonly PayhookIssue[];
};

/** The outcome of {@link validateWebhookObject}. */
export type WebhookValidation =
  | { readonly success: true; readonly webhook: PaymentWebhook }
  | { readonly success: false; readonly error: WebhookParseError };

/** How many issues the error message spells out; `error.issues` has them all. */
const MESSAGE_ISSUES = 10;
/** A key that can follow a dot in a path; others are written `["…"]`. */
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

type Issues = PayhookIssue[];

function childPath(parent: string, key: string): string {
  if (IDENTIFIER.test(key)) return parent === '' ? key : `${parent}.${key}`;
  return `${parent}[${JSON.stringify(key)}]`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  // A number is shown (it is short and says what is wrong); text is not echoed.
  if (typeof value === 'number') return Number.isFinite(value) ? `number ${value}` : String(value);
  if (typeof value === 'string' && value === '') return 'empty string';
  return typeof value;
}

function report(issues: Issues, path: string, expected: string, value: unknown): void {
  issues.push({
    path,
    message: value === undefined ? `expected ${expected}, but it is missing` : `expected ${expected}, got ${describe(value)}`,
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** UNIX time in milliseconds: a non-negative safe integer. */
function isMilliseconds(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function nonEmptyString(issues: Issues, path: string, value: unknown): string {
  if (typeof value === 'string' && value !== '') return value;
  report(issues, path, 'non-empty string', value);
  return '';
}

function optionalString(issues: Issues, path: string, value: unknown): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  report(issues, path, 'string', value);
  return undefined;
}

function optionalNumber(issues: Issues, path: string, value: unknown): number | undefined {
  if (value === undefined || isFiniteNumber(value)) return value;
  report(issues, path, 'number', value);
  return undefined;
}

function withId(issues: Issues, path: string, value: unknown): { readonly id: string } | undefined {
  if (!isObject(value)) {
    report(issues, path, 'object with a string id', value);
    return undefined;
  }
  const id = Object.hasOwn(value, 'id') ? value['id'] : undefined;
  if (typeof id !== 'string') {
    report(issues, `${path}.id`, 'string', id);
    return undefined;
  }
  return { id };
}

function readFields(issues: Issues, value: unknown): WebhookFields {
  const out = Object.create(null) as Record<string, unknown>;
  if (!isObject(value)) {
    report(issues, 'fields', 'object', value);
    return out as WebhookFields;
  }
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const entry = value[key];
    if (key === 'amount') {
      if (!isFiniteNumber(entry)) report(issues, 'fields.amount', 'number', entry);
    } else if (typeof entry !== 'string') {
      report(issues, childPath('fields', key), 'string', entry);
    }
    out[key] = entry;
  }
  return out as WebhookFields;
}

function readData(issues: Issues, value: unknown): WebhookData | undefined {
  if (!isObject(value)) {
    report(issues, 'data', 'object', value);
    return undefined;
  }
  const out = Object.create(null) as Record<string, unknown>;
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const entry = value[key];
    switch (key) {
      case 'amount':
        if (!isFiniteNumber(entry)) report(issues, 'data.amount', 'number', entry);
        break;
      case 'accountId':
      case 'description':
      case 'webhookUrl':
      case 'name_en':
        if (typeof entry !== 'string') report(issues, `data.${key}`, 'string', entry);
        break;
    }
    out[key] = entry;
  }
  return out as WebhookData;
}

function operationOf(id: string): PaymentOperation {
  if (id.endsWith('_DEBIT')) return 'DEBIT';
  if (id.endsWith('_CREDIT')) return 'CREDIT';
  return 'UNKNOWN';
}

function failure(issues: Issues): { readonly success: false; readonly error: WebhookParseError } {
  const shown = issues.slice(0, MESSAGE_ISSUES).map((issue) => `${issue.path}: ${issue.message}`);
  if (issues.length > MESSAGE_ISSUES) shown.push(`and ${issues.length - MESSAGE_ISSUES} more`);
  const error = new PayhookError(
    'INVALID_PAYLOAD',
    `The body is not a payment webhook: ${shown.join('; ')}.`,
    { issues },
  ) as WebhookParseError;
  return { success: false, error };
}

/**
 * Validates an already parsed JSON object as a payment webhook (spec §2) and
 * builds the typed {@link PaymentWebhook}. Never throws for any object (a
 * getter that throws is the caller's problem: safeParseWebhook catches it).
 *
 * Lenient by default: `requestDate` may be absent. `strict: true` requires it.
 */
export function validateWebhookObject(
  value: Record<string, unknown>,
  options?: { strict?: boolean },
): WebhookValidation {
  const issues: Issues = [];
  let id: unknown;
  let transactionId: unknown;
  let status: unknown;
  let amount: unknown;
  let fields: unknown;
  let transactionDate: unknown;
  let requestDate: unknown;
  let service: unknown;
  let accountId: unknown;
  let item: unknown;
  let net: unknown;
  let receiptNumber: unknown;
  let transactionType: unknown;
  let clientId: unknown;
  let data: unknown;
  const extra = Object.create(null) as Record<string, unknown>;

  // One pass over the own keys: known keys to locals, the rest to `extra`.
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const entry = value[key];
    switch (key) {
      case 'id': id = entry; break;
      case 'transactionId': transactionId = entry; break;
      case 'status': status = entry; break;
      case 'amount': amount = entry; break;
      case 'fields': fields = entry; break;
      case 'transactionDate': transactionDate = entry; break;
      case 'requestDate': requestDate = entry; break;
      case 'service': service = entry; break;
      case 'accountId': accountId = entry; break;
      case 'item': item = entry; break;
      case 'net': net = entry; break;
      case 'receiptNumber': receiptNumber = entry; break;
      case 'transactionType': transactionType = entry; break;
      case 'clientId': clientId = entry; break;
      case 'data': data = entry; break;
      default: extra[key] = entry;
    }
  }

  const idValue = nonEmptyString(issues, 'id', id);
  const transactionIdValue = nonEmptyString(issues, 'transactionId', transactionId);
  if (typeof status !== 'string') report(issues, 'status', 'string', status);
  if (!isFiniteNumber(amount)) report(issues, 'amount', 'number', amount);
  const fieldsValue = readFields(issues, fields);
  if (!isMilliseconds(transactionDate)) report(issues, 'transactionDate', 'integer milliseconds', transactionDate);
  if (requestDate === undefined ? options?.strict === true : !isMilliseconds(requestDate)) {
    report(issues, 'requestDate', 'integer milliseconds', requestDate);
  }
  const serviceValue: WebhookService | undefined =
    service === undefined ? undefined : withId(issues, 'service', service);
  const itemValue: WebhookItem | undefined = item === undefined ? undefined : withId(issues, 'item', item);
  const accountIdValue = optionalString(issues, 'accountId', accountId);
  const netValue = optionalNumber(issues, 'net', net);
  const receiptNumberValue = optionalString(issues, 'receiptNumber', receiptNumber);
  const transactionTypeValue = optionalString(issues, 'transactionType', transactionType);
  const clientIdValue = optionalString(issues, 'clientId', clientId);
  const dataValue = data === undefined ? undefined : readData(issues, data);

  if (issues.length > 0) return failure(issues);

  const webhook: {
    -readonly [K in keyof PaymentWebhook]: PaymentWebhook[K];
  } = {
    id: idValue,
    transactionId: transactionIdValue,
    status: normaliseStatus(status),
    rawStatus: status as string,
    operation: operationOf(idValue),
    amount: amount as number,
    fields: fieldsValue,
    transactionDate: transactionDate as number,
    extra,
    raw: value,
  };
  if (requestDate !== undefined) webhook.requestDate = requestDate as number;
  if (serviceValue !== undefined) webhook.service = serviceValue;
  if (accountIdValue !== undefined) webhook.accountId = accountIdValue;
  if (itemValue !== undefined) webhook.item = itemValue;
  if (netValue !== undefined) webhook.net = netValue;
  if (receiptNumberValue !== undefined) webhook.receiptNumber = receiptNumberValue;
  if (transactionTypeValue !== undefined) webhook.transactionType = transactionTypeValue;
  if (clientIdValue !== undefined) webhook.clientId = clientIdValue;
  if (dataValue !== undefined) webhook.data = dataValue;
  return { success: true, webhook: webhook as PaymentWebhook };
}
