// Well-known webhook libraries, measured in the same harness as payhook, each against a bare server that does the
// same work by hand with node:crypto. They sign with HMAC-SHA256 rather than RSA, so only each one's ratio to its
// own bare server says something; their absolute figures are not comparable with payhook's.
//   octokit           @octokit/webhooks createNodeMiddleware (x-hub-signature-256: sha256=<hex> over the body)
//   stripe            stripe webhooks.constructEvent (stripe-signature: t=<s>,v1=<hex> over "<t>.<body>")
//   standardwebhooks  standardwebhooks Webhook.verify (webhook-signature: v1,<base64> over "<id>.<t>.<body>")
// Each server, the library's and the bare one, keeps a Map of the delivery ids it handled, as payhook's bare
// servers do, and answers a redelivery without handling it again.
import { Buffer } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { makeLedger } from './bare.mjs';

// Secrets made for this benchmark only.
const OCTOKIT_SECRET = 'bench-octokit-secret';
const STRIPE_SECRET = 'whsec_bench_stripe_secret';
const SWH_KEY = Buffer.from('bench-standard-webhooks-key-32by', 'utf8');
const SWH_SECRET = `whsec_${SWH_KEY.toString('base64')}`;
const TOLERANCE_S = 300;
const PATH = '/webhooks/payments';

/** The peers, in the order they are printed: name, the library's package, the label of its figure. */
export const PEERS = [
  { id: 'octokit', pkg: '@octokit/webhooks', label: '@octokit/webhooks createNodeMiddleware' },
  { id: 'stripe', pkg: 'stripe', label: 'stripe webhooks.constructEvent' },
  { id: 'standardwebhooks', pkg: 'standardwebhooks', label: 'standardwebhooks Webhook.verify' },
];

const hmac = (key, text, encoding) => createHmac('sha256', key).update(text).digest(encoding);

/**
 * Signs `bodies` (JSON texts whose top-level `id` differs) for peer `id`, with `timestampMs` as the signing time.
 * Returns requests as the load generator sends them: { url, headers, body }.
 */
export function signPeerDeliveries(id, bodies, timestampMs) {
  const seconds = Math.floor(timestampMs / 1000);
  return bodies.map((body, i) => {
    const headers = { host: 'shop.example.kg', 'content-type': 'application/json' };
    if (id === 'octokit') {
      headers['x-github-event'] = 'ping';
      headers['x-github-delivery'] = `${seconds}-${i}`;
      headers['x-hub-signature-256'] = `sha256=${hmac(OCTOKIT_SECRET, body, 'hex')}`;
    } else if (id === 'stripe') {
      headers['stripe-signature'] = `t=${seconds},v1=${hmac(STRIPE_SECRET, `${seconds}.${body}`, 'hex')}`;
    } else if (id === 'standardwebhooks') {
      const msgId = `msg_${seconds}_${i}`;
      headers['webhook-id'] = msgId;
      headers['webhook-timestamp'] = String(seconds);
      headers['webhook-signature'] = `v1,${hmac(SWH_KEY, `${msgId}.${seconds}.${body}`, 'base64')}`;
    } else {
      throw new Error(`unknown peer ${id}`);
    }
    return { url: PATH, headers, body };
  });
}

