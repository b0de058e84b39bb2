// The default logger: one console line per refused or failed delivery,
// rate-limited, silenced with `logger: false`.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TEST_KEY_WARNING } from '../../src/handler/flow.js';
import type { WebhookHandlerError, WebhookLogRecord } from '../../src/handler/hooks.js';
import type { WebhookHandlerOptions } from '../../src/handler/options.js';
import { createDefaultLogger } from '../../src/handler/report.js';
import { createWebhookHandler } from '../../src/web/index.js';
import { PUBLIC_KEY, signDelivery, STRANGER_PUBLIC_KEY, webhookBody } from '../helpers/sign.js';

const WEBHOOK_URL = 'https://shop.example.kg/webhooks/payments';

function tamperedRequest(): Request {
  const delivery = signDelivery(webhookBody());
  return new Request(`${WEBHOOK_URL}`, {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body.replace('"amount":100', '"amount":900'),
  });
}

function handler(options: Partial<WebhookHandlerOptions>) {
  return createWebhookHandler({ publicKeys: PUBLIC_KEY, webhookUrl: WEBHOOK_URL, onPayment: () => {}, ...options });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the default logger', () => {
  it('prints one line for a refused delivery when no logger is given', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const response = await handler({})(tamperedRequest());
    expect(response.status).toBe(401);
    expect(warn.mock.calls.map((call) => String(call[0]))).toEqual([
      // First, at creation: these tests' key is payhook's published test key.
      `payhook: misconfigured - ${TEST_KEY_WARNING}`,
      expect.stringMatching(/^payhook: rejected 401 SIGNATURE_MISMATCH - /),
    ]);
  });

  it('says nothing at creation for a key other than the published test key', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    handler({ publicKeys: STRANGER_PUBLIC_KEY });
    expect(warn).not.toHaveBeenCalled();
  });

  it('prints the failure of onPayment as an error line, with its text', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const delivery = signDelivery(webhookBody());
    const response = await handler({
      onPayment: () => {
        throw new Error('db down');
      },
    })(new Request(WEBHOOK_URL, { method: 'POST', headers: delivery.headers, body: delivery.body }));
    expect(response.status).toBe(500);
    expect(error.mock.calls.map((call) => String(call[0]))).toEqual([
      // The line ends with the delivery's key, to find it in the store.
      expect.stringMatching(
        /^payhook: handler-failed 500 HANDLER_FAILED - onPayment threw: db down \(key \S+:SUCCEEDED\)$/,
      ),
    ]);
  });

  it('is silenced with logger: false', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    expect((await handler({ logger: false })(tamperedRequest())).status).toBe(401);
    expect(warn).not.toHaveBeenCalled();
    expect(error).not.toHaveBeenCalled();
  });

  it('prints at most 10 lines a second, then how many it left out', () => {
    const lines: string[] = [];
    let now = 1_000;
    const log = createDefaultLogger(
      { warn: (line: string) => lines.push(`warn ${line}`), error: (line: string) => lines.push(`error ${line}`) },
      () => now,
    );
    for (let i = 0; i < 25; i++) log({ level: 'warn', event: 'rejected', message: `bad ${i}`, status: 401 });
    log({ level: 'info', event: 'handled', message: 'fine', status: 200 });
    expect(lines).toHaveLength(10);
    expect(lines[0]).toBe('warn payhook: rejected 401 - bad 0');
    now += 999;
    log({ level: 'error', event: 'misconfigured', message: 'still the same second' });
    expect(lines).toHaveLength(10);
    now += 1;
    log({ level: 'error', event: 'misconfigured', message: 'next second', code: 'INVALID_ARGUMENT' });
    expect(lines.slice(10)).toEqual([
      'warn payhook: 16 more log lines suppressed (at most 10/s, and as many for verified deliveries): rejected 15, misconfigured 1',
      'error payhook: misconfigured INVALID_ARGUMENT - next second',
    ]);
  });

  // A flood of unsigned requests shared the budget with the only line of a parked payment, and hid it.
  it('keeps 10 lines a second for verified deliveries (a key, or a signed payload not understood), whatever else floods', () => {
    const lines: string[] = [];
    let now = 1_000;
    const log = createDefaultLogger(
      { warn: (line: string) => lines.push(line), error: (line: string) => lines.push(line) },
      () => now,
    );
    for (let i = 0; i < 30; i++) log({ level: 'warn', event: 'rejected', message: `unsigned ${i}`, status: 401 });
    log({ level: 'warn', event: 'parked', message: 'unknown order', status: 200, key: 'a_DEBIT:SUCCEEDED' });
    log({ level: 'warn', event: 'dead-lettered', message: 'Signed but not understood', status: 200 });
    // A signed payload whose dead-letter hand-off failed: never claimed, no key, still a verified delivery's line;
    // the transaction its body names leads to the payment.
    log({
      level: 'error',
      event: 'handler-failed',
      message: 'deadLetter threw: queue down',
      status: 500,
      transactionId: 'tx\n7\u202e',
    });
    for (let i = 0; i < 12; i++) {
      log({ level: 'error', event: 'handler-failed', message: `db down ${i}`, key: `k${i}:SUCCEEDED` });
    }
    expect(lines.filter((line) => line.includes('rejected'))).toHaveLength(10);
    expect(lines).toContain('payhook: parked 200 - unknown order (key a_DEBIT:SUCCEEDED)');
    expect(lines).toContain('payhook: dead-lettered 200 - Signed but not understood');
    expect(lines).toContain(
      'payhook: handler-failed 500 - deadLetter threw: queue down (transaction tx\\u000a7\\u202e)',
    );
    expect(lines.filter((line) => line.includes('handler-failed'))).toHaveLength(8);
    now += 1_000;
    log({ level: 'warn', event: 'rejected', message: 'next second', status: 401 });
    expect(lines.slice(-2)).toEqual([
      'payhook: 25 more log lines suppressed (at most 10/s, and as many for verified deliveries): rejected 20, handler-failed 5',
      'payhook: rejected 401 - next second',
    ]);
  });

  // Its second was read from the wall clock: stepped back an hour, it printed nothing for that hour.
  it('keeps printing after the wall clock steps back', () => {
    vi.useFakeTimers();
    try {
      const lines: string[] = [];
      const log = createDefaultLogger({
        warn: (line: string) => lines.push(line),
        error: (line: string) => lines.push(line),
      });
      for (let i = 0; i < 10; i++) log({ level: 'warn', event: 'rejected', message: `bad ${i}`, status: 401 });
      vi.setSystemTime(Date.now() - 3_600_000);
      vi.advanceTimersByTime(1_000);
      log({ level: 'warn', event: 'parked', message: 'the only trace of a parked payment', status: 200 });
      expect(lines.at(-1)).toBe('payhook: parked 200 - the only trace of a parked payment');
    } finally {
      vi.useRealTimers();
    }
  });

  // A signed field quoted in a merchant's message (a PaymentId another merchant chose) printed forged lines.
  it('prints one line per record: control characters escaped, a long message cut before its key', () => {
    const lines: string[] = [];
    const log = createDefaultLogger({
      warn: (line: string) => lines.push(line),
      error: (line: string) => lines.push(line),
    });
    const forged = 'ord-7\npayhook: handled 200 - all good\r\u2028\u0085\u001b[2K';
    log({ level: 'error', event: 'handler-failed', message: `order ${forged} is locked`, key: 'k:SUCCEEDED' });
    log({ level: 'error', event: 'handler-failed', message: `${'x'.repeat(3_999)}😀 and more`, key: 'k:FAILED' });
    expect(lines[0]).toBe(
      'payhook: handler-failed - order ord-7\\u000apayhook: handled 200 - all good\\u000d\\u2028\\u0085\\u001b[2K is locked (key k:SUCCEEDED)',
    );
    // Cut at 4,000 characters, not inside the emoji's surrogate pair, with the key kept.
    expect(lines[1]).toBe(`payhook: handler-failed - ${'x'.repeat(3_999)}… (key k:FAILED)`);
    // Escapes count: 10,000 control characters print as 4,000 characters at most, no escape split.
    log({ level: 'error', event: 'handler-failed', message: '\u0085'.repeat(10_000), key: '\n'.repeat(1_000) });
    const [message, key] = (lines[2] ?? '').replace('payhook: handler-failed - ', '').split(' (key ');
    expect(message).toBe(`${'\\u0085'.repeat(666)}…`);
    expect(key).toBe(`${'\\u000a'.repeat(33)}…)`);
  });

  it('ignores info records (handled deliveries, duplicates, aborts)', () => {
    const lines: string[] = [];
    const log = createDefaultLogger({
      warn: (line: string) => lines.push(line),
      error: (line: string) => lines.push(line),
    });
    log({ level: 'info', event: 'handled', message: 'Delivery handled.', status: 200 });
    log({ level: 'debug', event: 'duplicate', message: 'y' });
    expect(lines).toEqual([]);
  });
});

