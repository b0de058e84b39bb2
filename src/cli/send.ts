import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { retryDelay } from '../retry.js';
import {
  createTestWebhook,
  TEST_WEBHOOK_VARIANTS,
  type TestWebhookOverrides,
  type TestWebhookVariant,
} from '../testing/deliveries.js';
import { signWebhook, type SignedWebhook } from '../testing/sign.js';
import { MAX_TIMER_MS } from '../lib/clock.js';
import { answerCode, likelyCause, type SendContext } from './causes.js';
import {
  formatDuration,
  EXIT,
  integerFlag,
  numberFlag,
  pairs,
  parse,
  readInput,
  sleep,
  UsageError,
  type Io,
} from './io.js';
import { parseCapturedRequest, type CapturedRequest } from './request-file.js';

export const SEND_HELP = `Usage: payhook send <url> [options]
       payhook send --request <capture.json> --to <url> [--resign] [options]

Signs a test webhook as the service does and delivers it to your endpoint.
Give --webhook-url the URL your receiver's webhookUrl option holds (the one
registered with the service): the delivery is signed for its host, path and
query, as the service signs, and sent to <url>, e.g. your app on localhost.
It is signed with payhook's published TEST key unless you pass --key: give
your receiver that public key in tests (TEST_KEY_PAIR.publicKey from
payhook/testing, or the one from payhook keygen), never in production.

Replaying a capture (captureDelivery, onSignatureMismatch, or raw HTTP text):
  --request <file>          deliver this captured delivery instead of a new one: its method,
                            headers (Host included) and body byte for byte, as captured
  --to <url>                where to deliver it (the same as the <url> argument)
  --resign                  sign the captured body again, now, with the test key (or --key),
                            for --webhook-url, else the capture's webhookUrl, else its own URL

The body:
  --variant <name>          base, card, extended, signed-body, web or credit (default: base)
  --status <status>         sent as given, e.g. SUCCEEDED, FAILED, success (default: SUCCEEDED)
  --amount <number>         the amount (fields.amount follows; default: 100)
  --transaction-id <id>     the transaction ID (default: a random UUID)
  --field <name>=<value>    a payment form field (repeatable)
  --body <file>             a JSON object of body fields (and "variant"); flags win over it

Signing:
  --webhook-url <url>       the registered URL to sign for (default: <url> itself); its query is
                            added to <url> when <url> has none, as the service would send it
  --key <pem file>          private key to sign with (default: payhook's test key)
  --host <host>             sign this Host instead of the signed URL's (fetch still sends <url>'s)
  --header <name>=<value>   an extra header; x-api-* ones are signed (repeatable)
  --age <ms>                date the delivery this many ms in the past (a stale one: 600000);
                            negative dates it in the future (-400000: 400 s ahead, refused too)
  --timestamp <ms>          sign exactly this x-api-timestamp, on every attempt
  --tamper                  multiply the amount by 100 after signing: a forged delivery,
                            which your receiver must refuse with 401

Delivery:
  --repeat <n>              deliver the same webhook n times (default: 1)
  --concurrency <n>         how many deliveries at once (default: 1)
  --retry                   retry each delivery on the service's schedule until it gets 200
                            (30 s five times, then doubling from 60 s up to a day)
  --speed <factor>          compress the schedule: --speed 100 waits 300 ms for 30 s (default: 1)
  --max-attempts <n>        give up after n attempts per delivery (default: 10)
  --timeout <ms>            per attempt (default: 10000)
  -h, --help                show this help

Deliveries that start together send the same signed request. Every later
delivery and every retry is signed when it starts (a new x-api-timestamp,
the same body), so late ones stay inside the receiver's 5-minute window.
An attempt counts as answered once the whole answer has arrived. When the
receiver refuses, the code in its answer is turned into the likely cause
(the test key not accepted, a webhookUrl that differs, a clock) and the
command that tells them apart.

Exit codes: 0 every delivery got 200 OK; 1 some did not (or could not
connect); 2 usage error.`;

/**
 * Why a fetch failed, as briefly as the runtime says it: the system error
 * code (`ECONNREFUSED`), else the cause's message (`bad port`), else the
 * error's name (`TimeoutError`).
 */
function failureReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string' && cause.message !== '') return cause.message;
  return error instanceof Error ? error.name : 'error';
}