/** A copy of `request` whose body no longer matches its signature (for the check that a server refuses it). */
export function tamper(request) {
  return { ...request, body: request.body.replace(/"id":"/, '"id":"x') };
}

function readBody(req, done) {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => done(Buffer.concat(chunks)));
}

const JSON_HEADERS = { 'content-type': 'application/json' };
const reply = (res, status, body) => res.writeHead(status, JSON_HEADERS).end(body);
const ANSWER = { true: '{"received":true}', false: '{"received":true,"duplicate":true}' };

/** The library's own server for peer `id`: a node:http listener. */
export async function peerListener(id) {
  const ledger = makeLedger();
  let listener;
  if (id === 'octokit') {
    const { Webhooks, createNodeMiddleware } = await import('@octokit/webhooks');
    const webhooks = new Webhooks({ secret: OCTOKIT_SECRET });
    webhooks.onAny((event) => {
      ledger.claim(event.id);
    });
    // The middleware answers 200 "ok" itself once the event's handlers have run.
    // Its log is silenced: by default it prints the refused delivery that each run's forgery check sends.
    const quiet = () => {};
    const log = { debug: quiet, info: quiet, warn: quiet, error: quiet };
    listener = createNodeMiddleware(webhooks, { path: PATH, log });
  } else if (id === 'stripe') {
    const { default: Stripe } = await import('stripe');
    const stripe = new Stripe('sk_test_bench_never_used');
    listener = (req, res) =>
      readBody(req, (body) => {
        let event;
        try {
          event = stripe.webhooks.constructEvent(body, req.headers['stripe-signature'], STRIPE_SECRET);
        } catch {
          return reply(res, 400, '{"received":false}');
        }
        reply(res, 200, ANSWER[ledger.claim(event.id)]);
      });
  } else if (id === 'standardwebhooks') {
    const { Webhook } = await import('standardwebhooks');
    const webhook = new Webhook(SWH_SECRET);
    listener = (req, res) =>
      readBody(req, (body) => {
        try {
          webhook.verify(body.toString('utf8'), req.headers);
        } catch {
          return reply(res, 400, '{"received":false}');
        }
        reply(res, 200, ANSWER[ledger.claim(req.headers['webhook-id'])]);
      });
  } else {
    throw new Error(`unknown peer ${id}`);
  }
  return { listener, stats: ledger.stats, reset: ledger.reset };
}

const sameText = (a, b) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};
const JSON_CONTENT = /^\s*application\/json\s*(?:;|$)/i;

/** The bare server for peer `id`: the same checks as the library, by hand, with node:crypto. */
export function peerBareListener(id) {
  const ledger = makeLedger();
  let check;
  if (id === 'octokit') {
    check = (req, text) => {
      const { headers } = req;
      if (!JSON_CONTENT.test(headers['content-type'] ?? '')) return null;
      const delivery = headers['x-github-delivery'];
      const signature = headers['x-hub-signature-256'];
      if (!headers['x-github-event'] || !delivery || typeof signature !== 'string') return null;
      if (!sameText(signature, `sha256=${hmac(OCTOKIT_SECRET, text, 'hex')}`)) return null;
      JSON.parse(text);
      return delivery;
    };
  } else if (id === 'stripe') {
    check = (req, text) => {
      const header = req.headers['stripe-signature'];
      if (typeof header !== 'string') return null;
      let t;
      const v1 = [];
      for (const item of header.split(',')) {
        const eq = item.indexOf('=');
        const name = item.slice(0, eq);
        if (name === 't') t = item.slice(eq + 1);
        else if (name === 'v1') v1.push(item.slice(eq + 1));
      }
      if (t === undefined || v1.length === 0) return null;
      const expected = hmac(STRIPE_SECRET, `${t}.${text}`, 'hex');
      if (!v1.some((candidate) => sameText(candidate, expected))) return null;
      if (Math.floor(Date.now() / 1000) - Number(t) > TOLERANCE_S) return null;
      return JSON.parse(text).id;
    };
  } else if (id === 'standardwebhooks') {
    check = (req, text) => {
      const { headers } = req;
      const msgId = headers['webhook-id'];
      const t = headers['webhook-timestamp'];
      const signatures = headers['webhook-signature'];
      if (!msgId || !t || typeof signatures !== 'string') return null;
      const seconds = Number(t);
      const now = Math.floor(Date.now() / 1000);
      if (!Number.isInteger(seconds) || Math.abs(now - seconds) > TOLERANCE_S) return null;
      const expected = hmac(SWH_KEY, `${msgId}.${seconds}.${text}`, 'base64');
      const match = signatures.split(' ').some((item) => {
        const comma = item.indexOf(',');
        return item.slice(0, comma) === 'v1' && sameText(item.slice(comma + 1), expected);
      });
      if (!match) return null;
      JSON.parse(text);
      return msgId;
    };
  } else {
    throw new Error(`unknown peer ${id}`);
  }
  const listener = (req, res) =>
    readBody(req, (body) => {
      let id;
      try {
        id = req.method === 'POST' ? check(req, body.toString('utf8')) : null;
      } catch {
        id = null;
      }
      if (id === null) return reply(res, 400, '{"received":false}');
      reply(res, 200, ANSWER[ledger.claim(id)]);
    });
  return { listener, stats: ledger.stats, reset: ledger.reset };
}
