/**
 * The wording of a diagnosis: what changed, why that happens, and the one
 * setting that fixes it. The reasons come from the signed target (where its
 * host came from) and from the candidates (a path a proxy reported).
 *
 * @module
 */
import { missingFrom, type SignedTarget } from '../lib/signed-target.js';
import { redactQuery, redactUrl, splitUrl } from '../lib/url.js';
import type { Candidates } from './candidates.js';
import { environmentKeyName, TEST_KEY_NAME } from './keys.js';
import type { DiagnosisChange } from './types.js';

/** The most characters of one value a message or fix quotes: a hostile 16 KB path, tried under every host, made a message of 130 KB. */
const QUOTED_MAX = 256;

/** A value in backquotes, cut at {@link QUOTED_MAX} characters (`…`), `(none)` for the empty one. */
export function quote(value: unknown): string {
  const text = value === '' ? '(none)' : String(value);
  return `\`${text.length > QUOTED_MAX ? `${text.slice(0, QUOTED_MAX)}…` : text}\``;
}

/**
 * A query as a diagnosis prints it, in backquotes: `?` and its parameter
 * names, never its values (the registered URL's query may hold a secret,
 * and a diagnosis goes to logs); `(none)` for none.
 */
export function quoteQuery(query: string): string {
  return quote(query === '' ? '' : `?${redactQuery(query)}`);
}

/** What to do when the URL the service signed may not have been tried: its host not known, or webhookUrl wrong. */
export const REGISTERED_URL_ADVICE =
  'give the URL registered with the service (`registeredUrl`, or `payhook verify --registered-url <url>`) so that it is tried';

/**
 * payhook/node verifies `req.originalUrl`, so a prefix or query lost before it is a proxy's doing; a router's only
 * where the merchant's own verifyWebhook call is given `req.url`.
 */
const OR_ROUTER =
  ' (or a router, if your own verifyWebhook call gets `req.url`, not `req.originalUrl` as payhook/node)';

/** Why the path differs: a proxy that said so (it reported `proxyPaths`), else a proxy in front of the app, or a router. */
function pathReason(change: DiagnosisChange, proxyPaths: ReadonlySet<string>): string {
  const { received, expected } = change;
  const prefix =
    expected.length > received.length && expected.endsWith(received)
      ? expected.slice(0, expected.length - received.length)
      : undefined;
  if (proxyPaths.has(expected)) {
    return prefix === undefined
      ? 'your proxy rewrites the path (it reports the original one in a header)'
      : `your proxy strips the prefix ${quote(prefix)} before the request reaches your app (it reports it in a header)`;
  }
  if (prefix === undefined) return 'the path your app sees is not the one the service called';
  return `a proxy strips the prefix ${quote(prefix)} before your app${OR_ROUTER}`;
}

/** Why one URL part differs, for a receiver that does not pin `webhookUrl`. */
function urlReason(change: DiagnosisChange, target: SignedTarget, candidates: Candidates): string {
  const forwarded = target.hostSource === 'x-forwarded-host';
  switch (change.part) {
    case 'host':
      if (forwarded) {
        return change.expected === target.received.host
          ? 'with `trustForwardedHeaders` payhook checks X-Forwarded-Host, but the service signed the Host header your app received'
          : 'with `trustForwardedHeaders` payhook checks X-Forwarded-Host, which is not the host the service signed';
      }
      return change.expected === target.received.forwardedHost
        ? 'your proxy rewrites Host and forwards the original in X-Forwarded-Host'
        : 'something in front of your app rewrites Host';
    case 'path':
      return pathReason(change, candidates.proxyPaths);
    default:
      return queryReason(change);
  }
}

/** Why the query differs: one appended, one dropped, or one added to or changed on the way. */
function queryReason({ received, expected }: DiagnosisChange): string {
  if (expected === '') return 'the service signed no query string, so something appends one on the way';
  if (received === '') {
    return `the query string does not reach payhook: a proxy drops it${OR_ROUTER}`;
  }
  const missing = missingFrom(expected, received);
  return missing === undefined
    ? `something adds to the query string on the way (the service signed ${quoteQuery(expected)})`
    : `the query string is changed on the way: it ${missing} the one the service signed (${quoteQuery(expected)})`;
}