describe('the line for a signature that does not verify', () => {
  // What the merchant compares first when every delivery is refused: which key, for which URL.
  type Checked = {
    publicKeys?: string | string[];
    environment?: Array<'production' | 'beta'>;
    trustForwardedHeaders?: boolean;
  } & ({ webhookUrl: WebhookHandlerOptions['webhookUrl'] } | { allowAnyHost: true });
  async function refusal(
    checked: Checked = { publicKeys: PUBLIC_KEY, webhookUrl: WEBHOOK_URL },
    request: Request = tamperedRequest(),
  ) {
    const messages: string[] = [];
    const options = {
      ...checked,
      onPayment: () => {},
      logger: (record: WebhookLogRecord) => {
        // The start-up warning for the test key these tests sign with is not the refusal's line.
        if (record.message !== TEST_KEY_WARNING) messages.push(`log ${record.message}`);
      },
      onError: (error: WebhookHandlerError) => void messages.push(`onError ${error.message}`),
    };
    // Each case is one of the option types' shapes; the union of them is not, for TypeScript.
    const response = await createWebhookHandler(options as unknown as WebhookHandlerOptions)(request);
    const answer = (await response.json()) as { code?: string; message?: string };
    return { status: response.status, answer, messages };
  }

  const MISMATCH = /^The signature does not verify: .*another environment\.$/;
  // Where the log line sends a merchant to find out why.
  const WHY = " Why it fails: payhook's docs/troubleshooting.md (payhook verify, explainSignatureMismatch).";

  it('names the keys and the URL checked in the log and onError, never in the answer', async () => {
    const { status, answer, messages } = await refusal();
    expect(status).toBe(401);
    expect(answer.code).toBe('SIGNATURE_MISMATCH');
    expect(answer.message).toMatch(MISMATCH);
    const said = `${answer.message!} Checked with your publicKeys, for ${WEBHOOK_URL}.${WHY}`;
    expect(messages.sort()).toEqual([`log ${said}`, `onError ${said}`]);
  });

  it("names the service's keys, and hides the query and a URL's user and password", async () => {
    for (const query of ['shop=7&token=t0ken', '9f86d081884c7d659a2feaa0c55ad015']) {
      const url = `https://shop:s3cret@shop.example.kg/webhooks/payments?${query}`;
      const delivery = signDelivery(webhookBody(), { target: `/webhooks/payments?${query}` });
      const request = new Request(`${WEBHOOK_URL}?${query}`, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
      });
      const { status, messages } = await refusal(
        { environment: ['production'], publicKeys: STRANGER_PUBLIC_KEY, webhookUrl: url },
        request,
      );
      expect(status).toBe(401);
      const line = messages.find((message) => message.startsWith('log '));
      expect(line).toMatch(
        /Checked with the service's production key and your publicKeys, for https:\/\/shop\.example\.kg\/webhooks\/payments\?…\. Why it fails: /,
      );
      expect(messages.join('\n')).not.toMatch(/s3cret|t0ken|shop=|9f86d/);
    }
  });

  it('names each environment once, and no publicKeys when the list is empty', async () => {
    const { messages } = await refusal({ environment: ['beta', 'beta'], publicKeys: [], webhookUrl: WEBHOOK_URL });
    expect(messages.find((message) => message.startsWith('log '))).toMatch(
      /Checked with the service's beta key, for https:\/\/shop\.example\.kg\/webhooks\/payments\. Why it fails: /,
    );
  });

  it('says how the URL is chosen for a list, a function and allowAnyHost (with forwarded headers trusted or not)', async () => {
    const checked = async (options: Checked) =>
      (await refusal(options)).messages
        .find((message) => message.startsWith('log ') && message.endsWith(WHY))
        ?.replace(/^.*Checked/, 'Checked')
        .slice(0, -WHY.length);
    expect(await checked({ publicKeys: PUBLIC_KEY, webhookUrl: [WEBHOOK_URL, 'https://shop.example.kg/other'] })).toBe(
      'Checked with your publicKeys, for the URL your webhookUrl list or function picks.',
    );
    expect(await checked({ publicKeys: PUBLIC_KEY, webhookUrl: () => WEBHOOK_URL })).toBe(
      'Checked with your publicKeys, for the URL your webhookUrl list or function picks.',
    );
    expect(await checked({ publicKeys: PUBLIC_KEY, allowAnyHost: true })).toBe(
      'Checked with your publicKeys, for the Host, path and query each request arrives with (allowAnyHost).',
    );
    expect(await checked({ publicKeys: PUBLIC_KEY, allowAnyHost: true, trustForwardedHeaders: true })).toBe(
      'Checked with your publicKeys, for the X-Forwarded-Host (else Host), path and query each request arrives with (allowAnyHost).',
    );
  });

  it('adds nothing to the lines of other refusals', async () => {
    const delivery = signDelivery(webhookBody(), { timestamp: 5 });
    const request = new Request(WEBHOOK_URL, { method: 'POST', headers: delivery.headers, body: delivery.body });
    const { answer, messages } = await refusal(undefined, request);
    expect(answer.code).toBe('TIMESTAMP_OUT_OF_WINDOW');
    expect(messages.sort()).toEqual([`log ${answer.message!}`, `onError ${answer.message!}`]);
  });
});
