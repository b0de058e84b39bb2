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
import { PayhookError, type PayhookIssue } from '../lib/errors.js';
import { ownValue } from '../lib/object.js';
import { normaliseStatus } from '../status.js';
import type { PaymentOperation, PaymentWebhook } from './types.js';

/**
 * An `INVALID_PAYLOAD` or `INVALID_BODY` error that always lists its issues.
 *
 * @example
 * ```ts
 * import { safeParseWebhook, type WebhookParseError } from 'payhook';
 *
 * const result = safeParseWebhook('{"id":"x"}');
 * if (!result.success) {
 *   const error: WebhookParseError = result.error;
 *   for (const issue of error.issues) console.warn(`${issue.path}: ${issue.message}`);
 * }
 * ```
 */
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
/** Checks one value at `path`: its (possibly rebuilt) value, or `undefined` after reporting an issue. */
type Reader = (issues: Issues, path: string | (() => string), value: unknown) => unknown;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A reader that keeps the value when `test` accepts it, else reports "expected <expected>, got …". */
const is =
  (expected: string, test: (value: unknown) => boolean): Reader =>
  (issues, path, value) => {
    if (test(value)) return value;
    // A number is shown (it is short and says what is wrong); text is not echoed.
    const got =
      value === null
        ? 'null'
        : Array.isArray(value)
          ? 'array'
          : typeof value === 'number'
            ? Number.isFinite(value)
              ? `number ${value}`
              : String(value)
            : value === ''
              ? 'empty string'
              : typeof value;
    // A path is built only for an issue (most values pass).
    issues.push({
      path: typeof path === 'string' ? path : path(),
      message: `expected ${expected}, ${value === undefined ? 'but it is missing' : `got ${got}`}`,
    });
    return undefined;
  };

const STRING = /* @__PURE__ */ is('string', (value) => typeof value === 'string');
const NON_EMPTY_STRING = /* @__PURE__ */ is('non-empty string', (value) => typeof value === 'string' && value !== '');
// Number.isFinite is false for anything but a finite number (it does not convert).
const NUMBER = /* @__PURE__ */ is('number', Number.isFinite);
/** UNIX time in milliseconds: a non-negative safe integer. */
const MILLISECONDS = /* @__PURE__ */ is(
  'integer milliseconds',
  (value) => Number.isSafeInteger(value) && (value as number) >= 0,
);
const OBJECT = /* @__PURE__ */ is('object', isObject);
const WITH_ID_OBJECT = /* @__PURE__ */ is('object with a string id', isObject);

/** `service`, `item`: an object with a string `id`, rebuilt as `{ id }`. */
const WITH_ID: Reader = (issues, path, value) => {
  if (WITH_ID_OBJECT(issues, path, value) === undefined) return undefined;
  const id = STRING(issues, `${path as string}.id`, ownValue(value as object, 'id'));
  return id === undefined ? undefined : { id };
};

/**
 * An object copied into a fresh one without a prototype (so `__proto__`,
 * `constructor`, `prototype` are ordinary entries), each entry checked by
 * the reader `readerOf` picks for its key (none: any value).
 */
const record =
  (readerOf: (key: string) => Reader | undefined): Reader =>
  (issues, path, value) => {
    if (OBJECT(issues, path, value) === undefined) return undefined;
    const out = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(value as object)) {
      const entry = (value as Record<string, unknown>)[key];
      readerOf(key)?.(
        issues,
        () => (IDENTIFIER.test(key) ? `${path as string}.${key}` : `${path as string}[${JSON.stringify(key)}]`),
        entry,
      );
      out[key] = entry;
    }
    return out;
  };

const DATA_STRINGS: readonly string[] = ['accountId', 'description', 'webhookUrl', 'name_en'];

/**
 * The top-level fields of spec §2 in the order their issues are reported:
 * name, reader, required (`requestDate` only with `strict`).
 */
const FIELDS: ReadonlyArray<readonly [name: string, read: Reader, required?: boolean]> = [
  ['id', NON_EMPTY_STRING, true],
  ['transactionId', NON_EMPTY_STRING, true],
  ['status', STRING, true],
  ['amount', NUMBER, true],
  // Every value of `fields` is a string, except its `amount`.
  ['fields', /* @__PURE__ */ record((key) => (key === 'amount' ? NUMBER : STRING)), true],
  ['transactionDate', MILLISECONDS, true],
  ['requestDate', MILLISECONDS],
  ['service', WITH_ID],
  ['item', WITH_ID],
  ['accountId', STRING],
  ['net', NUMBER],
  ['receiptNumber', STRING],
  ['transactionType', STRING],
  ['clientId', STRING],
  [
    'data',
    /* @__PURE__ */ record((key) => (key === 'amount' ? NUMBER : DATA_STRINGS.includes(key) ? STRING : undefined)),
  ],
];

/** The names of {@link FIELDS}, to tell the other keys (`extra`) apart in one look-up each. */
const KNOWN = /* @__PURE__ */ new Set(FIELDS.map(([name]) => name));

/** The operation from the id's suffix: `…_DEBIT`, `…_CREDIT`, else UNKNOWN. */
function operationOf(id: string): PaymentOperation {
  return (/_(DEBIT|CREDIT)$/.exec(id)?.[1] as PaymentOperation | undefined) ?? 'UNKNOWN';
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
  // Every own key read once: the known ones here, the others into `extra`.
  const extra = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(value)) if (!KNOWN.has(key)) extra[key] = value[key];
  const webhook: Record<string, unknown> = {};
  for (const [name, read, required] of FIELDS) {
    const entry = ownValue(value, name);
    if (entry !== undefined || required === true || (name === 'requestDate' && options?.strict === true)) {
      const checked = read(issues, name, entry);
      if (entry !== undefined) webhook[name] = checked;
    }
  }
  if (issues.length > 0) {
    const shown = issues.slice(0, MESSAGE_ISSUES).map((issue) => `${issue.path}: ${issue.message}`);
    if (issues.length > MESSAGE_ISSUES) shown.push(`and ${issues.length - MESSAGE_ISSUES} more`);
    const error = new PayhookError('INVALID_PAYLOAD', `The body is not a payment webhook: ${shown.join('; ')}.`, {
      issues,
    });
    return { success: false, error: error as WebhookParseError };
  }
  const status = webhook['status'] as string;
  // `status` keeps its place; the raw spelling goes to `rawStatus`.
  webhook['status'] = normaliseStatus(status);
  webhook['rawStatus'] = status;
  webhook['operation'] = operationOf(webhook['id'] as string);
  webhook['extra'] = extra;
  webhook['raw'] = value;
  return { success: true, webhook: webhook as unknown as PaymentWebhook };
}