/** Why a query the service signed did not arrive as signed, and that the proxy or router must pass it on. */
function passQueryOn(change: DiagnosisChange): string {
  const signed = change.received === '' ? ` (the service signed ${quoteQuery(change.expected)})` : ' unchanged';
  return `${queryReason(change)}: have it pass the query string on${signed}`;
}

/**
 * The fix for a request that missed the pinned `webhookUrl` its signature
 * verifies for (`URL_MISMATCH`): the path (a `webhookUrl` list is matched by
 * it) or the query changed on the way, so the proxy or router must pass it on.
 *
 * @example
 * ```ts
 * import { arrivalFix } from './fixes.js';
 *
 * arrivalFix([{ part: 'query', received: '', expected: 'shop=7' }]); // 'the query string does not reach payhook: …'
 * ```
 */
export function arrivalFix(changes: readonly DiagnosisChange[]): string {
  return changes
    .map((change) =>
      change.part === 'query'
        ? passQueryOn(change)
        : `${pathReason(change, new Set())}: have it pass the path on unchanged (a \`webhookUrl\` list is matched by path)`,
    )
    .join('; ');
}

/** One side of a change as printed: a query by its parameter names only. */
function shown(change: DiagnosisChange, side: 'received' | 'expected'): string {
  return change.part === 'query' ? quoteQuery(change[side]) : quote(change[side]);
}

/**
 * The fix for a key change: the environment to configure, the test key to keep out, or the key to add.
 *
 * @example
 * ```ts
 * import { keyFix } from './fixes.js';
 *
 * keyFix('partner-key'); // 'configure the key `partner-key` as well (`publicKeys`), if you trust it'
 * ```
 */
export function keyFix(name: string): string {
  // An alternative named after the environment (`--also-try beta=<pem>`) counts as that environment's key.
  if (name === environmentKeyName('production') || name === 'production') {
    return "the delivery comes from the service's production environment: set `environment: 'production'` (or `publicKeys: PRODUCTION_PUBLIC_KEY`)";
  }
  if (name === environmentKeyName('beta') || name === 'beta') {
    // Switching this receiver to beta would take sandbox payments, which move no money, for real ones.
    return (
      "the delivery comes from the service's beta (sandbox) environment, so this URL is registered there: send beta " +
      "deliveries to a test or staging receiver with `environment: 'beta'`, and never accept the beta key where real " +
      'payments arrive (a sandbox payment moves no money)'
    );
  }
  if (name === TEST_KEY_NAME) {
    return (
      "the delivery is signed with payhook's published test key (`TEST_KEY_PAIR` of `payhook/testing`, used by " +
      '`payhook send` and `signWebhook`), not by the service: it is a test delivery, so send it to a test receiver ' +
      'configured with that key, and never accept that key in production (its private half is public)'
    );
  }
  return `configure the key ${quote(name)} as well (\`publicKeys\`), if you trust it`;
}

/**
 * The fix for the changes that made the signature verify. URL parts share
 * one fix (the URL the service signed, as `webhookUrl`), with the reason for
 * each; a header or a key has its own. `signedUrl` is the URL to offer as
 * `webhookUrl`, `undefined` when none may be: with `webhookUrl` pinned, a
 * URL that only the request named (or a guess from it) may be another
 * endpoint's, so the fix sends the merchant to the dashboard instead.
 *
 * @example
 * ```ts
 * import { fixFor } from './fixes.js';
 *
 * declare const target: import('../lib/signed-target.js').SignedTarget;
 * declare const candidates: import('./candidates.js').Candidates;
 * fixFor([{ part: 'key', received: 'service-production', expected: 'service-beta' }], target, candidates, 'https://h/');
 * ```
 */
