/**
 * explainVerificationFailure: from a refused delivery to the change that
 * makes its signature verify, and the fix.
 *
 * @module
 */
import type { JsonObject } from '../lib/json-body.js';
import { checkTimestamp } from '../freshness.js';
import { canonicalHead } from '../lib/canonical.js';
import { decodeBase64Lenient } from '../lib/base64.js';
import { inSeconds, resolveClock } from '../lib/clock.js';
import { isPayhookError } from '../lib/errors.js';
import { firstListItem, getHeader } from '../lib/headers.js';
import { describeError } from '../lib/misuse.js';
import type { HeadersInput } from '../lib/request-types.js';
import { couldBeSignature, withPublicNumbers } from '../lib/rsa-filter.js';
import { signatureLength, verifyWithKeys } from '../lib/rsa-verify.js';
import { readSigned } from '../lib/signed-read.js';
import {
  missingFrom,
  normalHost,
  MAX_TIES,
  pinWebhookUrl,
  registeredUrl,
  signedTarget,
  targetHead,
  tiedTargets,
  type PinnedUrl,
} from '../lib/signed-target.js';
import { candidatesFor } from './candidates.js';
import { arrivalFix, describeChange, fixFor, keyFix, quote, quoteQuery, REGISTERED_URL_ADVICE } from './fixes.js';
import { candidateKeys } from './keys.js';
import { MAX_CHECKS, searchVariants } from './search.js';
import type { DiagnosisChange, ExplainOptions, ExplainRequest, VerificationDiagnosis } from './types.js';

function result(
  partial: Partial<VerificationDiagnosis> & Pick<VerificationDiagnosis, 'message'>,
): VerificationDiagnosis {
  return {
    ok: false,
    code: null,
    signatureVerifies: false,
    canonical: null,
    changes: [],
    verifiedCanonical: null,
    keyName: null,
    fix: null,
    tried: { hosts: [], paths: [], queries: [], keys: [] },
    checks: 0,
    ...partial,
  };
}

/** A URL that may be absent or wrong, read as a hint: `undefined` rather than an error. */
function hintFrom(url: unknown): PinnedUrl | undefined {
  try {
    return url === undefined || url === '' ? undefined : pinWebhookUrl(url);
  } catch {
    return undefined;
  }
}

/** What to do about a timestamp outside the window: one in seconds was dated by a sender that is not the service. */
function staleFix(timestamp: number, { now, toleranceMs }: { now: number; toleranceMs: number }): string {
  return inSeconds(timestamp, now, toleranceMs)
    ? 'date it in milliseconds (Date.now()) as the service does, not seconds'
    : 'check the server clock (NTP) if this is a fresh delivery; a replayed old delivery is rightly refused';
}

/** The callback URL a WEB (`data.webhookUrl`) or signed-body (`fields.webhook_url`) delivery carries in its body. */
function registeredUrlInBody(body: JsonObject | null): string | undefined {
  const data = body?.['data'];
  const fields = body?.['fields'];
  const fromData = typeof data === 'object' && data !== null ? (data as JsonObject)['webhookUrl'] : undefined;
  const fromFields = typeof fields === 'object' && fields !== null ? (fields as JsonObject)['webhook_url'] : undefined;
  return typeof fromData === 'string' ? fromData : typeof fromFields === 'string' ? fromFields : undefined;
}

/** Whether two registered URLs are signed alike: the canonical string's lines for them are one. */
function signedAlike(a: PinnedUrl, b: PinnedUrl): boolean {
  const head = (url: PinnedUrl) => {
    try {
      return canonicalHead({ method: 'POST', path: url.path, host: url.host, headers: {}, query: url.query });
    } catch {
      return url.url; // a path or query that cannot be written: compared as given
    }
  };
  return head(a) === head(b);
}

/** The first of `keys` under which `signature` opens as an RSA signature block, as verifyWebhook's early filter judges. */
async function openingKey<K extends { readonly imported: CryptoKey }>(
  signature: string,
  keys: readonly K[],
): Promise<K | undefined> {
  const bytes = decodeBase64Lenient(signature);
  if (bytes === null) return undefined;
  for (const key of keys) if (couldBeSignature(bytes, await withPublicNumbers([key.imported]))) return key;
  return undefined;
}