/** An absolute http: or https: URL, or a usage error naming `what`. */
function checkHttpUrl(value: string, what: string): void {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new UsageError(`${what} is not an absolute URL: ${JSON.stringify(value)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new UsageError(`${what} must be http: or https:`);
}

interface Outcome {
  ok: boolean;
}

/** One request to deliver: what `sign()` makes, or a capture as it was received. */
interface Delivery {
  method: string;
  headers: Readonly<Record<string, string>>;
  body: string | Uint8Array;
}

/** What came back from one attempt. */
interface Answered {
  status: number;
  statusText: string;
  text: string;
}

/** Why an attempt got no whole answer: the answer's status, if it came. */
class NoAnswer extends Error {
  constructor(
    readonly reason: string,
    readonly status?: { status: number; statusText: string },
  ) {
    super(reason);
  }
}

/** Headers that describe one connection or framing, never sent again as captured. */
const HOP_BY_HOP = new Set([
  'connection',
  'content-length',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'http2-settings',
]);

/** Delivers with fetch: the target's own Host; fetch adds its usual headers (none is signed). */
async function fetchDelivery(url: string, delivery: Delivery, timeoutMs: number): Promise<Answered> {
  let response: Response | undefined;
  try {
    response = await fetch(url, {
      method: delivery.method,
      headers: Object.fromEntries(Object.entries(delivery.headers).filter(([name]) => name !== 'host')),
      // Only signed deliveries come here, and signWebhook writes text; bytes go through exactDelivery.
      body: delivery.body as string,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    return { status: response.status, statusText: response.statusText, text };
  } catch (error) {
    throw new NoAnswer(failureReason(error), response);
  }
}

/**
 * Delivers exactly the captured headers (Host included; only the framing
 * headers are left to the connection) and body bytes, which fetch cannot:
 * it replaces Host and adds headers of its own.
 */
function exactDelivery(url: string, delivery: Delivery, timeoutMs: number): Promise<Answered> {
  const target = new URL(url);
  const body = typeof delivery.body === 'string' ? Buffer.from(delivery.body, 'utf8') : delivery.body;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(delivery.headers)) {
    if (!HOP_BY_HOP.has(name.toLowerCase()) && !name.startsWith(':')) headers[name] = value;
  }
  headers['content-length'] = String(body.byteLength);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    let answer: IncomingMessage | undefined;
    const fail = (error: NodeJS.ErrnoException): void => {
      const status =
        answer === undefined ? undefined : { status: answer.statusCode ?? 0, statusText: answer.statusMessage ?? '' };
      reject(new NoAnswer(error.code ?? error.message, status));
    };
    let request: ReturnType<typeof httpRequest>;
    try {
      request = send(target, { method: delivery.method, headers, timeout: timeoutMs }, (response) => {
        answer = response;
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            statusText: response.statusMessage ?? '',
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', (error: NodeJS.ErrnoException) => request.destroy(error));
      });
    } catch (error) {
      // A captured header Node will not send (a name or value with characters HTTP does not allow).
      fail(error as NodeJS.ErrnoException);
      return;
    }
    request.on('timeout', () => request.destroy(Object.assign(new Error('timed out'), { code: 'TimeoutError' })));
    request.on('error', fail);
    request.end(body);
  });
}

/** The URL a capture was signed for, when it says: its recorded webhookUrl, else its own absolute URL or Host. */
function capturedUrl(capture: CapturedRequest): string | undefined {
  if (capture.webhookUrl !== undefined) return capture.webhookUrl;
  if (/^https?:\/\//i.test(capture.url)) return capture.url;
  const host = Object.entries(capture.headers).find(([name]) => name.toLowerCase() === 'host')?.[1];
  return host === undefined ? undefined : `https://${host}${capture.url.startsWith('/') ? '' : '/'}${capture.url}`;
}

/** The captured x-api-* headers besides the timestamp: the service signed them, so a re-signed copy keeps them. */
function signedExtras(capture: CapturedRequest): Record<string, string> {
  return Object.fromEntries(
    Object.entries(capture.headers).filter(
      ([name]) => name.toLowerCase().startsWith('x-api-') && name.toLowerCase() !== 'x-api-timestamp',
    ),
  );
}

const BODY_FLAGS = ['variant', 'status', 'amount', 'transaction-id', 'field', 'body', 'tamper'] as const;
const SIGNING_FLAGS = ['webhook-url', 'key', 'host', 'header', 'age', 'timestamp'] as const;

/** `--age` in ms: positive in the past, negative in the future. */
function ageFlag(value: string | undefined): number {
  if (value === undefined) return 0;
  if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(Number(value)) || Number(value) > Date.now()) {
    throw new UsageError(
      `--age must be a whole number of milliseconds, negative for the future (got ${JSON.stringify(value)})`,
    );
  }
  return Number(value);
}

