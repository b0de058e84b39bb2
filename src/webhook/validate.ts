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

/**
 * Where a reader reports. `issues` refuse the delivery; `soft` is the context
 * whose `issues` are the lenient parse's deviations (the problems it accepts:
 * `strict: true` refuses them). In strict mode `soft` is the context itself.
 */
interface Context {
  readonly strict: boolean;
  readonly issues: Issues;
  readonly soft: Context;
}

/** The context of one parse: strict reports everything to `issues`; lenient its deviations apart. */
function newContext(strict: boolean, issues: Issues, deviations: Issues): Context {
  const soft = { strict, issues: strict ? issues : deviations } as { strict: boolean; issues: Issues; soft: Context };
  soft.soft = soft;
  return strict ? soft : { strict, issues, soft };
}

/** Checks one value at `path`: its (possibly rebuilt) value, or `undefined` after reporting an issue. */
type Reader = (context: Context, path: string | (() => string), value: unknown) => unknown;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON scalar: what a merchant field may hold in lenient mode. */
const isScalar = (value: unknown): boolean =>
  typeof value === 'string' || typeof value === 'boolean' || value === null || Number.isFinite(value);

/**
 * Numeric text: decimal digits with an optional leading minus and an optional
 * fraction (`100`, `99.90`, `-5`). No exponent, sign `+`, spaces or commas:
 * such text is not what a payment service writes for an amount.
 */
const NUMERIC_TEXT = /^-?\d+(?:\.\d+)?$/;

/** A reader that keeps the value when `test` accepts it, else reports "expected <expected>, got …". */
const is =
  (expected: string, test: (value: unknown) => boolean): Reader =>
  (context, path, value) => {
    if (test(value)) return value;
    // Text is not echoed, nor a number where text was expected: a phone or card number sent as a number is a
    // payer's, and the message reaches logs and a 400's body. Where a number was expected, it says what is wrong.
    const got =
      value === null
        ? 'null'
        : Array.isArray(value)
          ? 'array'
          : typeof value === 'number'
            ? !Number.isFinite(value)
              ? String(value)
              : /number|milliseconds/.test(expected)
                ? `number ${value}`
                : 'number'
            : value === ''
              ? 'empty string'
              : typeof value;
    // A path is built only for an issue (most values pass).
    context.issues.push({
      path: typeof path === 'string' ? path : path(),
      message: `expected ${expected}, ${value === undefined ? 'but it is missing' : `got ${got}`}`,
    });
    return undefined;
  };

const STRING = /* @__PURE__ */ is('string', (value) => typeof value === 'string');
const NON_EMPTY_STRING = /* @__PURE__ */ is('non-empty string', (value) => typeof value === 'string' && value !== '');
// Number.isFinite is false for anything but a finite number (it does not convert).
const NUMBER = /* @__PURE__ */ is('number', Number.isFinite);
const NUMBER_OR_TEXT = /* @__PURE__ */ is('number or numeric text', Number.isFinite);
/** UNIX time in milliseconds: a non-negative safe integer. */
const MILLISECONDS = /* @__PURE__ */ is(
  'integer milliseconds',
  (value) => Number.isSafeInteger(value) && (value as number) >= 0,
);
const OBJECT = /* @__PURE__ */ is('object', isObject);
const WITH_ID_OBJECT = /* @__PURE__ */ is('object with a string id', isObject);

/**
 * A reader whose problems refuse only a strict parse: a lenient parse notes
 * them as deviations and leaves the value out of its typed place (`raw` keeps it).
 */
const soft =
  (read: Reader): Reader =>
  (context, path, value) =>
    read(context.soft, path, value);

/**
 * `id`, `transactionId`: any string (CONTRACT.md §6); strict also refuses empty
 * text, which a lenient parse notes as a deviation and keeps.
 */
const ID: Reader = (context, path, value) => {
  if (context.strict || typeof value !== 'string')
    return (context.strict ? NON_EMPTY_STRING : STRING)(context, path, value);
  NON_EMPTY_STRING(context.soft, path, value);
  return value;
};

/**
 * An amount: a finite number; lenient also reads numeric text as its number
 * (noted as a deviation; `raw` keeps the text).
 */
const AMOUNT: Reader = (context, path, value) => {
  if (!context.strict && typeof value === 'string' && NUMERIC_TEXT.test(value)) {
    const amount = Number(value);
    if (Number.isFinite(amount)) {
      NUMBER(context.soft, path, value);
      return amount;
    }
  }
  return (context.strict ? NUMBER : NUMBER_OR_TEXT)(context, path, value);
};

/** `fields.amount`, `data.amount`: as {@link AMOUNT}, but only a strict parse is refused for it. */
const SOFT_AMOUNT = /* @__PURE__ */ soft(AMOUNT);

/**
 * A merchant field (documented as text). Lenient keeps any JSON scalar as
 * given (a number, a boolean, `null`: noted as a deviation) and leaves out an
 * object or array.
 */
const FIELD_VALUE: Reader = (context, path, value) => {
  const text = STRING(context.soft, path, value);
  return context.strict ? text : isScalar(value) ? value : undefined;
};

/** `service`, `item`: an object with a string `id`, rebuilt as `{ id }`. */
const WITH_ID: Reader = (context, path, value) => {
  if (WITH_ID_OBJECT(context, path, value) === undefined) return undefined;
  const id = STRING(context, `${path as string}.id`, ownValue(value as object, 'id'));
  return id === undefined ? undefined : { id };
};

/**
 * An object copied into a fresh one without a prototype (so `__proto__`,
 * `constructor`, `prototype` are ordinary entries), each entry checked by
 * the reader `readerOf` picks for its key (none: any value, kept). An entry
 * its reader refuses is left out (in strict mode the whole parse fails anyway).
 */
