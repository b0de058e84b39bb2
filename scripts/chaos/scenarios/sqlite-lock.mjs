// Issue 23 defect 5: with the documented busy_timeout of 5 s, a SQLite file
// held by another process froze the whole receiver (the drivers are
// synchronous: a plain GET took 3 s) and the waiting deliveries got 200
// rather than 503. Here a receiver on Node 24's node:sqlite (see
// ../sqlite-receiver.mjs), opened as docs/sqlite.md says, while another
// process holds the file in one EXCLUSIVE transaction for 3 s (twice in the
// full run), valid deliveries arriving all along and retried as the service
// does. Judged always: nothing answered 200 while the file was held (each
// such delivery 503 STORE_UNAVAILABLE), every delivery handled exactly once
// once it is free. Measured, and judged in the full run only: the slowest
// answer to the receiver's other requests (a plain GET, a forged delivery)
// and to a delivery, against storeTimeoutMs + 50 ms.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createTestWebhook } from 'payhook/testing';
import { runtimeBinary } from '../../lib/runtime-binaries.mjs';
import { send, sign, verdictOf, waitFor } from '../harness.mjs';
import { judgeTiming } from '../report.mjs';
import { createAgent, HOST, sleep } from '../net.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const HOLD_MS = 3_000;
// Below the hold, so a receiver that waited inside the driver misses the
// bound; payhook/sqlite's own busyTimeoutMs (1 s by default) is below it.
const STORE_TIMEOUT_MS = 1_500;

/** Starts `args` in Node 24; resolves the child and a way to wait for a line of its output. */
function node24(args) {
  const child = spawn(runtimeBinary('node24').path, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const waiters = [];
  const onLine = [];
  let pending = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop();
    for (const line of lines) {
      for (const listener of onLine) listener(line);
      for (const waiter of [...waiters]) {
        const match = waiter.pattern.exec(line);
        if (match) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve({ match, at: performance.now() });
        }
      }
    }
  });
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const line = (pattern, timeoutMs = 30_000) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${output}`)), timeoutMs);
      const waiter = {
        pattern,
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value);
        },
      };
      waiters.push(waiter);
      exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`exited before ${pattern}:\n${output}`));
      });
    });
  return { child, line, onLine, exited, output: () => output };
}

/** GET /health, which the receiver's server answers itself: `{ status }` (0 when it failed). */
async function getHealth(port) {
  try {
    const response = await fetch(`http://${HOST}:${port}/health`, { signal: globalThis.AbortSignal.timeout(10_000) });
    await response.text();
    return { status: response.status };
  } catch {
    return { status: 0 };
  }
}

