// Issue 12 defect 6: a body with a byte-order mark was refused as text but
// accepted as bytes; a 500 answer echoed the merchant's exception text to the
// sender; nothing was logged by default on a 401 or a 500.
import { randomBytes } from 'node:crypto';
import { verifyWebhook } from 'payhook';
import { createTestWebhook, TEST_KEY_PAIR } from 'payhook/testing';
import { deliver, send, sign, startReceiver, verdictOf } from '../harness.mjs';
import { post, sleep } from '../net.mjs';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

async function direct(signed, body) {
  const result = await verifyWebhook(
    { method: signed.method, url: signed.url, headers: signed.headers, body },
    { publicKeys: TEST_KEY_PAIR.publicKey },
  );
  return result.ok ? 'ok' : result.error.code;
}

/** Runs `task` with everything written to the console and the standard streams captured (not shown). */
async function captureOutput(task) {
  const lines = [];
  const saved = { stdout: process.stdout.write, stderr: process.stderr.write };
  const methods = ['log', 'info', 'warn', 'error', 'debug'];
  const savedConsole = Object.fromEntries(methods.map((name) => [name, console[name]]));
  process.stdout.write = process.stderr.write = (chunk, ...rest) => {
    lines.push(String(chunk));
    const callback = rest.find((arg) => typeof arg === 'function');
    callback?.();
    return true;
  };
  for (const name of methods) console[name] = (...args) => lines.push(args.map(String).join(' '));
  try {
    await task(lines);
  } finally {
    process.stdout.write = saved.stdout;
    process.stderr.write = saved.stderr;
    Object.assign(console, savedConsole);
  }
  return lines;
}

export const bomAnd500 = {
  id: '6',
  name: 'bom-500-log',
  title: 'BOM body as text/bytes/HTTP, exception text in a 500 answer, default logging of a 401 and a 500',
  async run(ctx, pair, ledger) {
    const secret = `chaos-secret-${randomBytes(6).toString('hex')}`;
    let leakId;
    let thrown = false;
    const receiver = await startReceiver({
      ...pair,
      clients: ctx.clients,
      ledger,
      work(webhook) {
        if (webhook.id === leakId && !thrown) {
          thrown = true;
          throw new Error(`db down (${secret})`);
        }
      },
    });
    try {
      // BOM: one verdict whichever way the body arrives.
      const bomBody = createTestWebhook();
      ledger.sent(bomBody.id, 'either');
      const signed = await sign(receiver, bomBody);
      const bytes = Buffer.concat([BOM, Buffer.from(signed.body)]);
      const asText = await direct(signed, `\uFEFF${signed.body}`);
      const asBytes = await direct(signed, new Uint8Array(bytes));
      const overHttp = verdictOf(await send(receiver, ledger, bomBody.id, signed, { body: bytes }));
      ledger.note(`BOM verdicts: text ${asText}, bytes ${asBytes}, HTTP ${overHttp}`);
      if (new Set([asText, asBytes, overHttp]).size > 1)
        ledger.wrong('a BOM body gets different verdicts as text, bytes and over HTTP');

      // 500: the answer must not carry the merchant's exception text.
      const leaky = createTestWebhook();
      leakId = leaky.id;
      const answers = await deliver(receiver, ledger, leaky, { attempts: 10 });
      const [first] = answers;
      if (first.status !== 500) ledger.note(`a throwing onPayment was answered ${first.status}`);
      if (first.text.includes(secret)) ledger.wrong('a 500 answer carries the exception text of onPayment');

      // Default logging: a receiver with no logger option.
      const quiet = await startReceiver({
        ...pair,
        clients: ctx.clients,
        ledger,
        defaults: true,
        work() {
          throw new Error('db down');
        },
      });
      try {
        const failing = createTestWebhook();
        ledger.sent(failing.id, 'either');
        const failingSigned = await sign(quiet, failing);
        const unsigned = { ...failingSigned.headers, signature: randomBytes(256).toString('base64') };
        let on401 = [];
        let on500 = [];
        await captureOutput(async (lines) => {
          const answer = await post({
            port: quiet.port,
            path: '/hook',
            headers: unsigned,
            body: failingSigned.body,
            agent: quiet.agent,
          });
          await sleep(50);
          on401 = lines.splice(0);
          on401.unshift(`(${answer.status})`);
          await send(quiet, ledger, failing.id, failingSigned);
          await sleep(50);
          on500 = lines.splice(0);
        });
        ledger.note(`default logging: ${on401.length - 1} line(s) on a ${on401[0]} refusal, ${on500.length} on a 500`);
        if (on401.length <= 1) ledger.fail('nothing is logged by default when a delivery is refused (401)');
        if (on500.length === 0) ledger.fail('nothing is logged by default when onPayment throws (500)');
      } finally {
        await quiet.close();
      }
    } finally {
      await receiver.close();
    }
  },
};
