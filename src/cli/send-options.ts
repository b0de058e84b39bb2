/**
 * `payhook send`'s arguments: parsed, checked against each other, and turned
 * into what to send where (the files they name read), or a usage error.
 *
 * @module
 */
import { pinWebhookUrl } from '../lib/signed-target.js';
import { TEST_WEBHOOK_VARIANTS, type TestWebhookOverrides, type TestWebhookVariant } from '../testing/deliveries.js';
import {
  checkHttpUrl,
  integerFlag,
  numberFlag,
  pairs,
  parse,
  readInput,
  readInputBytes,
  readUtf8,
  stdinOnce,
  UsageError,
} from './io.js';
import { parseCapturedRequest, type CapturedRequest } from './request-file.js';
import { canSend } from './send-http.js';

// Headers payhook send writes itself, or fetch refuses to send: given with
// --header, they would be overwritten, contradict what it signs and says it
// signed, or end in no answer.
const NOT_FOR_HEADER_FLAG: Readonly<Record<string, string>> = {
  host: "the signed Host is set with --host (fetch sends the target URL's own)",
  signature: 'payhook send signs the delivery itself (--key chooses the key)',
  'x-api-timestamp': 'the signed timestamp is set with --timestamp or --age',
  'content-length': 'set from the body as sent',
  'transfer-encoding': 'set from the body as sent',
  connection: 'fetch manages the connection and refuses this header',
  'keep-alive': 'fetch manages the connection and refuses this header',
  upgrade: 'fetch manages the connection and refuses this header',
  expect: 'fetch refuses this header',
};

/**
 * A `--header` the delivery can carry as signed: HTTP strips whitespace
 * around a value (the signature would then not verify on arrival), and a
 * name or value HTTP cannot carry is refused before anything is sent.
 */
function checkHeaderFlag(name: string, value: string): void {
  const lower = name.toLowerCase();
  if (Object.hasOwn(NOT_FOR_HEADER_FLAG, lower))
    throw new UsageError(`--header ${name}: ${NOT_FOR_HEADER_FLAG[lower]}`);
  checkSignedHeader('--header', name, value);
}

/** A header to sign, from `source` (a flag, or the capture re-signed): one HTTP carries as it was signed. */
function checkSignedHeader(source: string, name: string, value: string): void {
  if (/^[\t\n\r ]|[\t\n\r ]$/.test(value)) {
    throw new UsageError(
      `${source} ${name}: whitespace around the value is stripped on the way, so the signature would not verify`,
    );
  }
  if (!canSend(name, value)) {
    throw new UsageError(`${source} ${JSON.stringify(name)}: not a header name and value HTTP can carry`);
  }
}