async function explain(
  request: ExplainRequest,
  options: ExplainOptions,
  note: { mismatch?: string },
): Promise<VerificationDiagnosis> {
  if (typeof request !== 'object' || request === null || typeof request.url !== 'string') {
    return result({
      code: 'INVALID_ARGUMENT',
      message: 'explainVerificationFailure needs a request with method, url, headers and body.',
    });
  }
  const headers: HeadersInput = typeof request.headers === 'object' && request.headers !== null ? request.headers : {};
  const method = typeof request.method === 'string' ? request.method : 'POST';
  // A bad webhookUrl throws INVALID_ARGUMENT, as it does for verifyWebhook.
  const registered = options.webhookUrl === undefined ? undefined : registeredUrl(options.webhookUrl);
  let target = signedTarget(
    { method, url: request.url, headers },
    { webhookUrl: registered, trustForwardedHeaders: options.trustForwardedHeaders === true },
  );

  // verifyWebhook's order: the signature header, the body, the canonical string's parts.
  const signature = getHeader(headers, 'signature');
  if (!signature) {
    return result({
      code: 'MISSING_SIGNATURE',
      message: 'The request has no `signature` header: it was not sent by the service, or a proxy dropped the header.',
    });
  }
  let read = readSigned(request.body, () => targetHead(target));
  const { usable, unusable, configuredNames } = await candidateKeys(options);
  // A configured key (every candidate when none is configured) that can have made the signature.
  const configured = usable.filter((key) => key.configured);
  if (!read.ok && (await openingKey(signature, configured.length > 0 ? configured : usable)) === undefined) {
    // verifyWebhook refuses such a signature before it reads the body or builds anything. A key not configured under
    // which it opens (the other environment's, the test key) is the likelier story than a mangled header.
    const other = await openingKey(
      signature,
      usable.filter((key) => !key.configured),
    );
    if (other !== undefined) {
      const fix = keyFix(other.name);
      return result({
        code: 'SIGNATURE_MISMATCH',
        changes: [{ part: 'key', received: configuredNames.join(', ') || 'none', expected: other.name }],
        fix,
        message: `No configured key can have made this signature, but ${other.name} can, so it is refused before the request is read further: ${fix}. The request has another problem too: ${read.error.message}`,
      });
    }
    return result({
      code: 'SIGNATURE_MISMATCH',
      message: `No configured key can have made this signature (not base64, the wrong length, or not an RSA signature block under the key), so it is refused before the request is read further; the request has another problem too: ${read.error.message}`,
    });
  }
  // A request that fits no webhookUrl is judged as if it had come to the pinned one (of a list, an entry for the
  // request's Host or X-Forwarded-Host, else the first), so that the search compares that URL with the request's own
  // and the registered one, and names the part that differs.
  const { received } = target;
  const listed = [options.webhookUrl].flat().map(hintFrom);
  const named = [received.host, received.forwardedHost].map(normalHost);
  const forHost = listed.filter((url): url is PinnedUrl => url !== undefined && named.includes(url.host));
  let pin = target.registered ?? forHost[0] ?? listed[0];
  const counter = { checks: 0 };
  // What the request lost on its way to the pinned URL: its path (a list is matched by it) or a query parameter.
  let arrival: DiagnosisChange[] = [];
  if (!read.ok && read.error.code === 'URL_MISMATCH' && pin !== undefined) {
    note.mismatch = read.error.message;
    const judgedAt = (url: PinnedUrl) => {
      const { host, path, query } = url;
      const lost: DiagnosisChange[] = [];
      if (target.registered === undefined && received.path !== path) {
        lost.push({ part: 'path', received: received.path, expected: path });
      }
      if (missingFrom(query, received.query) !== undefined) {
        lost.push({ part: 'query', received: received.query, expected: query });
      }
      const at = {
        ...target,
        host,
        hostSource: 'webhookUrl' as const,
        path,
        query,
        registered: url,
        mismatch: undefined,
      };
      return { url, lost, at };
    };
    let judged = judgedAt(pin);
    read = readSigned(request.body, () => targetHead(judged.at));
    // Several entries on the request's host (shops told apart by path or query): the first one a configured key
    // signed for, else the first. Only the head differs, so the body is not read again.
    const first = read;
    const bytes = forHost.length > 1 && first.ok ? decodeBase64Lenient(signature) : null;
    if (first.ok && bytes !== null) {
      const keys = configured.map((key) => key.imported);
      // One check per key and entry, within half the budget of checks: the search keeps the rest.
      for (const url of forHost) {
        if (counter.checks + keys.length > MAX_CHECKS / 2) break;
        const next = judgedAt(url);
        const head = targetHead(next.at);
        counter.checks += keys.length;
        if (await verifyWithKeys(keys, head + first.bodyLine, bytes)) {
          judged = next;
          read = { ...first, head, canonical: head + first.bodyLine };
          break;
        }
      }
    }
    ({ url: pin, lost: arrival, at: target } = judged);
  }
  if (!read.ok) {
    const { code } = read.error;
    return result({
      code,
      message:
        code === 'INVALID_BODY'
          ? `The body cannot be read, so no canonical string can be built: ${read.error.message}`
          : code === 'MISSING_HOST'
            ? `${read.error.message} No canonical string can be built: set \`webhookUrl\` to the URL registered with the service (with \`payhook verify\`: \`--webhook-url <url>\`, or \`--registered-url <url>\` to try it).`
            : `No canonical string can be built: ${read.error.message}`,
    });
  }
  const { body, bodyLine } = read;
  let { canonical } = read;

  const triedKeys = usable.map((key) => key.name);
  // A signature no key can verify, whatever was changed: nothing is searched.
  const unverifiable = (message: string) =>
    result({
      code: 'SIGNATURE_MISMATCH',
      canonical,
      checks: counter.checks,
      tried: { hosts: [], paths: [], queries: [], keys: triedKeys },
      message,
    });
  const clock = resolveClock({ now: options.now, toleranceMs: options.toleranceMs });
  const timestamp = checkTimestamp(getHeader(headers, 'x-api-timestamp'), clock);
  const bytes = decodeBase64Lenient(signature);

  // Registered URLs the request does not tell apart, which verifyWebhook tries in turn: judged from the one a
  // configured key signed for, as verifyWebhook judges it.
  const ties = tiedTargets(target);
  const configuredKeys = configured.map((key) => key.imported);
  if (ties.length > 0 && bytes !== null) {
    counter.checks += configuredKeys.length;
    if (!(await verifyWithKeys(configuredKeys, canonical, bytes))) {
      for (const tie of ties) {
        counter.checks += configuredKeys.length;
        if (await verifyWithKeys(configuredKeys, tie.head + bodyLine, bytes)) {
          [target, pin, canonical] = [tie.target, tie.url, tie.head + bodyLine];
          break;
        }
      }
    }
  }

  for (const key of configured) {
    counter.checks++;
    if (bytes === null || !(await verifyWithKeys([key.imported], canonical, bytes))) continue;
    const verified = { signatureVerifies: true, canonical, verifiedCanonical: canonical, keyName: key.name };
    // Signed for the pinned URL that the request missed (the caller reports URL_MISMATCH): it changed on the way.
    const moved = arrival.length > 0 ? arrivalFix(arrival) : undefined;
    const sent = moved === undefined ? '' : `, so it was sent there and changed on the way: ${moved}`;
    if (timestamp.ok) {
      return result({
        ok: true,
        ...verified,
        checks: counter.checks,
        fix: moved ?? null,
        message:
          moved === undefined
            ? `The delivery verifies with ${key.name}.`
            : `The signature verifies with ${key.name}${sent}.`,
      });
    }
    return result({
      code: timestamp.code,
      ...verified,
      checks: counter.checks,
      fix: moved ?? (timestamp.code === 'TIMESTAMP_OUT_OF_WINDOW' ? staleFix(timestamp.timestamp, clock) : null),
      message: `The signature verifies with ${key.name}${sent}, but the timestamp is refused: ${timestamp.message}`,
    });
  }

  if (bytes === null) {
    return unverifiable(
      'The `signature` header is not base64, so no key can verify it: the header was altered on the way, or the request was not sent by the service.',
    );
  }
  // Keys whose modulus fits the signature's length; none: nothing can verify, so nothing is built.
  const fitting = usable.filter((key) => bytes.length === signatureLength(key.imported));
  // The registered URL the caller names wins over webhookUrl, which may be the very thing that is wrong.
  const given = hintFrom(options.registeredUrl);
  const inBody = hintFrom(registeredUrlInBody(body));
  // A callback URL in the body other than the pinned one is the likelier registered URL: the pin may be what is wrong
  // (set to the URL the app sees behind a rewriting ingress, say).
  const pinned = target.registered;
  const bodyElsewhere = inBody !== undefined && pinned !== undefined && !signedAlike(inBody, pinned);
  const hint = given ?? (bodyElsewhere ? inBody : (pinned ?? inBody));
  const candidates = candidatesFor(target, hint);
  const tried = {
    hosts: candidates.hosts,
    paths: candidates.paths,
    queries: candidates.queries.map((query) => (query === '' ? '(none)' : `?${query}`)),
    keys: triedKeys,
  };
  // verifyWebhook's early filter, over every key tried: when none opens the signature as a PKCS#1 block, no URL,
  // header or body makes it verify, so nothing is searched.
  const opens = couldBeSignature(bytes, await withPublicNumbers(usable.map((key) => key.imported)));
  const found = opens ? await searchVariants(target, candidates, bodyLine, bytes, fitting, counter) : undefined;
  if (found !== undefined) {
    // Signed for a registered URL the request does not tell apart from the first (verifyWebhook tries each): judged
    // from that one, whose host, path or query is then no change.
    const { variant } = found;
    const tie = ties.find(
      (one) =>
        one.target.host === variant.host && one.target.path === variant.path && one.target.query === variant.query,
    );
    if (tie !== undefined) target = tie.target;
    const parts = found.changes.filter(
      (one) => one.part === 'header' || one.part === 'key' || one.expected !== target[one.part],
    );
    const changes: DiagnosisChange[] = found.key.configured
      ? parts
      : [...parts, { part: 'key', received: configuredNames.join(', ') || 'none', expected: found.key.name }];
    const { host, path, query } = found.variant;
    // The scheme of the URL it was signed for (not signed, but part of the registered URL): the hint's, else https.
    // An http: hint (a local test receiver's) yields to https only for the host a proxy forwarded, reached by https.
    const hinted = hint === undefined || !URL.canParse(hint.url) ? 'https:' : new URL(hint.url).protocol;
    const forwardedHost = firstListItem(getHeader(headers, 'x-forwarded-host'))?.toLowerCase();
    const proto = firstListItem(getHeader(headers, 'x-forwarded-proto'))?.toLowerCase();
    const scheme = hinted === 'http:' && proto === 'https' && host.toLowerCase() === forwardedHost ? 'https:' : hinted;
    // With webhookUrl pinned, only the registered URL the caller gave is offered as the webhookUrl to set: any other
    // came from the request (or a guess from it), and may be another merchant's endpoint, whose deliveries the pin
    // keeps out. Without it the receiver takes any Host already, and a webhookUrl can only narrow that.
    const offered = !target.pinned || (given?.host === host && given.path === path && given.query === query);
    const signedUrl = `${scheme}//${host}${path}${query === '' ? '' : `?${query}`}`;
    const fix = fixFor(changes, target, candidates, offered ? signedUrl : undefined);
    const forwarded = target.hostSource === 'x-forwarded-host';
    const freshness = timestamp.ok ? '' : ` (note: the timestamp is refused too: ${timestamp.message})`;
    return result({
      code: 'SIGNATURE_MISMATCH',
      canonical,
      changes,
      verifiedCanonical: found.canonical,
      keyName: found.key.name,
      fix,
      checks: counter.checks,
      tried,
      message: `signature would verify with ${changes.map((one) => describeChange(one, forwarded, target.pinned)).join(' and ')}: ${fix}.${freshness}`,
    });
  }

  const notes: string[] = [];
  if (configuredNames.length === 0) notes.push('no key is configured (pass `publicKeys` or `environment`)');
  if (unusable.length > 0) notes.push(`keys not tried: ${unusable.join(', ')}`);
  if (fitting.length === 0 && usable.length > 0) {
    notes.push(`the signature is ${bytes.length} bytes long, which matches none of the keys tried`);
  }
  if (getHeader(headers, 'x-api-timestamp') === undefined) {
    notes.push(
      'the request has no `x-api-timestamp` header, which the service always sends and signs (dropped on the way?)',
    );
  }
  const keys = `keys ${triedKeys.join(', ') || 'none'}`;
  const also = notes.length > 0 ? `Also: ${notes.join('; ')}. ` : '';
  if (!opens) {
    return unverifiable(
      'No key tried opens the signature as an RSA signature block, so no change of Host, path, query, header or ' +
        'body makes it verify: the `signature` header was altered on the way (cut short, or its letters changed), or ' +
        `the delivery was signed by a key you do not have. Tried ${keys}. ${also}`.trimEnd(),
    );
  }
  // What may not have been tried is the URL the service signed: nothing but the request named a host, or a pinned
  // webhookUrl is not the registered URL (the README's first going-live check). Only that URL shows it.
  // A body that names the pinned URL as its callback URL shows it is the registered one (one naming another URL, that
  // the pin may not be). So does a request that arrived at the pinned URL itself (Host or X-Forwarded-Host, path and
  // query): the service signs the URL it calls, so nothing points at webhookUrl, and the body and headers are leads.
  const atPin =
    !bodyElsewhere &&
    pin !== undefined &&
    named.includes(pin.host) &&
    received.path === pin.path &&
    received.query === pin.query;
  const untried = target.registered?.untried ?? 0;
  const urlAdvice =
    untried > 0
      ? `${MAX_TIES + 1 + untried} registered webhookUrl values share this path and the request names none of them by Host or X-Forwarded-Host, so only the first ${MAX_TIES + 1} are tried: have the proxy send X-Forwarded-Host, or give each shop a path of its own`
      : target.pinned
        ? given === undefined && !atPin && (inBody === undefined || pin === undefined || !signedAlike(inBody, pin))
          ? `\`webhookUrl\` may not be the URL registered with the service: compare the two, or ${REGISTERED_URL_ADVICE}`
          : null
        : candidates.hostKnown
          ? null
          : REGISTERED_URL_ADVICE;
  const { droppable } = candidates;
  return result({
    code: 'SIGNATURE_MISMATCH',
    canonical,
    checks: counter.checks,
    tried,
    fix: urlAdvice,
    message:
      `No likely cause makes the signature verify. Tried hosts ${tried.hosts.map(quote).join(', ')}; ` +
      `paths ${tried.paths.map(quote).join(', ')}; queries ${candidates.queries.map(quoteQuery).join(', ')}; ` +
      `${keys}${droppable.length > 0 ? `; without ${droppable.join(', ')}` : ''}. ${also}` +
      (urlAdvice === null
        ? ''
        : `${target.pinned ? '' : 'Only the request named a host, so the one the service signed may not have been tried (if a proxy rewrote Host without X-Forwarded-Host): '}${urlAdvice}. `) +
      `${atPin ? 'The request came to your `webhookUrl` unchanged. ' : ''}` +
      "Remaining causes, likeliest first: a parser or middleware changed the body before payhook read it (express.json() with a reviver, express.urlencoded({ type: '*/*' })), a proxy changed or dropped an x-api-* header (x-api-timestamp included), a key you do not have signed it, or it was signed for another URL (another merchant's delivery, replayed to you).",
  });
}

