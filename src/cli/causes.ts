// What `payhook send` prints under a refusal: the likely cause, read from the
// `code` a payhook receiver puts in its JSON answer, and the command that
// tells the causes apart. docs/troubleshooting.md holds the same table for
// people; the CLI tests check that it names every code here.

import { SERVICE_WINDOW_MS } from '../lib/clock.js';
import { ERROR_CODES } from '../lib/errors.js';
import { formatDuration } from './io.js';

/** What the delivery was, so a cause the sender chose itself is named as such. */
export interface SendContext {
  /** The registered URL the delivery was signed for; undefined for a capture sent as captured. */
  signedFor: string | undefined;
  /**
   * That URL came from --webhook-url or the webhookUrl a capture recorded, not from the target itself or a
   * capture's own Host and path.
   */
  urlChosen: boolean;
  /** That URL is the webhookUrl a re-signed capture recorded (no --webhook-url). */
  urlFromCapture: boolean;
  /** The private key file given with --key; undefined for payhook's test key. */
  keyFile: string | undefined;
  /** --tamper was given. */
  tampered: boolean;
  /** How far --age or --timestamp dated the delivery from now, in ms (positive: the past); undefined without them. */
  datedMs: number | undefined;
  /** --host replaced the signed Host. */
  hostGiven: boolean;
  /** A capture replayed byte for byte (no --resign). */
  asCaptured: boolean;
  /** The query of the URL posted to (given, or added from the signed URL or the capture), without `?`; '' for none. */
  sentQuery: string;
  /** That query lacks a parameter of the signed URL's, or gives one another value. */
  queryDiffers: boolean;
}

/** The likely causes, most likely first, and the command that tells them apart, for one refusal code. */
export interface Cause {
  causes: readonly string[];
  diagnose?: string;
}

const VERIFY_CAPTURE =
  'save the refused delivery in the receiver (onSignatureMismatch hands you { capture }) and run ' +
  "payhook verify --request failed.json with the receiver's keys (--env production or beta, --key <public pem>, --test-key)";

// Every x-api-* header is signed, x-api-timestamp included.
const PROXY = 'a proxy dropped or changed x-api-timestamp (or another x-api-* header) on the way';

// The body is signed as it was sent: a parser that changes a value, or reads another format, breaks the signature.
const BODY =
  'a parser or middleware in the receiver changed the body before payhook read it (express.json() with a reviver, ' +
  "express.urlencoded({ type: '*/*' }), a Fastify route's schema.body, whose validator coerces types, a body edited, or its " +
  'nested keys reordered): mount the handler with no parser or schema before it ' +
  '(express.json() without a reviver, and express.raw(), are fine)';

function signatureMismatch(context: SendContext): Cause {
  if (context.tampered) return { causes: ['expected: --tamper changed the amount after signing'] };
  if (context.asCaptured) {
    return {
      causes: [
        'the capture is replayed as it arrived, so it verifies only where the key that signed it (the ' +
          "service's, for a real delivery) is accepted: add --resign to sign it again with the test key",
        'the capture was changed after it was signed (a body or header edited, or a forged delivery captured): ' +
          'payhook verify tells which',
        PROXY,
      ],
      diagnose: 'payhook verify --request <capture> --env beta (or production)',
    };
  }
  const key =
    context.keyFile === undefined
      ? "the receiver does not accept payhook's TEST key: give it publicKeys: TEST_KEY_PAIR.publicKey " +
        '(from payhook/testing) while you test'
      : `the receiver does not accept the key in ${context.keyFile}: give it the matching public key`;
  const url =
    `the receiver's webhookUrl is not ${context.signedFor ?? 'the URL signed'}, the URL this delivery was ` +
    `signed for${context.urlFromCapture ? ' (the one the capture recorded: changed since?)' : ''}: pass --webhook-url <the receiver's webhookUrl>`;
  const host =
    "--host signed for another Host than the receiver's webhookUrl (or its own Host): drop --host, or pass " +
    "--webhook-url <the receiver's webhookUrl>";
  // A Host chosen by hand is the likeliest difference; signed for the target itself, a receiver that pins its
  // registered URL refuses it whatever the key.
  // A re-signed capture carries the webhookUrl of the receiver that refused it, which a fix may have changed.
  const order = context.hostGiven
    ? [host, url, key]
    : context.urlChosen && !context.urlFromCapture
      ? [key, url]
      : [url, key];
  return { causes: [...order, BODY, PROXY], diagnose: VERIFY_CAPTURE };
}

