// The body reader's limits at their edges: a chunked body past the limit that then stalls is still too
// large, and a body declared too large is never read whole.
import { describe, expect, it } from 'vitest';
import type { WebhookHandlerOptions } from '../../src/handler/options.js';
import { createWebhookHandler } from '../../src/web/index.js';
import { PUBLIC_KEY, signDelivery, webhookBody } from '../helpers/sign.js';

const base = {
  publicKeys: PUBLIC_KEY,
  webhookUrl: 'https://shop.example.kg/webhooks/payments',
  onPayment: () => {},
  logger: false,
} satisfies WebhookHandlerOptions;

describe('body limits', () => {
  it('answers 413, not 408, to a chunked body that passes the limit and then stalls while the rest is dropped', async () => {
    const handler = createWebhookHandler({ ...base, maxBodyBytes: 1_000, bodyTimeoutMs: 200 });
    const delivery = signDelivery(webhookBody());
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(1_500)); // past the limit, far short of the 8 MiB dropped
        // ...and then nothing: neither the end nor more bytes.
      },
    });
    const request = new Request(`https://shop.example.kg${delivery.target}`, {
      method: 'POST',
      headers: delivery.headers, // no content-length: read as a stream
      body,
      duplex: 'half',
    } as RequestInit);
    const response = await handler(request);
    expect(response.status).toBe(413);
    expect(((await response.json()) as { code: string }).code).toBe('BODY_TOO_LARGE');
  });

  it('reads a body declared larger than the limit from its stream, never whole with arrayBuffer()', async () => {
    const handler = createWebhookHandler({ ...base, maxBodyBytes: 1_000 });
    const delivery = signDelivery(webhookBody());
    const request = new Request(`https://shop.example.kg${delivery.target}`, {
      method: 'POST',
      headers: { ...delivery.headers, 'content-length': '5000' },
      body: new Uint8Array(5_000),
    });
    let wholeReads = 0;
    const arrayBuffer = request.arrayBuffer.bind(request);
    request.arrayBuffer = () => {
      wholeReads++;
      return arrayBuffer();
    };
    const response = await handler(request);
    expect(response.status).toBe(413);
    expect(wholeReads).toBe(0);
  });
});
