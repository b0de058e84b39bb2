import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryStore } from '../dedup/memory.js';
import { createNodeWebhookHandler, type NodeWebhookHandler } from '../node/index.js';
import { retryDelay } from '../retry.js';
import { createTestWebhook, type TestWebhookOverrides } from '../testing/deliveries.js';
import { signWebhook, type SignedWebhook } from '../testing/sign.js';
import { TEST_KEY_PAIR } from '../testing/test-keys.js';
import type { PaymentWebhook } from '../webhook/types.js';
import { formatDuration, EXIT, numberFlag, parse, sleep, type Io } from './io.js';

export const DEMO_HELP = `Usage: payhook demo [options]

Plays the payment service against a local receiver, with nothing to
configure: it starts a receiver built with createNodeWebhookHandler and the
memory store on a free 127.0.0.1 port, then sends it, signed with payhook's
published TEST key: a successful payment, a failed one, the same delivery
twice at once, a tampered body, a stale timestamp, and a handler failure
followed by its retries on the service's real schedule, compressed in time.
It prints each delivery, the answer and why.

Options:
  --speed <factor>   how much to compress the retry schedule (default: 1000,
                     so the service's 30 s wait takes 30 ms)
  -h, --help         show this help

Exit codes: 0 every answer was the expected one; 1 some were not;
2 usage error.`;

/** How often onPayment fails before it succeeds: six, to reach the schedule's first doubled delay. */
const FAILURES = 6;

interface Expectation {
  status: number;
  code?: string;
  why: string;
}