export function fixFor(
  changes: readonly DiagnosisChange[],
  target: SignedTarget,
  candidates: Candidates,
  signedUrl: string | undefined,
): string {
  const fixes: string[] = [];
  // A signed query, or a parameter of it, that did not reach payhook as signed: a `webhookUrl` with it would not
  // help (payhook checks that the signed query arrives), the proxy or router must pass it on. A pinned
  // `webhookUrl` without it is another matter; a query that only gained parameters is not dropped.
  const dropped = target.pinned
    ? undefined
    : changes.find((change) => change.part === 'query' && missingFrom(change.expected, change.received) !== undefined);
  const urlParts = changes.filter(
    (change) => change !== dropped && (change.part === 'host' || change.part === 'path' || change.part === 'query'),
  );
  if (dropped !== undefined) {
    fixes.push(
      `${passQueryOn(dropped)}; a \`webhookUrl\` with that query does not help, as payhook checks that the query ` +
        'arrives as signed',
    );
  }
  if (urlParts.length > 0) {
    const why = urlParts.map((change) =>
      !target.pinned
        ? urlReason(change, target, candidates)
        : shown(change, 'received') === shown(change, 'expected')
          ? // A query that differs only in values, which are not printed.
            `your \`webhookUrl\` has other values in the query ${shown(change, 'received')} than the service signed`
          : `your \`webhookUrl\` has the ${change.part} ${shown(change, 'received')}, but the service signed ${shown(change, 'expected')}`,
    );
    // Trusting X-Forwarded-Host fixes it when that header holds the signed
    // host; no longer trusting it fixes it when the Host received is the signed one.
    const onlyHost =
      !target.pinned && urlParts.length === 1 && urlParts[0]!.part === 'host' ? urlParts[0]!.expected : undefined;
    const forwarded = target.hostSource === 'x-forwarded-host';
    const trustSwitch =
      onlyHost === undefined
        ? ''
        : !forwarded && onlyHost === target.received.forwardedHost
          ? ', or `trustForwardedHeaders: true` if every request comes through that proxy'
          : forwarded && onlyHost === target.received.host
            ? ', or turn `trustForwardedHeaders` off'
            : '';
    if (signedUrl === undefined) {
      // The pinned webhookUrl is what keeps another merchant's deliveries (one key signs for all) out.
      fixes.push(
        `this delivery was signed for another URL (${why.join('; ')}): one for another endpoint (another ` +
          "merchant's, say), rightly refused, or your `webhookUrl` is not the URL registered in the service's " +
          "dashboard: compare the two, and if they differ set `webhookUrl` to the dashboard's URL (never to this delivery's, " +
          "unless it is the dashboard's)",
      );
    } else {
      // Its query values are not printed, so a URL with a query is not offered as a literal to paste.
      const { query } = splitUrl(signedUrl);
      const url =
        query === ''
          ? `set \`webhookUrl: '${redactUrl(signedUrl)}'\``
          : `set \`webhookUrl\` to '${redactUrl(signedUrl.slice(0, signedUrl.indexOf('?')))}' with the query the service signed (${quoteQuery(query)})`;
      fixes.push(`${url}, the URL the service signed: ${why.join('; ')}${trustSwitch}`);
    }
  }
  for (const change of changes) {
    if (change.part === 'header') {
      fixes.push(
        `stop your proxy or gateway from adding ${quote(change.received)}, or remove it before payhook sees the request: every \`x-api-*\` header is signed`,
      );
    } else if (change.part === 'key') fixes.push(keyFix(change.expected));
  }
  return fixes.join('; ');
}

/**
 * One change in words, for the diagnosis message.
 *
 * @example
 * ```ts
 * import { describeChange } from './fixes.js';
 *
 * describeChange({ part: 'path', received: '/hook', expected: '/api/hook' }, false); // 'path `/api/hook` (your request has `/hook`)'
 * ```
 */
export function describeChange(change: DiagnosisChange, forwarded: boolean, pinned = false): string {
  // With webhookUrl set, host, path and query were taken from it, not from the request.
  const has = pinned ? 'your webhookUrl has' : 'your request has';
  switch (change.part) {
    case 'host':
      return `Host ${quote(change.expected)} (${has} ${quote(change.received)}${forwarded && !pinned ? ' in X-Forwarded-Host, which you trust' : ''})`;
    case 'path':
      return `path ${quote(change.expected)} (${has} ${quote(change.received)})`;
    case 'query': {
      const [expected, received] = [quoteQuery(change.expected), quoteQuery(change.received)];
      if (change.expected === '') return `no query string (${has} ${received})`;
      if (change.received === '') return `query ${expected} (${has} none)`;
      // Values are not printed: the same names may differ only in them.
      return `query ${expected} (${has} ${expected === received ? 'other values' : received})`;
    }
    case 'header':
      return `header ${quote(change.received)} removed`;
    case 'key':
      return `the ${change.expected} key instead of ${change.received}`;
  }
}
