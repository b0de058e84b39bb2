import { explainVerificationFailure, type VerificationDiagnosis } from '../explain/index.js';
import { isPayhookError } from '../errors.js';
import { DEFAULT_TOLERANCE_MS } from '../freshness.js';
import type { KeyInput } from '../keys.js';
import type { ServiceEnvironment } from '../service-keys.js';
import { importKeys } from '../lib/key-import.js';
import { TEST_PUBLIC_KEY } from '../testing/test-public-key.js';
import {
  DEFAULT_MAX_BODY_BYTES,
  verifyWebhook,
  type VerifyWebhookOptions,
  type VerifyWebhookResult,
} from '../verify-webhook.js';
import {
  checkHttpUrl,
  formatDuration,
  EXIT,
  integerFlag,
  parse,
  pairs,
  readInput,
  readInputBytes,
  stdinOnce,
  UsageError,
  type Io,
} from './io.js';
import { parseCapturedRequest } from './request-file.js';

export const VERIFY_HELP = `Usage: payhook verify --request <file> (--env production|beta | --key <pem file> | --test-key) [options]

Checks a captured delivery as your receiver would, and when it does not
verify, finds out why: it prints the canonical string, then tries the likely
causes (a rewritten Host, a stripped path prefix, a dropped or added query
string, an x-api-* header added by a proxy, the other environment's key,
payhook's own test key) and names the one that makes the signature verify,
with the fix. When nothing names the signed host (Host rewritten with no
X-Forwarded-Host), or nothing verifies with your webhookUrl (it may not be
the URL registered with the service), give --registered-url.

The request file is JSON { "method", "url", "headers", "body" } (like an
entry's "request" in the conformance vectors; a whole entry works too), or
raw HTTP (request line, headers, blank line, the body's exact bytes).
"-" reads stdin (for one file only: the request or a key).
A capture that recorded your receiver's "webhookUrl" (captureDelivery with
{ webhookUrl }) is judged with it, as your receiver judged it.

Options:
  --request <file>          the captured delivery (required)
  --env <name>              accept the service's production or beta key (one: the other
                            environment's key is tried as a likely cause anyway)
  --key <pem file>          accept this public key (repeatable)
  --test-key                accept payhook's published test key, as a receiver run with the test
                            key does (TEST_KEY_PAIR, PAYHOOK_TEST_KEY in the quick start)
  --also-try <name>=<pem>   try this key too as a likely cause, reported by name (repeatable)
  --webhook-url <url>       your receiver's webhookUrl option (host, path and query come from it;
                            default: the capture's "webhookUrl")
  --registered-url <url>    the URL registered with the service, tried as a likely cause only
  --trust-forwarded         your receiver sets trustForwardedHeaders (host from X-Forwarded-Host)
  --now <ms>                judge the timestamp at this time (UNIX ms; default: the current time)
  --ignore-timestamp        judge the timestamp at its own time (for old captures)
  --max-body-bytes <n>      your receiver's maxBodyBytes: a larger body is BODY_TOO_LARGE
                            (default: 32768, the default of verifyWebhook and the handlers)
  --json                    print the result and diagnosis as JSON
  -h, --help                show this help

A body line over 2000 characters is printed cut short (--json prints it whole).

Exit codes: 0 the delivery verifies; 1 it does not (the diagnosis says why);
2 usage error (missing or unreadable file, bad key, unknown option).`;

// How much of one line of a canonical string is printed: a capture's body can hold megabytes.
const LINE_SHOWN = 2_000;

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) =>
      line.length <= LINE_SHOWN
        ? `    │ ${line}`
        : `    │ ${line.slice(0, LINE_SHOWN)}… (${line.length} characters in all; --json prints it whole)`,
    )
    .join('\n');
}

/** Whether a timestamp is in seconds: every millisecond time since 1973 has 12 digits or more. */
function looksLikeSeconds(header: string): boolean {
  return Number(header) < 1e11;
}

/**
 * What to do about a timestamp outside the window, when the time it was
 * judged at was not chosen: an old capture is judged at its own time with
 * --ignore-timestamp; one from the future points at a clock.
 */