function timestampOutOfWindow(context: SendContext): Cause {
  const { datedMs } = context;
  if (datedMs !== undefined && Math.abs(datedMs) > SERVICE_WINDOW_MS)
    return { causes: ['expected: --age or --timestamp dated it outside the 5-minute window'] };
  if (context.asCaptured) {
    return {
      causes: [
        'the capture is older than the 5-minute window, and its signature verified (a payhook receiver checks the ' +
          'time only after the signature): add --resign to sign it again now and have it handled',
      ],
    };
  }
  const clock =
    "this machine's clock and the receiver's differ by more than 5 minutes (or, in a test, the receiver's " +
    '`now` option is fixed)';
  // Dated inside the service's window, so a receiver with the default window accepts it.
  const window =
    datedMs === undefined || datedMs === 0
      ? []
      : [
          `--age or --timestamp dated it ${formatDuration(Math.abs(datedMs))} ${datedMs > 0 ? 'ago' : 'ahead'}, inside ` +
            "the service's 5-minute window: the receiver's toleranceMs is smaller than that",
        ];
  return {
    causes: [...window, clock],
    diagnose: 'date -u here and on the receiver; check that both sync with NTP',
  };
}

const QUERY_LACKING =
  "the URL you send to lacks a query parameter of the receiver's registered webhookUrl, or gives it another value: " +
  'send to the registered URL, query included (the answer names the parameter)';

/** The parameter a payhook URL_MISMATCH answer names (`lacks the parameter "shop" of …`), if any. */
function namedParameter(message: string | undefined): string | undefined {
  const quoted = /the parameter ("(?:[^"\\]|\\.)*") /.exec(message ?? '')?.[1];
  try {
    return quoted === undefined ? undefined : (JSON.parse(quoted) as string);
  } catch {
    return undefined;
  }
}

const PATH_UNFIT =
  "the path sent is none of the receiver's registered webhookUrl paths, or did not reach payhook as sent (a proxy " +
  'or the framework rewrote it): log the URL the route sees, and send to a registered URL';

function urlMismatch(context: SendContext, message: string | undefined): Cause {
  const { causes } = queryMismatch(context, message);
  // A list's answer (fits none of them, by path and query) names no part: the path is a cause too, the likelier
  // one when no query was sent.
  if (!message?.includes('fits none')) return { causes };
  return { causes: context.sentQuery === '' ? [PATH_UNFIT, ...causes] : [...causes, PATH_UNFIT] };
}

function queryMismatch(context: SendContext, message: string | undefined): Cause {
  // Sent with the query of a URL chosen by hand (none, or its own), the receiver's webhookUrl has another: the URL
  // chosen is not the receiver's, and sending to a URL with the receiver's query would only fail the signature.
  const lacking =
    context.urlChosen && !context.queryDiffers
      ? `${context.urlFromCapture ? 'the webhookUrl the capture recorded' : '--webhook-url'} (${context.signedFor ?? 'the URL signed'}) ` +
        "lacks a query parameter of the receiver's webhookUrl, or gives it another value: pass --webhook-url " +
        "<the receiver's webhookUrl>, query included (the answer names the parameter)"
      : QUERY_LACKING;
  const lost =
    'the query sent did not reach payhook as sent: a proxy or router in front of the receiver dropped or changed ' +
    'it (the answer names the parameter)';
  if (context.sentQuery === '') return { causes: [lacking] };
  // Sent with another value than the one signed for: that difference comes first.
  if (context.queryDiffers) return { causes: [QUERY_LACKING, lost] };
  // The parameter the receiver names (a payhook answer does, unless it has no value): one never sent was not lost on
  // the way, and one sent that arrived with another value was more likely never the receiver's.
  const name = namedParameter(message);
  if (name !== undefined && !new URLSearchParams(context.sentQuery).has(name)) return { causes: [lacking] };
  return { causes: name !== undefined && message?.includes('another value') ? [lacking, lost] : [lost, lacking] };
}