export async function demoCommand(args: readonly string[], io: Io): Promise<number> {
  const { values } = parse(args, { speed: { type: 'string' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    io.out(DEMO_HELP);
    return EXIT.OK;
  }
  const speed = numberFlag(values.speed, 'speed', 1000);

  // The merchant's side: what onPayment saw, and a handler that fails on demand.
  const handled: PaymentWebhook[] = [];
  const failuresLeft = new Map<string, number>();
  const slow = new Set<string>();
  // The handler pins the URL it is served at, so it is made (and attached)
  // once the port is known.
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/webhooks/payments`;
  const handler: NodeWebhookHandler = createNodeWebhookHandler({
    publicKeys: TEST_KEY_PAIR.publicKey,
    webhookUrl: url,
    store: createMemoryStore(),
    logger: false, // the demo prints each answer and why itself
    async onPayment(webhook) {
      if (slow.has(webhook.transactionId)) await sleep(300);
      const left = failuresLeft.get(webhook.transactionId) ?? 0;
      if (left > 0) {
        failuresLeft.set(webhook.transactionId, left - 1);
        throw new Error('the order database is down (simulated)');
      }
      handled.push(webhook);
    },
  });
  server.on('request', (req, res) => void handler(req, res));
  io.out(`payhook demo: a receiver listens on ${url}`);
  io.out(`(createNodeWebhookHandler + createMemoryStore, verifying with TEST_KEY_PAIR.publicKey)\n`);

  let mismatches = 0;
  let step = 0;
  const sign = (body: object, timestamp: number = Date.now()): Promise<SignedWebhook> =>
    signWebhook(body, { url, timestamp });

  async function deliver(
    signed: SignedWebhook,
    label: string,
  ): Promise<{ status: number; code: string | undefined; text: string }> {
    const response = await fetch(url, {
      method: 'POST',
      headers: Object.fromEntries(Object.entries(signed.headers).filter(([name]) => name !== 'host')),
      body: signed.body,
    });
    const text = await response.text();
    let code: string | undefined;
    try {
      code = (JSON.parse(text) as { code?: string }).code;
    } catch {
      code = undefined;
    }
    io.out(`   ${label} ← ${response.status} ${text}`);
    return { status: response.status, code, text };
  }

  function check(
    actual: { status: number; code: string | undefined },
    expected: Expectation,
    extra = true,
    compact = false,
  ): void {
    const ok =
      actual.status === expected.status && (expected.code === undefined || actual.code === expected.code) && extra;
    if (!ok) mismatches++;
    io.out(
      `   ${ok ? '✓' : '✗ UNEXPECTED:'} expected ${expected.status}${expected.code ? ` ${expected.code}` : ''}: ${expected.why}${compact ? '' : '\n'}`,
    );
  }

  function title(text: string, body: TestWebhookOverrides & { transactionId: string }): void {
    step++;
    io.out(`${step}. ${text}`);
    io.out(
      `   → POST /webhooks/payments  transaction ${body.transactionId.slice(0, 8)}…, status ${body.status ?? 'SUCCEEDED'}, amount ${body.amount ?? 100}`,
    );
  }

  const count = (transactionId: string) => handled.filter((webhook) => webhook.transactionId === transactionId).length;

  try {
    {
      const body = createTestWebhook();
      title('A successful payment', body);
      const answer = await deliver(await sign(body), 'delivery');
      check(
        answer,
        { status: 200, why: 'signed, fresh and new: onPayment ran once with status SUCCEEDED' },
        count(body.transactionId) === 1 && handled.at(-1)?.status === 'SUCCEEDED',
      );
    }
    {
      const body = createTestWebhook({ status: 'failed', variant: 'card' });
      title('A failed payment (the service writes "failed" in any letter case)', body);
      const answer = await deliver(await sign(body), 'delivery');
      check(
        answer,
        { status: 200, why: 'a failed payment is still a valid webhook: onPayment got status FAILED (normalised)' },
        count(body.transactionId) === 1 && handled.at(-1)?.status === 'FAILED',
      );
    }
    {
      const body = createTestWebhook({ amount: 250 });
      slow.add(body.transactionId);
      title('The same delivery twice at once (at-least-once delivery)', body);
      const signed = await sign(body);
      const answers = await Promise.all([deliver(signed, 'copy A'), deliver(signed, 'copy B')]);
      const statuses = answers.map((answer) => answer.status).sort();
      const pair = { status: statuses[0] === 200 && statuses[1] === 409 ? 200 : -1, code: undefined };
      check(pair, {
        status: 200,
        why: 'one copy claimed it and ran onPayment (200); the other found it in progress (409 DELIVERY_IN_PROGRESS), so the service retries it',
      });
      const delay = retryDelay(1);
      io.out(
        `   the service retries the 409 copy in ${formatDuration(delay)} (compressed: ${formatDuration(delay / speed)})`,
      );
      await sleep(Math.max(delay / speed, 350));
      const retry = await deliver(signed, 'retry of the 409 copy');
      check(
        retry,
        { status: 200, why: 'already handled: answered 200 without calling onPayment again' },
        count(body.transactionId) === 1 && retry.text.includes('duplicate'),
      );
    }
    {
      const body = createTestWebhook({ amount: 100 });
      title('A tampered body (amount changed after signing)', { ...body, amount: 1_000_000 });
      const signed = await sign(body);
      const tampered = { ...signed, body: signed.body.replace('"amount":100,', '"amount":1000000,') };
      const answer = await deliver(tampered, 'delivery');
      check(
        answer,
        { status: 401, code: 'SIGNATURE_MISMATCH', why: 'the signature covers the body: onPayment never ran' },
        count(body.transactionId) === 0 && tampered.body !== signed.body,
      );
    }
    {
      const body = createTestWebhook();
      title('A stale timestamp (signed 10 minutes ago: a replay)', body);
      const answer = await deliver(await sign(body, Date.now() - 10 * 60_000), 'delivery');
      check(
        answer,
        {
          status: 401,
          code: 'TIMESTAMP_OUT_OF_WINDOW',
          why: 'outside the ±5-minute window: refused even though the signature is valid',
        },
        count(body.transactionId) === 0,
      );
    }
    {
      const body = createTestWebhook({ amount: 1500.5 });
      failuresLeft.set(body.transactionId, FAILURES);
      title('A handler failure, then the service retries on its schedule', body);
      let attempt = 1;
      let answer = await deliver(await sign(body), `attempt ${attempt}`);
      check(
        answer,
        { status: 500, code: 'HANDLER_FAILED', why: 'onPayment threw: the claim is released so the service retries' },
        true,
        true,
      );
      while (answer.status !== 200 && attempt <= FAILURES) {
        const delay = retryDelay(attempt);
        io.out(
          `   retry ${attempt} after ${formatDuration(delay)} on the service's schedule (compressed: ${formatDuration(delay / speed)})`,
        );
        await sleep(delay / speed);
        attempt++;
        // Every attempt is a new request with a fresh x-api-timestamp.
        answer = await deliver(await sign(body), `attempt ${attempt}`);
        if (attempt <= FAILURES)
          check(
            answer,
            { status: 500, code: 'HANDLER_FAILED', why: 'still failing: the service keeps retrying' },
            true,
            true,
          );
      }
      check(
        answer,
        { status: 200, why: `attempt ${FAILURES + 1} succeeded: onPayment completed exactly once` },
        attempt === FAILURES + 1 && count(body.transactionId) === 1,
      );
    }
  } finally {
    server.close();
    server.closeAllConnections?.();
  }

  io.out(
    mismatches === 0
      ? `All ${step} scenarios answered as expected. Your receiver can do the same: see "Testing your endpoint" in the README.`
      : `${mismatches} answer(s) were not the expected ones.`,
  );
  return mismatches === 0 ? EXIT.OK : EXIT.FAILED;
}
