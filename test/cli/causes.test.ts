import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { EXPLAINED_CODES, likelyCause, noAnswerHint, type SendContext } from '../../src/cli/causes.js';
import { ERROR_CODES, statusForCode, type PayhookErrorCode } from '../../src/lib/errors.js';

const context: SendContext = {
  signedFor: 'https://shop.example.kg/webhooks/payments',
  urlChosen: true,
  urlFromCapture: false,
  keyFile: undefined,
  tampered: false,
  datedMs: undefined,
  hostGiven: false,
  asCaptured: false,
  sentQuery: '',
  queryDiffers: false,
};

describe('the refusal causes payhook send prints', () => {
  it('docs/troubleshooting.md lists every code with the HTTP status the handlers answer', async () => {
    const doc = await readFile(new URL('../../docs/troubleshooting.md', import.meta.url), 'utf8');
    const codes = EXPLAINED_CODES.filter((code): code is PayhookErrorCode => Object.hasOwn(ERROR_CODES, code));
    expect(codes).toEqual(EXPLAINED_CODES);
    for (const code of codes) {
      const status = statusForCode(code);
      expect(doc, code).toContain(`| \`${code}\` (${status})`);
      expect(likelyCause(status, code, context)?.causes.length, code).toBeGreaterThan(0);
    }
  });

  it('says nothing for a 200 and names a route for a 404 without a code', () => {
    expect(likelyCause(200, undefined, context)).toBeUndefined();
    expect(likelyCause(404, undefined, context)?.causes[0]).toContain('path');
    expect(likelyCause(401, undefined, context)?.causes[0]).toContain('no payhook code');
    expect(likelyCause(502, undefined, context)).toBeUndefined();
    // A parser in front refusing the body: payhook's own 413 carries its code and is explained as such.
    for (const status of [413, 415]) {
      expect(likelyCause(status, undefined, context)?.causes[0]).toContain('a body parser or proxy refused');
    }
    expect(likelyCause(413, 'BODY_TOO_LARGE', context)?.causes[0]).not.toContain('a body parser or proxy refused');
    // Fastify's own refusals carry a code of its own.
    for (const [status, code] of [
      [413, 'FST_ERR_CTP_BODY_TOO_LARGE'],
      [415, 'FST_ERR_CTP_INVALID_MEDIA_TYPE'],
    ] as const) {
      expect(likelyCause(status, code, context)?.causes[0]).toContain('(no payhook code): a body parser');
    }
  });

  it('names a Host chosen with --host first for a signature mismatch', () => {
    const causes = likelyCause(401, 'SIGNATURE_MISMATCH', { ...context, hostGiven: true })?.causes ?? [];
    expect(causes[0]).toContain('--host signed for another Host');
    expect(causes).toHaveLength(5);
    expect(likelyCause(401, 'SIGNATURE_MISMATCH', context)?.causes[0]).toContain('TEST key');
  });

  // A receiver with the right key and webhookUrl behind express.json({ reviver }) or express.urlencoded({ type: '*/*' })
  // refuses every delivery: the body payhook reads is not the one signed.
  it('names a body a parser or middleware changed before payhook read it, before a proxy, for a signature mismatch', () => {
    for (const about of [context, { ...context, hostGiven: true }, { ...context, urlFromCapture: true }]) {
      const causes = likelyCause(401, 'SIGNATURE_MISMATCH', about)?.causes ?? [];
      const body = causes.findIndex((cause) => cause.includes('changed the body before payhook read it'));
      expect(body).toBeGreaterThan(0);
      expect(causes[body]).toContain("express.urlencoded({ type: '*/*' })");
      expect(body).toBeLessThan(causes.findIndex((cause) => cause.startsWith('a proxy dropped or changed')));
    }
  });

  it("names the receiver's webhookUrl first for a capture signed again for the URL it recorded", () => {
    const causes = likelyCause(401, 'SIGNATURE_MISMATCH', { ...context, urlFromCapture: true })?.causes ?? [];
    expect(causes[0]).toContain('the one the capture recorded: changed since?');
    expect(causes[0]).toContain('--webhook-url');
    expect(causes[1]).toContain('TEST key');
  });

  // The receiver pins https://shop.example.kg/webhooks/payments?shop=7; send was given --webhook-url without the query.
  it('names the URL chosen with --webhook-url for a URL_MISMATCH when the query sent is its own', () => {
    const chosen = likelyCause(401, 'URL_MISMATCH', context)?.causes ?? [];
    expect(chosen).toEqual([
      expect.stringMatching(/^--webhook-url \(https:\/\/shop\.example\.kg\/webhooks\/payments\) lacks/),
    ]);
    expect(chosen[0]).toContain("pass --webhook-url <the receiver's webhookUrl>, query included");
    const recorded = likelyCause(401, 'URL_MISMATCH', { ...context, urlFromCapture: true })?.causes ?? [];
    expect(recorded[0]).toMatch(/^the webhookUrl the capture recorded \(https:/);
    // Signed for the target itself (no URL chosen), the URL sent to is what to change.
    const own = likelyCause(401, 'URL_MISMATCH', { ...context, urlChosen: false })?.causes ?? [];
    expect(own[0]).toMatch(/^the URL you send to lacks a query parameter/);
  });

  // The receiver pins ?shop=7 and names the parameter in its answer, as payhook's handlers do.
  it.each([
    ['tenant=7', 'lacks the parameter "shop" of', ['--webhook-url']],
    ['shop=8', 'gives the parameter "shop" another value than', ['--webhook-url', 'did not reach payhook']],
    ['shop=7', 'lacks the parameter "shop" of', ['did not reach payhook', '--webhook-url']],
    ['shop=7&utm=x', 'lacks the parameter "shop" of', ['did not reach payhook', '--webhook-url']],
  ])(
    'for a URL_MISMATCH with the query %s sent as signed, orders the causes by the parameter the answer names (%s)',
    (sentQuery, words, starts) => {
      const message = `The request's query ${words} the registered webhookUrl.`;
      const causes = likelyCause(401, 'URL_MISMATCH', { ...context, sentQuery }, message)?.causes ?? [];
      expect(causes.map((cause, i) => cause.includes(starts[i]!))).toEqual(starts.map(() => true));
      expect(causes).toHaveLength(starts.length);
    },
  );

  // A receiver with a list of webhookUrl values answers without naming a part: the path may be what fits none.
  it('for a URL_MISMATCH of a list, names the path too, first when no query was sent', () => {
    const message = 'The request fits none of the registered webhookUrl values (by path and query).';
    const bare = likelyCause(401, 'URL_MISMATCH', { ...context, urlChosen: false, sentQuery: '' }, message);
    expect(bare?.causes).toEqual([
      expect.stringMatching(/^the path sent is none of the receiver's registered webhookUrl paths/),
      expect.stringMatching(/^the URL you send to lacks a query parameter/),
    ]);
    const queried = likelyCause(401, 'URL_MISMATCH', { ...context, sentQuery: 'shop=7' }, message)?.causes ?? [];
    expect(queried.at(-1)).toMatch(/^the path sent is none/);
    expect(queried.length).toBeGreaterThan(1);
  });

  it('for a URL_MISMATCH of a target that signed for itself, never blames a proxy for a parameter never sent', () => {
    const message = 'The request\'s query lacks the parameter "shop" of the registered webhookUrl.';
    const own = { ...context, urlChosen: false, sentQuery: 'x=1' };
    expect(likelyCause(401, 'URL_MISMATCH', own, message)?.causes).toEqual([
      expect.stringMatching(/^the URL you send to lacks a query parameter/),
    ]);
    // A message without a parameter (a receiver not built on payhook, or one without a value): a loss first.
    expect(likelyCause(401, 'URL_MISMATCH', { ...context, sentQuery: 'x=1' })?.causes[0]).toContain(
      'did not reach payhook',
    );
  });

  it('takes a missing or malformed timestamp for a delivery signed so, and a proxy that drops or changes it for a mismatch', async () => {
    // x-api-timestamp is signed and the signature is checked first: a proxy that drops or changes it breaks the signature.
    for (const code of ['MISSING_TIMESTAMP', 'MALFORMED_TIMESTAMP']) {
      const [cause = ''] = likelyCause(401, code, { ...context, asCaptured: true })?.causes ?? [];
      expect(cause, code).toMatch(/^the delivery was signed with(out)? /);
      expect(cause, code).not.toMatch(/proxy in front of the receiver drops|changed on the way/);
      expect(cause, code).toContain('SIGNATURE_MISMATCH');
    }
    for (const about of [context, { ...context, asCaptured: true }]) {
      expect(likelyCause(401, 'SIGNATURE_MISMATCH', about)?.causes).toContainEqual(
        expect.stringContaining('a proxy dropped or changed x-api-timestamp (or another x-api-* header)'),
      );
    }
    const doc = await readFile(new URL('../../docs/troubleshooting.md', import.meta.url), 'utf8');
    const row = (code: string) => doc.split('\n').find((line) => line.startsWith(`| \`${code}\``)) ?? '';
    expect(row('MISSING_TIMESTAMP')).not.toContain('a proxy drops');
    expect(row('MALFORMED_TIMESTAMP')).not.toContain('changed on the way');
    expect(row('SIGNATURE_MISMATCH')).toContain('a proxy dropped or changed `x-api-timestamp`');
  });

  // The handler captures only SIGNATURE_MISMATCH (onSignatureMismatch); the others are captured before it.
  it('says how to capture what arrived for MISSING_SIGNATURE and URL_MISMATCH, and no key for a signature absent', async () => {
    const diagnose = likelyCause(401, 'MISSING_SIGNATURE', context)?.diagnose ?? '';
    expect(diagnose).toContain('captureDelivery');
    expect(diagnose).not.toContain('--env');
    const doc = await readFile(new URL('../../docs/troubleshooting.md', import.meta.url), 'utf8');
    for (const code of ['MISSING_SIGNATURE', 'URL_MISMATCH']) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${code}\``)) ?? '';
      expect(row, code).toContain('`captureDelivery` before the handler');
      expect(row, code).toContain('`onSignatureMismatch` is called for `SIGNATURE_MISMATCH` only');
    }
  });

  it('for a capture replayed as captured, names --resign and a capture changed after signing', () => {
    const causes = likelyCause(401, 'SIGNATURE_MISMATCH', { ...context, asCaptured: true })?.causes ?? [];
    expect(causes[0]).toContain('--resign');
    expect(causes[1]).toContain('changed after it was signed');
  });
});