/** The URL a capture was signed for, when it says: its recorded webhookUrl, else its own absolute URL or Host. */
function capturedUrl(capture: CapturedRequest): string | undefined {
  if (capture.webhookUrl !== undefined) return capture.webhookUrl;
  if (/^https?:\/\//i.test(capture.url)) return capture.url;
  const host = Object.entries(capture.headers).find(([name]) => name.toLowerCase() === 'host')?.[1];
  return host === undefined ? undefined : `https://${host}${capture.url.startsWith('/') ? '' : '/'}${capture.url}`;
}

/** The query the captured request carried, with its `?`, as it arrived (`''` for none). */
function capturedQuery(capture: CapturedRequest): string {
  const at = capture.url.indexOf('?');
  return at === -1 ? '' : capture.url.slice(at).replace(/#.*$/s, '');
}

/** The captured x-api-* headers besides the timestamp: the service signed them, so a re-signed copy keeps them. */
function signedExtras(capture: CapturedRequest): Record<string, string> {
  return Object.fromEntries(
    Object.entries(capture.headers).filter(
      ([name]) => name.toLowerCase().startsWith('x-api-') && name.toLowerCase() !== 'x-api-timestamp',
    ),
  );
}

// Node's fetch (undici) ends a request whose answer takes longer than 300 s (headersTimeout, bodyTimeout).
const MAX_TIMEOUT_MS = 300_000;

const BODY_FLAGS = ['variant', 'status', 'amount', 'transaction-id', 'field', 'body', 'tamper'] as const;
const SIGNING_FLAGS = ['webhook-url', 'key', 'host', 'header', 'age', 'timestamp'] as const;

/** `--age` in ms: positive in the past, negative in the future. */
function ageFlag(value: string | undefined): number {
  if (value === undefined) return 0;
  if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(
      `--age must be a whole number of milliseconds, negative for the future (got ${JSON.stringify(value)})`,
    );
  }
  if (Number(value) > Date.now()) throw new UsageError(`--age ${value} dates the delivery before 1970`);
  return Number(value);
}

function parseFlags(args: readonly string[]) {
  return parse(
    args,
    {
      request: { type: 'string' },
      to: { type: 'string' },
      resign: { type: 'boolean' },
      variant: { type: 'string' },
      status: { type: 'string' },
      amount: { type: 'string' },
      'transaction-id': { type: 'string' },
      field: { type: 'string', multiple: true },
      body: { type: 'string' },
      'webhook-url': { type: 'string' },
      key: { type: 'string' },
      host: { type: 'string' },
      header: { type: 'string', multiple: true },
      age: { type: 'string' },
      timestamp: { type: 'string' },
      tamper: { type: 'boolean' },
      repeat: { type: 'string' },
      concurrency: { type: 'string' },
      retry: { type: 'boolean' },
      speed: { type: 'string' },
      'max-attempts': { type: 'string' },
      timeout: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    1,
  );
}

/** The flags as parsed. */
export type SendFlags = ReturnType<typeof parseFlags>['values'];

/** What `payhook send` was asked to do, checked. */
export interface SendOptions {
  readonly flags: SendFlags;
  /** The target, with the signed URL's query when it has none of its own. */
  readonly url: string;
  /** The URL the delivery is signed for; `undefined` for a capture replayed as captured. */
  readonly signedUrl: string | undefined;
  readonly capture: CapturedRequest | undefined;
  /** A capture sent again as it was received, not signed again. */
  readonly asCaptured: boolean;
  readonly overrides: TestWebhookOverrides;
  /** The extra headers to sign. */
  readonly headers: Record<string, string>;
  readonly age: number;
  readonly repeat: number;
  readonly concurrency: number;
  readonly speed: number;
  readonly maxAttempts: number;
  readonly timeoutMs: number;
  readonly privateKey: string | undefined;
}

/** `payhook send`'s options from its arguments, or `'help'` when `--help` asks for the usage. */
export async function readSendOptions(args: readonly string[]): Promise<SendOptions | 'help'> {
  const { values, positionals } = parseFlags(args);
  if (values.help) return 'help';
  if (positionals[0] !== undefined && values.to !== undefined && positionals[0] !== values.to)
    throw new UsageError('give the endpoint once: as <url> or as --to <url>');
  const given = positionals[0] ?? values.to;
  if (given === undefined)
    throw new UsageError('the endpoint URL is required: payhook send http://127.0.0.1:3000/webhooks/payments');
  const { username, password } = checkHttpUrl(given, 'the URL');
  let url = given;
  const replay = values.request !== undefined;
  if (!replay && (username !== '' || password !== ''))
    throw new UsageError('the URL holds user:password@, which fetch refuses: pass --header authorization=… instead');
  if (!replay && values.resign) throw new UsageError('--resign re-signs a capture: give it with --request <file>');
  if (replay) {
    for (const flag of BODY_FLAGS) {
      if (values[flag] !== undefined)
        throw new UsageError(`--${flag} builds a new delivery; --request replays the captured one as it is`);
    }
    if (!values.resign) {
      for (const flag of SIGNING_FLAGS) {
        if (values[flag] !== undefined)
          throw new UsageError(`--${flag} changes the signature: add --resign to sign the capture again`);
      }
    }
  }
  stdinOnce([
    ['--request', values.request],
    ['--body', values.body],
    ['--key', values.key],
  ]);
  const capture = replay ? parseCapturedRequest(await readInputBytes(values.request!, 'request file')) : undefined;
  const asCaptured = capture !== undefined && !values.resign;
  // The service signs the registered URL; the target may be anything that reaches the receiver.
  const signedUrl = asCaptured
    ? undefined
    : (values['webhook-url'] ?? (capture === undefined ? url : capturedUrl(capture)));
  if (capture !== undefined && !asCaptured && signedUrl === undefined)
    throw new UsageError('the capture names no URL it was signed for: give --webhook-url <registered URL>');
  if (signedUrl !== undefined) {
    const what =
      values['webhook-url'] !== undefined
        ? '--webhook-url'
        : capture !== undefined
          ? 'the URL the capture was signed for (its webhookUrl or Host; --webhook-url overrides it)'
          : 'the target URL';
    checkHttpUrl(signedUrl, what);
  }
  // A URL given as a receiver's webhookUrl gets the receiver's own check of that option: one it refuses cannot be
  // one a delivery is signed for. (A target URL alone is signed as an allowAnyHost receiver reads it.)
  const pinned = values['webhook-url'] ?? (asCaptured ? undefined : capture?.webhookUrl);
  if (pinned !== undefined) {
    try {
      pinWebhookUrl(pinned);
    } catch (error) {
      const what = values['webhook-url'] !== undefined ? '--webhook-url' : "the capture's webhookUrl";
      throw new UsageError(`${what}: ${(error as Error).message}`);
    }
  }

  // The service requests the registered URL, query included: a target without a query of its own gets it (or,
  // replayed as captured, the query the captured request carried, which its signature covers), so a receiver
  // pinned to that URL sees the parameters it expects.
  // A fragment is never sent, and a query written after one would not be either.
  const unhashed = given.replace(/#.*$/s, '');
  if (!unhashed.includes('?')) {
    if (signedUrl !== undefined) url = unhashed + new URL(signedUrl).search;
    else if (asCaptured) url = unhashed + capturedQuery(capture);
  }
  const overrides: TestWebhookOverrides = { webhookUrl: signedUrl ?? url };
  if (values.body !== undefined) {
    let fromFile: unknown;
    try {
      fromFile = JSON.parse(await readUtf8(values.body, 'body file'));
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`the body file is not JSON: ${(error as Error).message}`);
    }
    if (typeof fromFile !== 'object' || fromFile === null || Array.isArray(fromFile))
      throw new UsageError('the body file must hold a JSON object');
    Object.assign(overrides, fromFile);
  }
  if (values.variant !== undefined) {
    if (!TEST_WEBHOOK_VARIANTS.includes(values.variant as TestWebhookVariant)) {
      throw new UsageError(`--variant must be one of ${TEST_WEBHOOK_VARIANTS.join(', ')}`);
    }
    overrides.variant = values.variant as TestWebhookVariant;
  } else if (overrides.variant !== undefined && !TEST_WEBHOOK_VARIANTS.includes(overrides.variant)) {
    throw new UsageError(`"variant" in the body file must be one of ${TEST_WEBHOOK_VARIANTS.join(', ')}`);
  }
  if (values.status !== undefined) overrides.status = values.status;
  if (values.amount !== undefined) {
    const amount = Number(values.amount);
    // Decimal only: Number() also reads 0x10 and 0b101, which no merchant means as an amount.
    if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i.test(values.amount) || !Number.isFinite(amount)) {
      throw new UsageError(`--amount must be a decimal number (got ${JSON.stringify(values.amount)})`);
    }
    overrides.amount = amount;
    // The flag wins over the body file's fields.amount and data.amount too (a --field amount=… below still wins).
    const withAmount = (part: unknown) =>
      typeof part === 'object' && part !== null && 'amount' in part ? { ...part, amount } : part;
    const loose = overrides as Record<string, unknown>;
    for (const part of ['fields', 'data']) if (part in loose) loose[part] = withAmount(loose[part]);
  }
  if (values['transaction-id'] !== undefined) overrides.transactionId = values['transaction-id'];
  const fieldPairs = pairs(values.field, 'field');
  if (fieldPairs.length > 0) {
    const base = typeof overrides.fields === 'object' && overrides.fields !== null ? overrides.fields : {};
    overrides.fields = { ...base, ...Object.fromEntries(fieldPairs) };
  }
  const headerFlags = pairs(values.header, 'header');
  for (const [name, value] of headerFlags) checkHeaderFlag(name, value);
  const extras = capture === undefined || asCaptured ? {} : signedExtras(capture);
  for (const [name, value] of Object.entries(extras)) checkSignedHeader('the captured header', name, value);
  // A name given twice is one header with the values joined by ", ", as HTTP reads repeated header lines (and Node
  // and fetch's Headers join them): the joined value is what is signed and sent.
  const flagged = new Map<string, string>();
  for (const [name, value] of headerFlags) {
    const lower = name.toLowerCase();
    const before = flagged.get(lower);
    flagged.set(lower, before === undefined ? value : `${before}, ${value}`);
  }
  const headers = { ...extras, ...Object.fromEntries(flagged) };
  if (values.timestamp !== undefined && !/^\d+$/.test(values.timestamp))
    throw new UsageError('--timestamp must be UNIX time in milliseconds');
  if (values.timestamp !== undefined && values.age !== undefined)
    throw new UsageError('--timestamp and --age exclude each other');
  const age = ageFlag(values.age);
  const repeat = integerFlag(values.repeat, 'repeat', 1);
  const concurrency = integerFlag(values.concurrency, 'concurrency', 1);
  for (const flag of ['speed', 'max-attempts'] as const) {
    if (values[flag] !== undefined && !values.retry)
      throw new UsageError(`--${flag} sets how --retry retries: add --retry`);
  }
  const speed = numberFlag(values.speed, 'speed', 1);
  const maxAttempts = values.retry ? integerFlag(values['max-attempts'], 'max-attempts', 10) : 1;
  const timeoutMs = integerFlag(values.timeout, 'timeout', 10_000);
  if (timeoutMs > MAX_TIMEOUT_MS) {
    throw new UsageError(
      `--timeout must be at most ${MAX_TIMEOUT_MS} ms (5 min): fetch stops waiting for an answer after 5 minutes anyway`,
    );
  }
  const privateKey = values.key === undefined ? undefined : await readInput(values.key, 'key file');
  return {
    flags: values,
    url,
    signedUrl,
    capture,
    asCaptured,
    overrides,
    headers,
    age,
    repeat,
    concurrency,
    speed,
    maxAttempts,
    timeoutMs,
    privateKey,
  };
}
