// A SQLite file held by another process for 3 s (one EXCLUSIVE transaction),
// under a whole receiver on every runtime payhook/sqlite claims, opened as
// the guide says (WAL, the driver's busy_timeout left at 0), and in SQLite's
// default rollback-journal mode too, where the holder blocks even reads. The drivers are synchronous, so a wait
// inside them would stop every request of the receiver: the receiver must
// keep answering its other requests within storeTimeoutMs + 50 ms, answer
// deliveries 503 STORE_UNAVAILABLE while the file is held (never 200), and
// handle each exactly once when the service retries after it is free.
import { afterAll, describe, expect, it } from 'vitest';
import { PUBLIC_KEY, signDelivery, webhookBody } from '../helpers/sign.js';
import { databaseFile, lockFile, startReceiver, type RunningProcess, type Runtime } from './runtimes.js';

const HOLD_MS = 3_000;
// Shorter than the hold, so a receiver that waited inside the driver would
// miss the bound; the store's own busyTimeoutMs (1 s by default) is below it.
const STORE_TIMEOUT_MS = 1_500;

interface Answer {
  status: number;
  code?: string | undefined;
  /** performance.now() when the request was sent and when its answer arrived. */
  sent: number;
  at: number;
}

async function timed(url: string, init?: RequestInit): Promise<Answer> {
  const sent = performance.now();
  const response = await fetch(url, init);
  const text = await response.text();
  const at = performance.now();
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { code?: string }).code;
  } catch {
    // not JSON
  }
  return { status: response.status, code, sent, at };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const cases: Array<[Runtime, 'wal' | 'delete']> = [
  ['node22', 'wal'],
  ['node24', 'wal'],
  ['deno', 'wal'],
  ['bun', 'wal'],
  ['node24', 'delete'],
  ['bun', 'delete'],
];

describe('a SQLite file held by another process', () => {
  const running: RunningProcess[] = [];
  afterAll(async () => {
    await Promise.all(running.map((process) => process.kill()));
  });

  for (const [runtime, journalMode] of cases) {
    it(`keeps the receiver answering and answers deliveries 503 until it is free (${runtime}, ${journalMode} journal)`, async () => {
      const file = databaseFile();
      const receiver = await startReceiver(runtime, file, journalMode, {
        publicKeys: PUBLIC_KEY,
        storeTimeoutMs: STORE_TIMEOUT_MS,
      });
      running.push(receiver);
      const base = `http://127.0.0.1:${receiver.port}`;
      const host = `127.0.0.1:${receiver.port}`;
      const post = (body: Record<string, unknown>) => {
        const signed = signDelivery(body, { host, target: '/hook' });
        return timed(`${base}/hook`, { method: 'POST', headers: signed.headers, body: signed.body });
      };
      // Warm: the key import and the first statements.
      expect((await post(webhookBody())).status).toBe(200);

      const lock = lockFile(file, HOLD_MS);
      const heldAt = await lock.held;
      let free = false;
      const unlocking = lock.unlocking.then((at) => {
        free = true;
        return at;
      });

      // The service: a new delivery every 150 ms while the file is held, each
      // retried every 150 ms until it is answered 200.
      const deliveries: Array<{ id: string; answers: Answer[] }> = [];
      const deliver = async (body: Record<string, unknown>) => {
        const delivery = { id: String(body.id), answers: [] as Answer[] };
        deliveries.push(delivery);
        for (let attempt = 0; attempt < 60; attempt++) {
          const answer = await post(body);
          delivery.answers.push(answer);
          if (answer.status === 200) return;
          await sleep(150);
        }
      };
      // Other requests: a plain GET the server answers itself, and a forged
      // delivery the handler refuses before the store, every 50 ms.
      const others: Answer[] = [];
      const probe = async () => {
        while (!free) {
          const forged = signDelivery(webhookBody(), { host, target: '/hook' });
          const [health, refused] = await Promise.all([
            timed(`${base}/health`),
            timed(`${base}/hook`, {
              method: 'POST',
              headers: { ...forged.headers, signature: forged.headers.signature!.split('').reverse().join('') },
              body: forged.body,
            }),
          ]);
          expect(health.status).toBe(200);
          expect(refused.status).toBe(401);
          others.push(health, refused);
          await sleep(50);
        }
      };
      const sending: Array<Promise<void>> = [];
      const probing = probe();
      while (!free) {
        sending.push(deliver(webhookBody()));
        await sleep(150);
      }
      const unlockedAt = await unlocking;
      await Promise.all([probing, ...sending]);
      await lock.exited;

      const slowest = Math.max(...others.map((answer) => answer.at - answer.sent));
      expect(others.length, `${others.length} answers to other requests`).toBeGreaterThan(20);
      expect(slowest).toBeLessThanOrEqual(STORE_TIMEOUT_MS + 50);

      const answers = deliveries.flatMap((delivery) => delivery.answers);
      const whileHeld = answers.filter((answer) => answer.at < unlockedAt);
      // Deliveries ran into the lock, and each was refused, none accepted.
      expect(whileHeld.length).toBeGreaterThan(5);
      for (const answer of whileHeld) {
        const when = `sent ${Math.round(answer.sent - heldAt)} ms after the lock, answered ${Math.round(answer.at - answer.sent)} ms later; unlocking at ${Math.round(unlockedAt - heldAt)} ms`;
        expect({ status: answer.status, code: answer.code }, when).toEqual({ status: 503, code: 'STORE_UNAVAILABLE' });
        expect(answer.at - answer.sent, when).toBeLessThanOrEqual(STORE_TIMEOUT_MS + 50);
      }
      // Once free, every delivery was handled, exactly once.
      for (const delivery of deliveries) expect(delivery.answers.at(-1)?.status, delivery.id).toBe(200);
      const handled = (await (await fetch(`${base}/handled`)).json()) as Record<string, number>;
      for (const delivery of deliveries) expect(handled[delivery.id], delivery.id).toBe(1);
      await receiver.kill();
    }, 60_000);
  }
});