const FIXED: Readonly<Record<string, Cause>> = {
  MISSING_SIGNATURE: {
    causes: ['the signature header did not arrive: a proxy in front of the receiver drops it'],
    // No key matters without a signature; and the handler's onSignatureMismatch is not called for it.
    diagnose:
      'capture what arrives at the receiver (captureDelivery before the handler) and look for its signature ' +
      'header: payhook send always sends one',
  },
  // x-api-timestamp is signed, and the signature is checked first: a proxy that drops or changes it is a mismatch.
  MISSING_TIMESTAMP: {
    causes: [
      'the delivery was signed without an x-api-timestamp header, which the service always sends and signs: a ' +
        "hand-made test (signWebhook with timestamp: null), not the service's (a proxy that drops the header gives " +
        'SIGNATURE_MISMATCH)',
    ],
  },
  MALFORMED_TIMESTAMP: {
    causes: [
      'the delivery was signed with an x-api-timestamp that is not UNIX milliseconds: a hand-made test, not the ' +
        "service's (a proxy that changes the header gives SIGNATURE_MISMATCH)",
    ],
  },
  MISSING_HOST: {
    causes: [
      'the receiver has no webhookUrl and the request arrived without a Host header, or naming two hosts: set webhookUrl',
    ],
  },
  MALFORMED_PATH: {
    causes: ['the request path cannot be written into the canonical string: check the URL you send to'],
  },
  MALFORMED_QUERY: {
    causes: [
      'the query string cannot be written into the canonical string, or (without webhookUrl) the app could read it ' +
        'otherwise than signed: check the URL you send to, or set webhookUrl',
    ],
  },
  INVALID_BODY: {
    causes: [
      'the body that reached payhook is not the JSON sent: a middleware before the handler read or rewrote it ' +
        '(express.urlencoded(), a logger), or the body is not JSON',
    ],
  },
  INVALID_PAYLOAD: {
    causes: [
      'the signature verified, but the body is not a payment webhook the receiver understands: ' +
        'check --status, --field and --body',
    ],
  },
  BODY_TOO_LARGE: { causes: ["the body is larger than the receiver's maxBodyBytes"] },
  BODY_TIMEOUT: { causes: ["the body did not arrive within the receiver's bodyTimeoutMs"] },
  METHOD_NOT_ALLOWED: { causes: ['the receiver takes POST only'] },
  DELIVERY_IN_PROGRESS: {
    causes: ['the same delivery is being handled right now; the service retries it later (try --retry)'],
  },
  HANDLER_FAILED: { causes: ['your onPayment threw or timed out: the receiver logs why'] },
  INVALID_KEY: {
    causes: ["the receiver's public key cannot be read, or is not one RSA public key: the receiver logs why"],
  },
  WEAK_KEY: { causes: ["the receiver's public key is shorter than 2048 bits"] },
  INVALID_ARGUMENT: {
    causes: [
      'the receiver is misconfigured: its body was read before the handler (c.req.json(), a logger, a stream ' +
        'consumer), its store is not set up, or its clock is unusable: the receiver logs the fix (event misconfigured)',
    ],
  },
  STORE_UNAVAILABLE: {
    causes: ["the receiver's dedup store (or its inbox's database) did not answer: is Redis or PostgreSQL up?"],
  },
};

