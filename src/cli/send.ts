import { SERVICE_WINDOW_MS } from '../lib/clock.js';
import { missingFrom } from '../lib/signed-target.js';
import { retryDelay } from '../retry.js';
import { createTestWebhook } from '../testing/deliveries.js';
import { signWebhook, type SignedWebhook } from '../testing/sign.js';
import { answerCode, answerField, EXPLAINED_CODES, likelyCause, noAnswerHint, type SendContext } from './causes.js';
import { formatDuration, EXIT, sleep, UsageError, type Io } from './io.js';
import { exactDelivery, fetchDelivery, NoAnswer, unsendableHeader, type Answered, type Delivery } from './send-http.js';
import { readSendOptions } from './send-options.js';

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
  --body <file>             a UTF-8 JSON object of body fields (and "variant"); flags win over it

Signing:
  --webhook-url <url>       the registered URL to sign for (default: <url> itself); its query is
                            added to <url> when <url> has none, as the service would send it
  --key <pem file>          private key to sign with (default: payhook's test key)
  --host <host>             sign this Host instead of the signed URL's (fetch still sends <url>'s)
  --header <name>=<value>   an extra header; x-api-* ones are signed (repeatable: a name given
                            twice is sent once, its values joined with ", " as HTTP joins them;
                            not Host, signature, x-api-timestamp or the body's length: see --host, --age)
  --age <ms>                date the delivery this many ms in the past (a stale one: 600000);
                            negative dates it in the future (-400000: 400 s ahead, refused too)
  --timestamp <ms>          sign exactly this x-api-timestamp, on every attempt (--repeat's check sent
                            after the copies keeps their age instead)
  --tamper                  multiply the amount by 100 (0 becomes 100) after signing: a forged delivery,
                            which your receiver must refuse with 401; sent after a control (below)

Delivery:
  --repeat <n>              deliver the same webhook n times (default: 1)
  --concurrency <n>         how many deliveries at once (default: 1)
  --retry                   retry each delivery on the service's schedule until it gets 200
                            (30 s five times, then doubling from 60 s up to a day)
  --speed <factor>          with --retry, compress the schedule: --speed 100 waits 300 ms for 30 s
                            (default: 1)
  --max-attempts <n>        with --retry, give up after n attempts per delivery (default: 10)
  --timeout <ms>            per attempt, at most 300000 (default: 10000)
  -h, --help                show this help

Deliveries that start together send the same signed request. Every later
delivery and every retry is signed when it starts (a new x-api-timestamp,
the same body), so late ones stay inside the receiver's 5-minute window.
An attempt counts as answered once the whole answer has arrived, or its
first 8 KiB: the rest of a longer answer is not read (the connection is
closed), and the first 200 characters are shown. When the receiver
refuses, the code in its answer is turned into the likely cause (the test
key not accepted, a webhookUrl that differs, a clock) and the command that
tells them apart.

--tamper first sends a control: the same delivery, not forged, dated a day
ago. A receiver that verifies this key for this URL checks the signature
first, so it refuses the control for its age (401 TIMESTAMP_OUT_OF_WINDOW)
without handling it; any other answer means a refused forgery would show
nothing, and the command stops there (exit 1).

Exit codes: 0 every delivery got 200 OK, or, with --repeat, at least one
copy did, every other copy was answered 409 (found in progress), and a
redelivery sent after them got 200 (a receiver that deduplicates answers so
once the claim is completed; while it gets 409 it is sent again, for about
8 s); for a delivery
a receiver must refuse (--tamper, or --age/--timestamp outside the ±5-minute
window), 0 when every one was answered 401 with the code of that check
(SIGNATURE_MISMATCH after a passed control, TIMESTAMP_OUT_OF_WINDOW);
1 otherwise (or could not connect, or still answered that redelivery 409:
a claim never completed; or accepted a delivery it must refuse); 2 usage error
(also a date within 5 s of the window's edge, where transit time decides).`;

// Before each redelivery sent after --repeat's copies, while it is answered 409 (about 8 s in all).
const REDELIVERY_WAITS_MS = [0, 250, 500, 1_000, 2_000, 4_000];

// How near the window's edge a date is refused as a usage error.
const WINDOW_EDGE_MS = 5_000;
// The control sent before --tamper's forgeries: dated far outside any window a receiver would set.
const CONTROL_AGE_MS = 86_400_000;

// How much of the body the summary line shows: a --body file can hold megabytes.
const BODY_SHOWN = 2_000;

function describeBody(body: string | Uint8Array): string {
  if (typeof body !== 'string') return `${body.byteLength} bytes, not UTF-8`;
  return body.length <= BODY_SHOWN ? body : `${body.slice(0, BODY_SHOWN)}… (${body.length} characters in all)`;
}

export async function sendCommand(args: readonly string[], io: Io): Promise<number> {
  const options = await readSendOptions(args);
  if (options === 'help') {
    io.out(SEND_HELP);
    return EXIT.OK;
  }
  const { flags, url, signedUrl, capture, asCaptured, overrides, headers, age } = options;
  const { repeat, concurrency, speed, maxAttempts, timeoutMs, privateKey } = options;
  // A capture signed again for the webhookUrl it recorded: the receiver's may have changed since.
  const urlFromCapture = capture?.webhookUrl !== undefined && !asCaptured && flags['webhook-url'] === undefined;
  // How far from now the delivery is dated (0 unless --age or --timestamp says otherwise); a capture keeps its own.
  // --timestamp dates every attempt alike, so that date ages with each retry.
  const offsetNow = (): number =>
    asCaptured ? 0 : flags.timestamp === undefined ? age : Date.now() - Number(flags.timestamp);
  const offset = offsetNow();
  // So close to the window's edge, the time on the way decides whether the date is inside: no verdict would hold.
  if (Math.abs(Math.abs(offset) - SERVICE_WINDOW_MS) < WINDOW_EDGE_MS) {
    throw new UsageError(
      `--age/--timestamp dates the delivery within ${WINDOW_EDGE_MS / 1000} s of the ±5-minute window's edge, where the time on the way decides the verdict: date it at most 295 s or at least 305 s away`,
    );
  }

  const unsendable = asCaptured && capture !== undefined ? unsendableHeader(capture.headers) : undefined;
  if (unsendable !== undefined) {
    throw new UsageError(
      `the capture's header ${JSON.stringify(unsendable)} holds a character HTTP cannot send (a control character, or one past U+00FF, such as the U+FFFD a capture on workerd holds for a byte that was not UTF-8): nothing was sent; edit or remove it in the capture`,
    );
  }
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
  const signBody = async (timestamp: number | string = flags.timestamp ?? Date.now() - age): Promise<SignedWebhook> =>
    signWebhook(body, {
      url: signedUrl!,
      timestamp,
      headers,
      ...(flags.host !== undefined ? { host: flags.host } : {}),
      ...(privateKey !== undefined ? { privateKey } : {}),
    });
  // What an attacker who cannot sign would send: a signed delivery with a better amount.
  /** The delivery to send: the capture as captured, else signed now (at `timestamp` when given), forged if told. */
  const sign = async (timestamp?: number): Promise<Delivery> => {
    if (asCaptured && capture !== undefined) return capture;
    const signed = await signBody(timestamp);
    if (!flags.tamper) return signed;
    const forged = JSON.parse(signed.body) as { amount?: unknown };
    const amount = Number(forged.amount);
    forged.amount = amount === 0 ? 100 : amount * 100; // 0 × 100 would leave the signed body as it was
    return { ...signed, body: JSON.stringify(forged) };
  };
  let first: Delivery;
  try {
    first = await sign();
  } catch (error) {
    throw new UsageError(`cannot sign: ${(error as Error).message}`);
  }
  const keyName = privateKey === undefined ? "payhook's TEST key (TEST_KEY_PAIR)" : flags.key;
  io.out(`→ ${first.method} ${url}`);
  if (asCaptured) {
    const host = Object.entries(first.headers).find(([name]) => name.toLowerCase() === 'host')?.[1] ?? 'none';
    io.out(`  replaying ${flags.request} as captured: method, headers (Host ${host}) and body byte for byte`);
  } else {
    if (capture !== undefined) io.out(`  replaying ${flags.request}, signed again now`);
    const from = urlFromCapture
      ? " (the webhookUrl the capture recorded; --webhook-url signs for the receiver's now)"
      : '';
    io.out(`  signed for ${flags.host === undefined ? signedUrl : `${signedUrl} with Host ${flags.host}`}${from}`);
  }
  io.out(`  body: ${describeBody(first.body)}`);
  if (flags.tamper) io.out('  tampered: the amount was multiplied by 100 after signing; a receiver must answer 401');
  io.out(
    `  ${asCaptured ? 'signature as captured' : `signed with ${keyName}`}; ${repeat} deliver${repeat === 1 ? 'y' : 'ies'}, ${concurrency} at a time${flags.retry ? `, retrying on the schedule at ×${speed}` : ''}`,
  );

  const context: SendContext = {
    signedFor: signedUrl,
    // A capture without a recorded webhookUrl is signed for its own Host and path: chosen by no one.
    urlChosen: flags['webhook-url'] !== undefined || urlFromCapture,
    urlFromCapture,
    keyFile: flags.key,
    tampered: flags.tamper === true,
    // Measured when a refusal is explained, after any retries.
    get datedMs() {
      return flags.age === undefined && flags.timestamp === undefined ? undefined : offsetNow();
    },
    hostGiven: flags.host !== undefined && !asCaptured,
    asCaptured,
    sentQuery: URL.canParse(url) ? new URL(url).search.slice(1) : '',
    queryDiffers:
      signedUrl !== undefined &&
      URL.canParse(url) &&
      URL.canParse(signedUrl) &&
      missingFrom(new URL(signedUrl).search.slice(1), new URL(url).search.slice(1)) !== undefined,
  };
  // A forged or stale delivery: the receiver passes by refusing it (401), and a 200 is the failure.
  const mustRefuse = flags.tamper === true || Math.abs(offset) > SERVICE_WINDOW_MS;
  // The refusal that proves the check: a forged delivery fails its signature; a stale one (signed correctly)
  // fails its timestamp. Any other 401 (a proxy's, a receiver without the test key, another webhookUrl) would
  // refuse a good delivery too, so it proves nothing about the receiver's checks.
  const refusalCode = flags.tamper === true ? 'SIGNATURE_MISMATCH' : 'TIMESTAMP_OUT_OF_WINDOW';
  const explained = new Set<string>();
  /** Prints the likely cause of a refusal (once per status and code); false when there is none to print. */
  const explain = (status: number, text: string, about: SendContext = context): boolean => {
    const code = answerCode(text);
    const cause = likelyCause(status, code, about, answerField(text, 'message'));
    const seen = `${status} ${code ?? ''}`;
    if (cause === undefined) return false;
    if (explained.has(seen)) return true;
    explained.add(seen);
    const named = code === undefined ? '' : ` (${code})`;
    if (cause.causes.length === 1) io.out(`  likely cause${named}: ${cause.causes[0]}`);
    else io.out(`  likely causes${named}, most likely first:\n${cause.causes.map((one) => `    - ${one}`).join('\n')}`);
    if (cause.diagnose !== undefined) io.out(`  diagnose: ${cause.diagnose}`);
    return true;
  };
  const post = asCaptured ? exactDelivery : fetchDelivery;

  /** Sends `delivery` once and prints `name: <answer> (<ms>)`; `undefined` when no answer arrived (as much as is read). */
  const sendOnce = async (name: string, delivery: Delivery): Promise<Answered | undefined> => {
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
          ? `no answer (${error.reason})${noAnswerHint(error.reason, url)}`
          : `${error.status.status} ${error.status.statusText}, but the body did not arrive (${error.reason})`;
    }
    io.out(`${name}: ${line} (${Date.now() - started} ms)`);
    return answered;
  };

  /** Names where a redirect points: the service does not follow it. */
  const redirected = (answered: Answered, label: string): void => {
    if (answered.location === undefined || answered.status < 300 || answered.status >= 400) return;
    io.out(
      `${label}  redirected to ${answered.location}: the service does not follow redirects; register (and send to) the final URL`,
    );
  };

  /**
   * Before --tamper's forgeries: whether the receiver verifies this key for
   * this URL at all. The same delivery, not forged, dated a day ago, reaches
   * the timestamp check only once its signature verified (CONTRACT §4), so
   * such a receiver refuses it TIMESTAMP_OUT_OF_WINDOW and handles nothing.
   * Without that, a forgery refused SIGNATURE_MISMATCH proves nothing: every
   * delivery would be.
   */
  const controlPasses = async (): Promise<boolean> => {
    io.out(
      'control: the same delivery, not forged, dated a day ago: a receiver that verifies it must refuse it for its age',
    );
    const answered = await sendOnce('control', await signBody(Date.now() - CONTROL_AGE_MS));
    if (answered === undefined) return false;
    const code = answerCode(answered.text);
    if (answered.status === 401 && code === 'TIMESTAMP_OUT_OF_WINDOW') return true;
    if (answered.status === 200) {
      io.out('  ✗ the receiver ACCEPTED a delivery dated a day ago: it must answer 401 TIMESTAMP_OUT_OF_WINDOW');
      return false;
    }
    if (answered.status === 401 && (code === undefined || !EXPLAINED_CODES.includes(code))) {
      // A receiver that names no check may well verify: nothing here tells its age check from its signature check.
      io.out(
        `  ✗ the control was refused 401 without a payhook code, so whether the receiver verifies deliveries signed with ${keyName} for ${signedUrl} cannot be told (a receiver not built on payhook, or a proxy in front), and a refused forgery would show nothing either: --tamper judges only a receiver that names the check a delivery failed; check by hand that a fresh delivery gets 200 (the same command without --tamper)`,
      );
      return false;
    }
    redirected(answered, '');
    const printed = explain(answered.status, answered.text, { ...context, tampered: false, datedMs: undefined });
    io.out(
      `  ✗ the control was not refused for its age (401 TIMESTAMP_OUT_OF_WINDOW), so the receiver is not shown to verify deliveries signed with ${keyName} for ${signedUrl}, and a refused forgery would show nothing: ${printed ? 'fix the cause above' : `find why it answered ${answered.status}`}, then run this again`,
    );
    return false;
  };

  /** Delivers one copy, retrying as told: the last answer's status (none: no answer arrived) and code. */
  const deliver = async (index: number): Promise<{ status: number | undefined; code: string | undefined }> => {
    const label = repeat > 1 ? `[${index + 1}] ` : '';
    let lastStatus: number | undefined;
    let lastCode: string | undefined;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      // The deliveries that start at once send the first signed request;
      // any later one, and every retry, is signed when it starts, so it is
      // fresh whatever waited before it.
      const delivery = attempt === 1 && index < concurrency ? first : await sign();
      const answered = await sendOnce(`${label}attempt ${attempt}`, delivery);
      // Counted once the answer arrived (as much as is read), as the line says.
      lastStatus = answered?.status;
      lastCode = answered === undefined ? undefined : answerCode(answered.text);
      if (mustRefuse && lastStatus === 200) {
        io.out(
          `${label}  ✗ the receiver ACCEPTED a ${flags.tamper === true ? 'forged delivery' : 'delivery dated outside the 5-minute window'}: it must answer 401`,
        );
      }
      if (lastStatus === 200) return { status: lastStatus, code: lastCode };
      if (answered !== undefined) {
        redirected(answered, label);
        explain(answered.status, answered.text);
      }
      if (mustRefuse && lastStatus === 401) {
        if (lastCode !== refusalCode) {
          const why =
            lastCode === undefined
              ? 'the answer names no check (a proxy, or a receiver not built on payhook, may refuse every request)'
              : flags.tamper === true && lastCode === 'TIMESTAMP_OUT_OF_WINDOW'
                ? 'the receiver judged the date you set first (drop --age/--timestamp)'
                : `${lastCode} would refuse this delivery unforged and fresh too`;
          io.out(
            `${label}  ✗ refused, but not with ${refusalCode}: ${why}, so its ${flags.tamper === true ? 'signature' : 'timestamp'} check was not shown; fix the cause above, then run this again`,
          );
        }
        break; // refused: nothing to retry
      }
      if (attempt === maxAttempts) break;
      const delay = retryDelay(attempt);
      const wait = delay / speed;
      io.out(
        `${label}  retry ${attempt} in ${formatDuration(delay)}${speed === 1 ? '' : ` (×${speed}: ${formatDuration(wait)})`}`,
      );
      await sleep(wait);
    }
    return { status: lastStatus, code: lastCode };
  };

  if (flags.tamper === true && !(await controlPasses())) return EXIT.FAILED;
  const outcomes: { status: number | undefined; code: string | undefined }[] = [];
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, repeat) }, async () => {
    while (next < repeat) {
      const index = next++;
      outcomes[index] = await deliver(index);
    }
  });
  await Promise.all(workers);
  const accepted = outcomes.filter(({ status }) => status === 200).length;
  if (mustRefuse) {
    const refused = outcomes.filter(({ status, code }) => status === 401 && code === refusalCode).length;
    io.out(
      `${refused} of ${repeat} deliver${repeat === 1 ? 'y' : 'ies'} refused with 401 ${refusalCode}, as a receiver must`,
    );
    return refused === repeat ? EXIT.OK : EXIT.FAILED;
  }
  io.out(`${accepted} of ${repeat} deliver${repeat === 1 ? 'y' : 'ies'} answered 200 OK`);
  if (accepted === repeat) return EXIT.OK;
  // Copies of one delivery at once: one is handled, the others find it in progress (409). When their answers arrive
  // says nothing of when the claim was looked at, so a redelivery after them tells: a receiver that completed the
  // claim answers it 200 (a duplicate). One may complete it a moment after its 200 (the service's document has the
  // order updated after the answer), so a 409 is asked again a few times, for about 8 s in all.
  const inProgress = outcomes.filter(({ status }) => status === 409).length;
  if (accepted === 0 || inProgress === 0 || accepted + inProgress < repeat) return EXIT.FAILED;
  const copies = `${inProgress} cop${inProgress === 1 ? 'y' : 'ies'}`;
  let check: Answered | undefined;
  for (const wait of REDELIVERY_WAITS_MS) {
    await sleep(wait);
    // Dated at the age the copies had (a --timestamp near the window's edge would otherwise age out of it here).
    check = await sendOnce('redelivery after them', await sign(Date.now() - offset));
    if (check?.status !== 409) break;
  }
  if (check?.status === 200) {
    io.out(
      `the other ${copies} answered 409, found in progress, and the redelivery 200: a receiver that deduplicates answers so (the service retries such a copy later and gets 200)`,
    );
    return EXIT.OK;
  }
  if (check?.status === 409) {
    io.out(
      `${copies} answered 409, and redeliveries after them still 409 some 8 s later: the receiver never completed the claim (a redelivery after the 200 should get 200, as a duplicate)`,
    );
    return EXIT.FAILED;
  }
  if (check !== undefined) explain(check.status, check.text);
  const got = check === undefined ? 'got no answer' : `was answered ${check.status}`;
  io.out(
    `${copies} answered 409, found in progress, but the redelivery after them ${got}, so whether the claim was completed is not known`,
  );
  return EXIT.FAILED;
}
