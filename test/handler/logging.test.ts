// The default logger: one console line per refused or failed delivery,
// rate-limited, silenced with `logger: false`.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { WebhookHandlerOptions } from '../../src/handler/options.js';
import { createDefaultLogger } from '../../src/handler/report.js';
import { createWebhookHandler } from '../../src/web/index.js';
import { PUBLIC_KEY, signDelivery, webhookBody } from '../helpers/sign.js';

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
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]?.[0])).toMatch(/^payhook: rejected 401 SIGNATURE_MISMATCH - /);
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
    log({ level: 'error', event: 'handler-failed', message: 'still the same second' });
    expect(lines).toHaveLength(10);
    now += 1;
    log({ level: 'error', event: 'handler-failed', message: 'next second', code: 'HANDLER_FAILED' });
    expect(lines.slice(10)).toEqual([
      'warn payhook: 16 more log lines suppressed (at most 10/s)',
      'error payhook: handler-failed HANDLER_FAILED - next second',
    ]);
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