describe('the hint payhook send gives when no answer came', () => {
  it('names a receiver not listening, and a certificate Node does not trust (a self-signed test certificate)', () => {
    expect(noAnswerHint('ECONNREFUSED', 'http://127.0.0.1:3000/webhooks')).toBe(
      ': is the receiver listening at 127.0.0.1:3000?',
    );
    for (const reason of ['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG', 'EPROTO']) {
      expect(noAnswerHint(reason, 'https://127.0.0.1:3000/webhooks'), reason).toContain('send to an http:// URL');
    }
    // Plain HTTP to a TLS server, or a receiver that crashed: fetch and the exact replay name the closed socket
    // differently.
    for (const reason of ['UND_ERR_SOCKET', 'ECONNRESET']) {
      expect(noAnswerHint(reason, 'http://127.0.0.1:3000/webhooks'), reason).toContain(
        'crashed or dropped the request (see its log), or it speaks https only (then send to an https:// URL)',
      );
      expect(noAnswerHint(reason, 'https://127.0.0.1:3000/webhooks'), reason).toBe('');
    }
    for (const reason of [
      'DEPTH_ZERO_SELF_SIGNED_CERT',
      'SELF_SIGNED_CERT_IN_CHAIN',
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    ]) {
      expect(noAnswerHint(reason, 'h'), reason).toContain('NODE_EXTRA_CA_CERTS=<its PEM file>');
    }
    // Trusted, but for another name: trusting it again would not help.
    expect(noAnswerHint('ERR_TLS_CERT_ALTNAME_INVALID', 'https://shop.local:8443/webhooks')).toBe(
      ": the receiver's certificate is not for shop.local:8443: send to a name the certificate holds",
    );
    for (const reason of ['TimeoutError', 'ENOTFOUND']) expect(noAnswerHint(reason, 'http://h/')).toBe('');
  });
});