export const sqliteLock = {
  id: '11',
  name: 'sqlite-lock',
  title:
    'a SQLite file held by another process for 3 s (node:sqlite on Node 24), deliveries and other requests flowing',
  // Its own receiver, in its own process: none of the run's servers and stores.
  targets: [{ server: 'node', store: 'sqlite' }],
  async run(ctx, pair, ledger) {
    const episodes = ctx.quick ? 1 : 2;
    const directory = mkdtempSync(join(tmpdir(), 'payhook-chaos-sqlite-'));
    const file = join(directory, 'payhook.sqlite');
    const process24 = node24([join(root, 'scripts', 'chaos', 'sqlite-receiver.mjs'), file, String(STORE_TIMEOUT_MS)]);
    process24.onLine.push((line) => {
      if (line.startsWith('handled ')) ledger.handled(line.slice('handled '.length));
    });
    const agent = createAgent();
    try {
      const { match } = await process24.line(/^listening (\d+)$/);
      const port = Number(match[1]);
      const receiver = { port, host: `${HOST}:${port}`, url: `http://${HOST}:${port}/hook`, agent };
      const timed = async (request) => {
        const sent = performance.now();
        const answer = await request();
        return { ...answer, sent, at: performance.now() };
      };
      const deliverTimed = async (webhook, answers, stopAt) => {
        ledger.sent(webhook.id, 'handle');
        for (;;) {
          const signed = await sign(receiver, webhook);
          const answer = await timed(() => send(receiver, ledger, webhook.id, signed, { timeoutMs: 10_000 }));
          answers.push(answer);
          if (answer.status === 200 || performance.now() > stopAt) return;
          await sleep(150);
        }
      };
      // Warm: key import, the first statements.
      await deliverTimed(createTestWebhook(), [], performance.now() + 5_000);

      const others = [];
      const held = [];
      let answered = 0;
      for (let episode = 0; episode < episodes; episode++) {
        const lock = node24([join(root, 'test', 'sqlite', 'lock.mjs'), file, String(HOLD_MS)]);
        await lock.line(/^locked$/);
        let free = false;
        const unlocking = lock.line(/^unlocking$/, HOLD_MS + 10_000).then(({ at }) => {
          free = true;
          return at;
        });
        const answers = [];
        const sending = [];
        const probing = (async () => {
          while (!free) {
            const forged = createTestWebhook();
            ledger.sent(forged.id, 'refuse');
            const signed = await sign(receiver, forged);
            const signature = signed.headers.signature.split('').reverse().join('');
            const [health, refused] = await Promise.all([
              timed(() => getHealth(port)),
              timed(() => send(receiver, ledger, forged.id, signed, { headers: { ...signed.headers, signature } })),
            ]);
            if (health.status !== 200) ledger.wrong(`GET /health answered ${health.status} while the file was held`);
            if (refused.status !== 401) ledger.wrong(`a forged delivery answered ${refused.status}, not 401`);
            others.push(health, refused);
            await sleep(50);
          }
        })();
        const stopAt = performance.now() + HOLD_MS + 20_000;
        while (!free) {
          sending.push(deliverTimed(createTestWebhook(), answers, stopAt));
          await sleep(100);
        }
        const unlockedAt = await unlocking;
        await Promise.all([probing, ...sending]);
        await lock.exited;
        const whileHeld = answers.filter((answer) => answer.at < unlockedAt);
        held.push(...whileHeld);
        answered += answers.length;
        for (const answer of whileHeld) {
          const verdict = verdictOf(answer);
          if (verdict !== 'STORE_UNAVAILABLE') ledger.wrong(`a delivery answered ${verdict} while the file was held`);
        }
        if (whileHeld.length < 5)
          ledger.fail(`only ${whileHeld.length} deliveries were answered while the file was held`);
      }
      // onPayment's lines may trail the last answers.
      await waitFor(
        () => [...ledger.entries.values()].every((entry) => entry.expect !== 'handle' || entry.handled > 0),
        2_000,
      );
      const slowestOther = Math.max(0, ...others.map((answer) => answer.at - answer.sent));
      const slowestHeld = Math.max(0, ...held.map((answer) => answer.at - answer.sent));
      ledger.metric('storeTimeoutMs', STORE_TIMEOUT_MS);
      ledger.metric('slowestOtherMs', Math.round(slowestOther));
      ledger.metric('slowest503Ms', Math.round(slowestHeld));
      ledger.metric('answeredWhileHeld', `${held.length} (all 503: ${held.every((a) => a.status === 503)})`);
      ledger.metric('deliveryAnswers', answered);
      for (const [what, ms] of [
        ['the slowest answer to another request', slowestOther],
        ['the slowest 503 to a delivery', slowestHeld],
      ]) {
        if (ms <= STORE_TIMEOUT_MS + 50) continue;
        judgeTiming(
          ctx,
          ledger,
          `${what} while the file was held took ${Math.round(ms)} ms, over storeTimeoutMs + 50 ms`,
        );
      }
    } finally {
      agent.destroy();
      process24.child.kill('SIGKILL');
      await process24.exited;
      rmSync(directory, { recursive: true, force: true });
    }
  },
};