/**
 * Explains why a delivery's signature does not verify, and how to fix it.
 * It builds the canonical string as received, then tries the likely causes
 * one by one and in pairs — other `Host` values (`X-Forwarded-Host`,
 * `Forwarded`, with and without the port, the registered `webhookUrl`'s
 * host, or the callback URL a WEB or signed-body delivery carries in its
 * body), the path with and without common prefixes (`/api`, `/v1`,
 * `/webhooks`, `X-Forwarded-Prefix`, the `webhookUrl`'s), the query string
 * dropped or restored, `x-api-*` headers added after signing (each, all of
 * them, and all of them with each of the above), the other
 * environment's key and payhook's published test key (`payhook-test`) —
 * and names the change that makes the signature verify, with the fix. Where
 * nothing matches, it says what was tried; when nothing but the request
 * itself names a host, or when `webhookUrl` is set and the request did not
 * arrive at it (it may not be the URL registered with the service), it asks
 * for the registered URL (`registeredUrl`); then it names the causes left,
 * likeliest first (a body a parser changed, an `x-api-*` header a proxy
 * changed, a key you do not have).
 *
 * It starts from the very target `verifyWebhook` checks (the same module
 * decides host, path and query from `webhookUrl`, `trustForwardedHeaders`
 * and the request), and searches variations of it. A request that fits no
 * `webhookUrl` (`URL_MISMATCH`) is judged as if it had come to the pinned
 * URL (of a list, the entry for the request's `Host` or `X-Forwarded-Host`
 * that a configured key signed for, of several on that host, else the first
 * for that host, else the list's first), so the part that differs from the
 * URL signed is named;
 * when the signature verifies so, the delivery was signed for that URL and
 * lost or changed a query parameter (or, a list being matched by path, a
 * path prefix) on the way there, which is named with the fix (have the proxy
 * or router pass it on).
 * With `webhookUrl` set, a signature that verifies only for another URL is
 * named as signed for another endpoint (another merchant's, say: one key signs
 * for all), and the fix sends you to the URL registered in the service's
 * dashboard: only the `registeredUrl` you give is offered as the `webhookUrl`
 * to set, never a host or URL that the request named.
 *
 * The search is bounded (at most 600 signature checks, each hashing the
 * body: tens of milliseconds for a delivery of a few kilobytes, up to a few
 * hundred for a body at the default 32 KiB limit, and longer in proportion
 * for a larger one, which is judged too, its size aside; and
 * none when no key tried opens the signature as an RSA signature block, as
 * verifyWebhook's early filter judges it: then the `signature` header
 * itself is named as altered), and the body is parsed and
 * its line written once, as verifyWebhook does, so it is safe in an error
 * path. It reports the first failure with the code verifyWebhook would give,
 * and never throws for a bad delivery (a missing `Host`, a body that is not
 * JSON, a garbage signature).
 * Use it while debugging, or through a handler's debug option: it is not a
 * verifier, and a "would verify with …" is a diagnosis, never a reason to
 * accept a delivery.
 *
 * @example
 * ```ts
 * import { explainVerificationFailure } from 'payhook/explain';
 * import type { WebhookRequest } from 'payhook';
 *
 * declare const request: WebhookRequest; // the refused delivery, its body as received
 * const diagnosis = await explainVerificationFailure(request, { environment: 'production' });
 * if (!diagnosis.ok) console.warn(diagnosis.message);
 * // signature would verify with Host `shop.example.kg` (your request has `internal:8080`):
 * // set `webhookUrl` to the URL registered with the service (https://shop.example.kg/…), …
 * ```
 */
export async function explainVerificationFailure(
  request: ExplainRequest,
  options?: ExplainOptions,
): Promise<VerificationDiagnosis> {
  try {
    const note: { mismatch?: string } = {};
    const diagnosis = await explain(request, options ?? {}, note);
    // The code verifyWebhook gives; the signature may verify for the URL it was judged with.
    return note.mismatch === undefined
      ? diagnosis
      : {
          ...diagnosis,
          ok: false,
          code: 'URL_MISMATCH',
          message: `${note.mismatch} Judged as if it had come to your \`webhookUrl\`: ${diagnosis.message}`,
        };
  } catch (error) {
    // A diagnosis must never become a second failure in an error path.
    return result({
      code: isPayhookError(error) ? error.code : null,
      message: `payhook could not diagnose this delivery: ${describeError(error)}`,
    });
  }
}