export async function sendCommand(args: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parse(
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
  if (values.help) {
    io.out(SEND_HELP);
    return EXIT.OK;
  }
  if (positionals[0] !== undefined && values.to !== undefined && positionals[0] !== values.to)
    throw new UsageError('give the endpoint once: as <url> or as --to <url>');
  const given = positionals[0] ?? values.to;
  if (given === undefined)
    throw new UsageError('the endpoint URL is required: payhook send http://127.0.0.1:3000/webhooks/payments');
  checkHttpUrl(given, 'the URL');
  let url = given;
  const replay = values.request !== undefined;
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
  const capture = replay ? parseCapturedRequest(await readInput(values.request!, 'request file')) : undefined;
  const asCaptured = capture !== undefined && !values.resign;
  // The service signs the registered URL; the target may be anything that reaches the receiver.
  const signedUrl = asCaptured
    ? undefined
    : (values['webhook-url'] ?? (capture === undefined ? url : capturedUrl(capture)));
  if (values['webhook-url'] !== undefined) checkHttpUrl(values['webhook-url'], '--webhook-url');
  if (capture !== undefined && !asCaptured && signedUrl === undefined)
    throw new UsageError('the capture names no URL it was signed for: give --webhook-url <registered URL>');

  // The service requests the registered URL, query included: a target without a query of its own gets it, so a
  // receiver pinned to that URL sees the parameters it expects.
  if (signedUrl !== undefined && !given.includes('?')) url = given + new URL(signedUrl).search;
  const overrides: TestWebhookOverrides = { webhookUrl: signedUrl ?? url };
  if (values.body !== undefined) {
    let fromFile: unknown;
    try {
      fromFile = JSON.parse(await readInput(values.body, 'body file'));
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
    if (values.amount.trim() === '' || !Number.isFinite(amount)) throw new UsageError('--amount must be a number');
    overrides.amount = amount;
  }
  if (values['transaction-id'] !== undefined) overrides.transactionId = values['transaction-id'];
  const fieldPairs = pairs(values.field, 'field');
  if (fieldPairs.length > 0) {
    const base = typeof overrides.fields === 'object' && overrides.fields !== null ? overrides.fields : {};
    overrides.fields = { ...base, ...Object.fromEntries(fieldPairs) };
  }
  const headers = {
    ...(capture === undefined ? {} : signedExtras(capture)),
    ...Object.fromEntries(pairs(values.header, 'header')),
  };
  if (values.timestamp !== undefined && !/^\d+$/.test(values.timestamp))
    throw new UsageError('--timestamp must be UNIX time in milliseconds');
  if (values.timestamp !== undefined && values.age !== undefined)
    throw new UsageError('--timestamp and --age exclude each other');
  const age = ageFlag(values.age);
  const repeat = integerFlag(values.repeat, 'repeat', 1);
  const concurrency = integerFlag(values.concurrency, 'concurrency', 1);
  const speed = numberFlag(values.speed, 'speed', 1);
  const maxAttempts = values.retry ? integerFlag(values['max-attempts'], 'max-attempts', 10) : 1;
  const timeoutMs = integerFlag(values.timeout, 'timeout', 10_000);
  if (timeoutMs > MAX_TIMER_MS) throw new UsageError(`--timeout must be at most ${MAX_TIMER_MS} ms (about 24.8 days)`);
  const privateKey = values.key === undefined ? undefined : await readInput(values.key, 'key file');

  let body: object | string;
  if (capture !== undefined) {
    if (typeof capture.body !== 'string' && !asCaptured)
      throw new UsageError('the captured body is not UTF-8 text, so it cannot be signed again (it is INVALID_BODY)');
    body = capture.body;
  } else {
    try {
      body = createTestWebhook(overrides);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }
  const signBody = async (): Promise<SignedWebhook> =>
    signWebhook(body, {
      url: signedUrl!,
      timestamp: values.timestamp ?? Date.now() - age,
      headers,
      ...(values.host !== undefined ? { host: values.host } : {}),
      ...(privateKey !== undefined ? { privateKey } : {}),
    });
  // What an attacker who cannot sign would send: a signed delivery with a better amount.
  const sign = async (): Promise<Delivery> => {
    if (asCaptured) return capture;
    const signed = await signBody();
    if (!values.tamper) return signed;
    const forged = JSON.parse(signed.body) as { amount?: unknown };
    forged.amount = Number(forged.amount) * 100;
    return { ...signed, body: JSON.stringify(forged) };
  };
  let first: Delivery;
  try {
    first = await sign();
  } catch (error) {
    throw new UsageError(`cannot sign: ${(error as Error).message}`);
  }
  const keyName = privateKey === undefined ? "payhook's TEST key (TEST_KEY_PAIR)" : values.key;
  io.out(`→ ${first.method} ${url}`);
  if (asCaptured) {
    const host = Object.entries(first.headers).find(([name]) => name.toLowerCase() === 'host')?.[1] ?? 'none';
    io.out(`  replaying ${values.request} as captured: method, headers (Host ${host}) and body byte for byte`);
  } else {
    if (capture !== undefined) io.out(`  replaying ${values.request}, signed again now`);
    io.out(`  signed for ${values.host === undefined ? signedUrl : `${signedUrl} with Host ${values.host}`}`);
  }
  io.out(`  body: ${typeof first.body === 'string' ? first.body : `${first.body.byteLength} bytes, not UTF-8`}`);
  if (values.tamper) io.out('  tampered: the amount was multiplied by 100 after signing; a receiver must answer 401');
  io.out(
    `  ${asCaptured ? 'signature as captured' : `signed with ${keyName}`}; ${repeat} deliver${repeat === 1 ? 'y' : 'ies'}, ${concurrency} at a time${values.retry ? `, retrying on the schedule at ×${speed}` : ''}`,
  );

  const context: SendContext = {
    signedFor: signedUrl,
    urlChosen: values['webhook-url'] !== undefined || capture !== undefined,
    keyFile: values.key,
    tampered: values.tamper === true,
    dated: values.age !== undefined || values.timestamp !== undefined,
    asCaptured,
  };
  const explained = new Set<string>();
  const explain = (status: number, text: string): void => {
    const code = answerCode(text);
    const cause = likelyCause(status, code, context);
    const seen = `${status} ${code ?? ''}`;
    if (cause === undefined || explained.has(seen)) return;
    explained.add(seen);
    const named = code === undefined ? '' : ` (${code})`;
    if (cause.causes.length === 1) io.out(`  likely cause${named}: ${cause.causes[0]}`);
    else io.out(`  likely causes${named}, most likely first:\n${cause.causes.map((one) => `    - ${one}`).join('\n')}`);
    if (cause.diagnose !== undefined) io.out(`  diagnose: ${cause.diagnose}`);
  };
  const post = asCaptured ? exactDelivery : fetchDelivery;

  const deliver = async (index: number): Promise<Outcome> => {
    const label = repeat > 1 ? `[${index + 1}] ` : '';
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      // The deliveries that start at once send the first signed request;
      // any later one, and every retry, is signed when it starts, so it is
      // fresh whatever waited before it.
      const delivery = attempt === 1 && index < concurrency ? first : await sign();
      const started = Date.now();
      let line: string;
      let answered: Answered | undefined;
      try {
        answered = await post(url, delivery, timeoutMs);
        const text = answered.text.replace(/\s+/g, ' ').slice(0, 200);
        line = `${answered.status} ${answered.statusText}${text === '' ? '' : ` ${text}`}`;
      } catch (error) {
        if (!(error instanceof NoAnswer)) throw error;
        line =
          error.status === undefined
            ? `no answer (${error.reason})`
            : `${error.status.status} ${error.status.statusText}, but the body did not arrive (${error.reason})`;
      }
      io.out(`${label}attempt ${attempt}: ${line} (${Date.now() - started} ms)`);
      // Counted once the whole answer arrived, as the line says.
      if (answered?.status === 200) return { ok: true };
      if (answered !== undefined) explain(answered.status, answered.text);
      if (attempt === maxAttempts) break;
      const delay = retryDelay(attempt);
      const wait = delay / speed;
      io.out(
        `${label}  retry ${attempt} in ${formatDuration(delay)}${speed === 1 ? '' : ` (×${speed}: ${formatDuration(wait)})`}`,
      );
      await sleep(wait);
    }
    return { ok: false };
  };

  const outcomes: Outcome[] = [];
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, repeat) }, async () => {
    while (next < repeat) {
      const index = next++;
      outcomes[index] = await deliver(index);
    }
  });
  await Promise.all(workers);
  const accepted = outcomes.filter((outcome) => outcome.ok).length;
  io.out(`${accepted} of ${repeat} deliver${repeat === 1 ? 'y' : 'ies'} answered 200 OK`);
  return accepted === repeat ? EXIT.OK : EXIT.FAILED;
}
