import { retryDelay } from '../retry.js';
import {
  createTestWebhook,
  TEST_WEBHOOK_VARIANTS,
  type TestWebhookOverrides,
  type TestWebhookVariant,
} from '../testing/deliveries.js';
import { signWebhook, type SignedWebhook } from '../testing/sign.js';
import { MAX_TIMER_MS } from '../lib/clock.js';
import { duration, EXIT, integerFlag, numberFlag, pairs, parse, readInput, sleep, UsageError, type Io } from './io.js';

export const SEND_HELP = `Usage: payhook send <url> [options]

Signs a test webhook as the service does and delivers it to your endpoint.
Give --webhook-url the URL your receiver's webhookUrl option holds (the one
registered with the service): the delivery is signed for its host, path and
query, as the service signs, and sent to <url>, e.g. your app on localhost.
It is signed with payhook's published TEST key unless you pass --key: give
your receiver that public key in tests (TEST_KEY_PAIR.publicKey from
payhook/testing, or the one from payhook keygen), never in production.

The body:
  --variant <name>          base, card, extended, signed-body, web or credit (default: base)
  --status <status>         sent as given, e.g. SUCCEEDED, FAILED, success (default: SUCCEEDED)
  --amount <number>         the amount (fields.amount follows; default: 100)
  --transaction-id <id>     the transaction ID (default: a random UUID)
  --field <name>=<value>    a payment form field (repeatable)
  --body <file>             a JSON object of body fields (and "variant"); flags win over it

Signing:
  --webhook-url <url>       the registered URL to sign for (default: <url> itself)
  --key <pem file>          private key to sign with (default: payhook's test key)
  --host <host>             sign this Host instead of the signed URL's (fetch still sends <url>'s)
  --header <name>=<value>   an extra header; x-api-* ones are signed (repeatable)
  --age <ms>                date the delivery this many ms in the past (a stale one: 600000)
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
An attempt counts as answered once the whole answer has arrived.

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

export async function sendCommand(args: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parse(
    args,
    {
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
  const url = positionals[0];
  if (url === undefined)
    throw new UsageError('the endpoint URL is required: payhook send http://127.0.0.1:3000/webhooks/payments');
  checkHttpUrl(url, 'the URL');
  // The service signs the registered URL; the target may be anything that reaches the receiver.
  const signedUrl = values['webhook-url'] ?? url;
  if (values['webhook-url'] !== undefined) checkHttpUrl(signedUrl, '--webhook-url');

  const overrides: TestWebhookOverrides = { webhookUrl: signedUrl };
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
  const headers = Object.fromEntries(pairs(values.header, 'header'));
  if (values.timestamp !== undefined && !/^\d+$/.test(values.timestamp))
    throw new UsageError('--timestamp must be UNIX time in milliseconds');
  if (values.timestamp !== undefined && values.age !== undefined)
    throw new UsageError('--timestamp and --age exclude each other');
  const age = values.age === undefined ? 0 : integerFlag(values.age, 'age', 0, 0);
  const repeat = integerFlag(values.repeat, 'repeat', 1);
  const concurrency = integerFlag(values.concurrency, 'concurrency', 1);
  const speed = numberFlag(values.speed, 'speed', 1);
  const maxAttempts = values.retry ? integerFlag(values['max-attempts'], 'max-attempts', 10) : 1;
  const timeoutMs = integerFlag(values.timeout, 'timeout', 10_000);
  if (timeoutMs > MAX_TIMER_MS) throw new UsageError(`--timeout must be at most ${MAX_TIMER_MS} ms (about 24.8 days)`);
  const privateKey = values.key === undefined ? undefined : await readInput(values.key, 'key file');

  let body: object;
  try {
    body = createTestWebhook(overrides);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const signBody = async (): Promise<SignedWebhook> =>
    signWebhook(body, {
      url: signedUrl,
      timestamp: values.timestamp ?? Date.now() - age,
      headers,
      ...(values.host !== undefined ? { host: values.host } : {}),
      ...(privateKey !== undefined ? { privateKey } : {}),
    });
  // What an attacker who cannot sign would send: a signed delivery with a better amount.
  const sign = async (): Promise<SignedWebhook> => {
    const signed = await signBody();
    if (!values.tamper) return signed;
    const forged = JSON.parse(signed.body) as { amount?: unknown };
    forged.amount = Number(forged.amount) * 100;
    return { ...signed, body: JSON.stringify(forged) };
  };
  let first: SignedWebhook;
  try {
    first = await sign();
  } catch (error) {
    throw new UsageError(`cannot sign: ${(error as Error).message}`);
  }
  io.out(`→ POST ${url}`);
  io.out(`  signed for ${values.host === undefined ? signedUrl : `${signedUrl} with Host ${values.host}`}`);
  io.out(`  body: ${first.body}`);
  if (values.tamper) io.out('  tampered: the amount was multiplied by 100 after signing; a receiver must answer 401');
  io.out(
    `  signed with ${privateKey === undefined ? "payhook's TEST key (TEST_KEY_PAIR)" : values.key}; ${repeat} deliver${repeat === 1 ? 'y' : 'ies'}, ${concurrency} at a time${values.retry ? `, retrying on the schedule at ×${speed}` : ''}`,
  );

  const deliver = async (index: number): Promise<Outcome> => {
    const label = repeat > 1 ? `[${index + 1}] ` : '';
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      // The deliveries that start at once send the first signed request;
      // any later one, and every retry, is signed when it starts, so it is
      // fresh whatever waited before it.
      const signed = attempt === 1 && index < concurrency ? first : await sign();
      const started = Date.now();
      let line: string;
      let status = 0;
      let response: Response | undefined;
      try {
        response = await fetch(url, {
          method: signed.method,
          headers: Object.fromEntries(Object.entries(signed.headers).filter(([name]) => name !== 'host')),
          body: signed.body,
          signal: AbortSignal.timeout(timeoutMs),
        });
        const text = (await response.text()).replace(/\s+/g, ' ').slice(0, 200);
        // Counted once the whole answer arrived, as the line says.
        status = response.status;
        line = `${status} ${response.statusText}${text === '' ? '' : ` ${text}`}`;
      } catch (error) {
        const reason = failureReason(error);
        line =
          response === undefined
            ? `no answer (${reason})`
            : `${response.status} ${response.statusText}, but the body did not arrive (${reason})`;
      }
      io.out(`${label}attempt ${attempt}: ${line} (${Date.now() - started} ms)`);
      if (status === 200) return { ok: true };
      if (attempt === maxAttempts) break;
      const delay = retryDelay(attempt);
      const wait = delay / speed;
      io.out(`${label}  retry ${attempt} in ${duration(delay)}${speed === 1 ? '' : ` (×${speed}: ${duration(wait)})`}`);
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