const record =
  (readerOf: (key: string) => Reader | undefined): Reader =>
  (context, path, value) => {
    if (OBJECT(context, path, value) === undefined) return undefined;
    const out = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(value as object)) {
      const entry = (value as Record<string, unknown>)[key];
      const read = readerOf(key);
      const checked =
        read === undefined
          ? entry
          : read(
              context,
              () => (IDENTIFIER.test(key) ? `${path as string}.${key}` : `${path as string}[${JSON.stringify(key)}]`),
              entry,
            );
      if (checked !== undefined) out[key] = checked;
    }
    return out;
  };

const DATA_STRINGS: readonly string[] = ['accountId', 'description', 'webhookUrl', 'name_en'];

/**
 * Which fields a parse requires: `ALWAYS` (their absence refuses even a
 * lenient parse, CONTRACT.md §6), `NOTED` (a lenient parse notes the absence as
 * a deviation), `STRICT_ONLY` (a lenient parse does not mind at all:
 * `requestDate`, which real deliveries of the signed-body variant omit), or
 * `OPTIONAL`. Numbers, not words: this table is in every bundle.
 */
const ALWAYS = 0;
const NOTED = 1;
const STRICT_ONLY = 2;
const OPTIONAL = 3;
type Presence = typeof ALWAYS | typeof NOTED | typeof STRICT_ONLY | typeof OPTIONAL;

/** The documented top-level fields in the order their issues are reported: name, reader, presence. */
const FIELDS: ReadonlyArray<readonly [name: string, read: Reader, presence: Presence]> = [
  ['id', ID, ALWAYS],
  ['transactionId', ID, ALWAYS],
  ['status', STRING, ALWAYS],
  // Text here is refused, as the service's conformance vector signed-amount-string says.
  ['amount', NUMBER, ALWAYS],
  // `fields` must be an object when present; its entries are checked softly in lenient mode.
  ['fields', /* @__PURE__ */ record((key) => (key === 'amount' ? SOFT_AMOUNT : FIELD_VALUE)), NOTED],
  ['transactionDate', /* @__PURE__ */ soft(MILLISECONDS), NOTED],
  ['requestDate', /* @__PURE__ */ soft(MILLISECONDS), STRICT_ONLY],
  ['service', /* @__PURE__ */ soft(WITH_ID), OPTIONAL],
  ['item', /* @__PURE__ */ soft(WITH_ID), OPTIONAL],
  ['accountId', /* @__PURE__ */ soft(STRING), OPTIONAL],
  ['net', /* @__PURE__ */ soft(NUMBER), OPTIONAL],
  ['receiptNumber', /* @__PURE__ */ soft(STRING), OPTIONAL],
  ['transactionType', /* @__PURE__ */ soft(STRING), OPTIONAL],
  ['clientId', /* @__PURE__ */ soft(STRING), OPTIONAL],
  [
    'data',
    /* @__PURE__ */ soft(
      /* @__PURE__ */ record((key) =>
        key === 'amount' ? SOFT_AMOUNT : DATA_STRINGS.includes(key) ? STRING : undefined,
      ),
    ),
    OPTIONAL,
  ],
];

/** The names of {@link FIELDS}, to tell the other keys (`extra`) apart in one look-up each. */
const KNOWN = /* @__PURE__ */ new Set(/* @__PURE__ */ FIELDS.map(([name]) => name));

/** The operation from the id's suffix: `…_DEBIT`, `…_CREDIT`, else UNKNOWN. */
function operationOf(id: string): PaymentOperation {
  return (/_(DEBIT|CREDIT)$/.exec(id)?.[1] as PaymentOperation | undefined) ?? 'UNKNOWN';
}

/**
 * Validates an already parsed JSON object as a payment webhook (CONTRACT.md §6) and
 * builds the typed {@link PaymentWebhook}. Never throws for any object (a
 * getter that throws is the caller's problem: safeParseWebhook catches it).
 *
 * Lenient by default (CONTRACT.md §6): only a missing or non-string `id`,
 * `transactionId` or `status`, an `amount` that is not a number, or a
 * `fields` that is present but not an object refuse the body (numeric text
 * in `fields.amount` or `data.amount` is read as its number). Every other problem is a deviation: noted in `webhook.deviations`,
 * the value left out of its typed place (numeric text and merchant scalars
 * excepted, see the readers). `strict: true` refuses every deviation and
 * requires `requestDate`.
 */
export function validateWebhookObject(
  value: Record<string, unknown>,
  options?: { strict?: boolean },
): WebhookValidation {
  const strict = options?.strict === true;
  const issues: Issues = [];
  const deviations: Issues = [];
  const context = newContext(strict, issues, deviations);
  // Every own key read once: the known ones here, the others into `extra`.
  const extra = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(value)) if (!KNOWN.has(key)) extra[key] = value[key];
  const webhook: Record<string, unknown> = {};
  for (const [name, read, presence] of FIELDS) {
    const entry = ownValue(value, name);
    if (entry !== undefined) {
      const checked = read(context, name, entry);
      if (checked !== undefined) webhook[name] = checked;
    } else if (presence === ALWAYS || (strict && presence !== OPTIONAL)) {
      read(context, name, entry);
    } else if (presence === NOTED) {
      // A lenient parse notes the absence (read reports through `soft`).
      read(context.soft, name, entry);
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
  webhook['rawAmount'] = ownValue(value, 'amount');
  webhook['operation'] = operationOf(webhook['id'] as string);
  // A lenient parse of a body without `fields` still gives an object to read.
  webhook['fields'] ??= Object.create(null);
  webhook['extra'] = extra;
  webhook['deviations'] = deviations;
  webhook['raw'] = value;
  return { success: true, webhook: webhook as unknown as PaymentWebhook };
}