/** Every code {@link likelyCause} explains; docs/troubleshooting.md must name each. */
export const EXPLAINED_CODES: readonly string[] = [
  'SIGNATURE_MISMATCH',
  'TIMESTAMP_OUT_OF_WINDOW',
  'URL_MISMATCH',
  ...Object.keys(FIXED),
];

/** The `code` of a payhook receiver's JSON answer, if the answer is one. */
export function answerCode(text: string): string | undefined {
  return answerField(text, 'code');
}

/** A string member of a JSON answer (`code`, `message`); undefined when there is none. */
export function answerField(text: string, name: 'code' | 'message'): string | undefined {
  try {
    const value = (JSON.parse(text) as Record<string, unknown> | null)?.[name];
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The likely cause of a refusal, from the HTTP status and the answer's code (and, for `URL_MISMATCH`, its message,
 * which names the parameter); undefined for a 200.
 */
export function likelyCause(
  status: number,
  code: string | undefined,
  context: SendContext,
  message?: string,
): Cause | undefined {
  if (status === 200) return undefined;
  if (code === 'SIGNATURE_MISMATCH') return signatureMismatch(context);
  if (code === 'TIMESTAMP_OUT_OF_WINDOW') return timestampOutOfWindow(context);
  if (code === 'URL_MISMATCH') return urlMismatch(context, message);
  if (code !== undefined && Object.hasOwn(FIXED, code)) return FIXED[code];
  if (status === 404) return { causes: ['nothing answers at this path: check the route your handler is mounted on'] };
  // A code that is not payhook's (Fastify's FST_ERR_CTP_BODY_TOO_LARGE, say) is a framework's answer.
  if ((code === undefined || !Object.hasOwn(ERROR_CODES, code)) && (status === 413 || status === 415)) {
    return {
      causes: [
        `something in front of payhook answered ${status} (no payhook code): a body parser or proxy refused the body's size or type (express.json() takes 100 KB by default, Fastify 1 MiB and only the content types it parses); deliveries are a few KB of application/json`,
      ],
    };
  }
  if (status === 401 || status === 400) {
    return {
      causes: [
        `the answer carries no payhook code: is this URL your payhook handler, or does something in front of it answer ${status}?`,
      ],
    };
  }
  return undefined;
}

/**
 * What to look at when no answer came from `url`: a receiver not listening, a port fetch refuses, a certificate Node
 * does not trust, or the wrong scheme.
 */
export function noAnswerHint(reason: string, url: string): string {
  const target = URL.canParse(url) ? new URL(url) : undefined;
  const address = target?.host ?? url;
  if (reason === 'ECONNREFUSED') return `: is the receiver listening at ${address}?`;
  // A receiver that crashed or dropped the request closes the connection so, and so does a TLS server spoken to in
  // plain HTTP.
  if (target?.protocol === 'http:' && (reason === 'UND_ERR_SOCKET' || reason === 'ECONNRESET')) {
    return `: the connection closed before any answer: the receiver at ${address} crashed or dropped the request (see its log), or it speaks https only (then send to an https:// URL)`;
  }
  // The Fetch standard's port blocklist (6000, 6665-6669, 10080, …): fetch never connects to these.
  if (reason === 'bad port')
    return ': fetch refuses this port by policy (as browsers do): run the receiver on another port';
  // OpenSSL 3.0 and 3.2+ name a plain HTTP answer to a TLS hello differently.
  if (reason === 'EPROTO' || reason === 'ERR_SSL_WRONG_VERSION_NUMBER' || reason === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') {
    return `: does the receiver at ${address} speak plain HTTP? Then send to an http:// URL`;
  }
  if (reason === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return `: the receiver's certificate is not for ${address}: send to a name the certificate holds`;
  }
  if (/CERT|SELF_SIGNED|ERR_TLS|UNABLE_TO_VERIFY/.test(reason)) {
    return ": Node does not trust the receiver's certificate (for a test certificate: NODE_EXTRA_CA_CERTS=<its PEM file> npx payhook send …)";
  }
  return '';
}