function timestampHint(header: string | undefined, now: number, timeChosen: boolean): string | undefined {
  if (timeChosen || header === undefined || !/^\d+$/.test(header)) return undefined;
  const age = now - Number(header);
  if (Math.abs(age) <= DEFAULT_TOLERANCE_MS) return undefined;
  if (looksLikeSeconds(header)) {
    return "the capture's x-api-timestamp is in seconds, not milliseconds: whatever signed it did not date it as the service does (Date.now()), and every receiver refuses it";
  }
  if (age > 0) {
    // Within the hour, a capture made just now by a receiver whose clock is off looks the same as an old one.
    const clock =
      age <= 3_600_000 ? ' (captured just now? then a clock is off: check NTP here and on the receiver)' : '';
    return `the capture's timestamp is ${formatDuration(age)} old, outside the ${formatDuration(DEFAULT_TOLERANCE_MS)} window${clock}: add --ignore-timestamp to judge it at its own time`;
  }
  return `the capture's timestamp is ${formatDuration(-age)} ahead of this machine's clock: check both clocks (NTP), or add --ignore-timestamp to judge it at its own time`;
}

export async function verifyCommand(args: readonly string[], io: Io): Promise<number> {
  const { values } = parse(args, {
    request: { type: 'string' },
    env: { type: 'string', multiple: true },
    key: { type: 'string', multiple: true },
    'test-key': { type: 'boolean' },
    'also-try': { type: 'string', multiple: true },
    'webhook-url': { type: 'string' },
    'registered-url': { type: 'string' },
    'trust-forwarded': { type: 'boolean' },
    now: { type: 'string' },
    'ignore-timestamp': { type: 'boolean' },
    'max-body-bytes': { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    io.out(VERIFY_HELP);
    return EXIT.OK;
  }
  if (values.request === undefined) throw new UsageError('--request <file> is required');
  const environments = values.env ?? [];
  for (const env of environments) {
    if (env !== 'production' && env !== 'beta')
      throw new UsageError(`--env must be production or beta (got ${JSON.stringify(env)})`);
  }
  if (new Set(environments).size > 1) {
    throw new UsageError("--env once: production or beta (the other environment's key is tried as a cause anyway)");
  }
  if (environments.length === 0 && (values.key ?? []).length === 0 && !values['test-key']) {
    throw new UsageError('say which key to verify with: --env production, --env beta, --key <pem file> or --test-key');
  }
  if (values.now !== undefined && values['ignore-timestamp'])
    throw new UsageError('--now and --ignore-timestamp exclude each other');
  if (values.now !== undefined && !/^\d+$/.test(values.now))
    throw new UsageError('--now must be UNIX time in milliseconds');

  const alsoTry = pairs(values['also-try'], 'also-try');
  stdinOnce([
    ['--request', values.request],
    ...(values.key ?? []).map((file) => ['--key', file] as const),
    ...alsoTry.map(([name, file]) => [`--also-try ${name}`, file] as const),
  ]);
  const maxBodyBytes = integerFlag(values['max-body-bytes'], 'max-body-bytes', DEFAULT_MAX_BODY_BYTES);

  const { webhookUrl: recordedUrl, ...request } = parseCapturedRequest(
    await readInputBytes(values.request, 'request file'),
  );
  if (values['webhook-url'] !== undefined) checkHttpUrl(values['webhook-url'], '--webhook-url');
  const webhookUrl = values['webhook-url'] ?? recordedUrl;
  const publicKeys: KeyInput[] = [];
  for (const file of values.key ?? []) publicKeys.push(await readInput(file, 'key file'));
  if (values['test-key']) publicKeys.push(TEST_PUBLIC_KEY);
  const alternativeKeys: Record<string, KeyInput> = {};
  for (const [name, file] of alsoTry) {
    const key = await readInput(file, 'key file');
    // The diagnosis passes over a key it cannot use; one given here by hand is a mistake to name.
    await importKeys(key, undefined).catch((error: unknown) => {
      throw new UsageError(`--also-try ${name}: ${(error as Error).message}`);
    });
    alternativeKeys[name] = key;
  }
  const registeredUrl = values['registered-url'];
  if (registeredUrl !== undefined) checkHttpUrl(registeredUrl, '--registered-url');

  const timestampHeader = Object.entries(request.headers).find(
    ([name]) => name.toLowerCase() === 'x-api-timestamp',
  )?.[1];
  // Judged at its own time, unless it is in seconds: every receiver refuses those, so no ✓ for one.
  const ownTime =
    values['ignore-timestamp'] === true &&
    timestampHeader !== undefined &&
    /^\d+$/.test(timestampHeader) &&
    !looksLikeSeconds(timestampHeader);
  const now = ownTime ? Number(timestampHeader) : values.now !== undefined ? Number(values.now) : Date.now();
  // A clock that reads the time chosen (a fixed `now` would be named as a merchant's mistake in the message).
  const options: VerifyWebhookOptions = { now: () => now, maxBodyBytes };
  if (publicKeys.length > 0) options.publicKeys = publicKeys;
  if (environments.length > 0) options.environment = environments as ServiceEnvironment[];
  if (webhookUrl !== undefined) options.webhookUrl = webhookUrl;
  if (values['trust-forwarded']) options.trustForwardedHeaders = true;

  let result: VerifyWebhookResult;
  try {
    result = await verifyWebhook(request, options);
  } catch (error) {
    if (isPayhookError(error)) throw new UsageError(`${error.code}: ${error.message}`);
    throw error;
  }
  let diagnosis: VerificationDiagnosis | undefined;
  let hint: string | undefined;
  if (!result.ok) {
    hint = timestampHint(timestampHeader, now, values.now !== undefined || ownTime);
    diagnosis = await explainVerificationFailure(request, {
      ...options,
      alternativeKeys,
      ...(registeredUrl !== undefined ? { registeredUrl } : {}),
    });
  }

  if (values.json) {
    io.out(
      JSON.stringify(
        {
          ok: result.ok,
          // What host, path and query were judged by: null for the request's own (as allowAnyHost does).
          webhookUrl: webhookUrl ?? null,
          ...(result.ok
            ? { canonical: result.canonical, webhook: { ...result.webhook, raw: undefined } }
            : { error: result.error, diagnosis, ...(hint === undefined ? {} : { hint }) }),
        },
        null,
        2,
      ),
    );
    return result.ok ? EXIT.OK : EXIT.FAILED;
  }
  const recorded =
    values['webhook-url'] === undefined && recordedUrl !== undefined
      ? `  judged with webhookUrl ${recordedUrl} (recorded in the capture; --webhook-url overrides it)`
      : undefined;
  if (result.ok) {
    const { webhook } = result;
    io.out(
      `✓ verifies: ${webhook.status} ${webhook.operation} of ${webhook.amount}, transaction ${webhook.transactionId}`,
    );
    // A receiver pinned to a webhookUrl judges host, path and query by it: one with a typo refuses this delivery.
    if (webhookUrl === undefined) {
      io.out(
        `  judged with the request's own ${values['trust-forwarded'] ? 'forwarded Host (--trust-forwarded)' : 'Host'}, path and query (no --webhook-url given, none recorded in the capture): a receiver with a webhookUrl judges by that URL instead, so pass --webhook-url <your receiver's webhookUrl> to judge as it does`,
      );
    }
    if (recorded !== undefined) io.out(recorded);
    io.out(`  canonical string:\n${indent(result.canonical)}`);
    return EXIT.OK;
  }
  io.out(`✗ does not verify: ${result.error.code}: ${result.error.message}`);
  if (recorded !== undefined) io.out(recorded);
  if (result.error.code === 'BODY_TOO_LARGE') {
    io.out(
      `  judged with maxBodyBytes ${maxBodyBytes}${values['max-body-bytes'] === undefined ? ' (the default)' : ''}: if your receiver sets a larger maxBodyBytes, pass it with --max-body-bytes <n>`,
    );
  }
  for (const issue of result.error.issues ?? []) io.out(`    - ${issue.path || '(body)'}: ${issue.message}`);
  if (diagnosis?.canonical) {
    // With a webhookUrl, host, path and query are the registered URL's, not the request's.
    const source = webhookUrl === undefined ? 'as received' : `with host, path and query from ${webhookUrl}`;
    io.out(`  canonical string ${source}:\n${indent(diagnosis.canonical)}`);
  }
  if (result.error.code !== 'INVALID_PAYLOAD' && diagnosis) {
    // The diagnosis judges the signature, not the body's size.
    const aside = result.error.code === 'BODY_TOO_LARGE' ? " (the body's size aside)" : '';
    io.out(`  diagnosis${aside}: ${diagnosis.message}`);
    if (diagnosis.verifiedCanonical !== null && diagnosis.verifiedCanonical !== diagnosis.canonical) {
      io.out(`  canonical string that verifies:\n${indent(diagnosis.verifiedCanonical)}`);
    }
  }
  if (hint !== undefined) io.out(`  hint: ${hint}`);
  return EXIT.FAILED;
}
