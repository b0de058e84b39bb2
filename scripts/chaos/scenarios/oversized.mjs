// Issue 12 defect 5: the 413 for an oversized body often never reached the
// sender: the socket was closed with unread data and the client saw a reset.
// Raw sockets, as clients that write their whole body without waiting for an
// early answer: some read while they write, some only once they are done.
// Loopback buffers absorb a few MiB, which hides the reset for small bodies,
// so some bodies overshoot the limit by 4 MiB: a receiver that stops reading
// and closes resets those senders; one that reads and discards up to a bound,
// or keeps reading after its answer until the client is done, does not. The
// handlers drain up to 8 MiB past the limit (the bound issue 12 asked for):
// senders overshooting by 16 MiB are beyond it and are counted, not held to
// the target, whether they read while writing or after; a sender that reads
// while writing still gets the 413 only when its reads win the race with the
// reset. Every sender within the bound must get 413.
import { randomBytes } from 'node:crypto';
import { DEFAULT_MAX_BODY_BYTES } from 'payhook';
import { pool, startReceiver } from '../harness.mjs';
import { rawSend } from '../net.mjs';

const MiB = 1_048_576;
const SIZES = [
  ['limit+1KiB', DEFAULT_MAX_BODY_BYTES + 1024],
  ['2x limit', 2 * DEFAULT_MAX_BODY_BYTES],
  ['limit+4MiB', DEFAULT_MAX_BODY_BYTES + 4 * MiB],
  ['limit+16MiB', DEFAULT_MAX_BODY_BYTES + 16 * MiB],
];

export const oversized = {
  id: '5',
  name: 'oversized',
  title:
    'bodies over the default maxBodyBytes on raw sockets (+1 KiB, 2x, +4 MiB, +16 MiB; declared or chunked; read during or after)',
  async run(ctx, pair, ledger) {
    const senders = ctx.quick ? 16 : 32;
    const receiver = await startReceiver({ ...pair, clients: ctx.clients, ledger });
    try {
      const outcomes = await pool(
        Array.from({ length: senders }, (_, i) => i),
        6,
        async (i) => {
          const [size, bytes] = SIZES[i % SIZES.length];
          const chunked = Math.floor(i / SIZES.length) % 2 === 1;
          const readFirst = Math.floor(i / (2 * SIZES.length)) % 2 === 0;
          const head =
            `POST /hook HTTP/1.1\r\nHost: ${receiver.host}\r\nContent-Type: application/json\r\n` +
            `x-api-timestamp: ${Date.now()}\r\nsignature: ${randomBytes(256).toString('base64')}\r\n` +
            (chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${bytes}\r\n`) +
            '\r\n';
          const id = `oversized-${i}`;
          ledger.sent(id, 'refuse');
          const result = await rawSend({ port: receiver.port, head, bodyBytes: bytes, chunked, readFirst });
          if (result.outcome === 'answered') ledger.answer(id, result.status);
          const held = bytes <= DEFAULT_MAX_BODY_BYTES + 4 * MiB;
          return { size, chunked, readFirst, held, ...result };
        },
      );
      const got413 = (o) => o.outcome === 'answered' && o.status === 413;
      const missed = outcomes.filter((o) => o.outcome !== 'answered');
      const other = outcomes.filter((o) => o.outcome === 'answered' && o.status !== 413);
      ledger.metric('received413', `${outcomes.filter(got413).length}/${senders}`);
      ledger.metric('resetOrClosed', missed.length);
      ledger.wrong(
        'oversized body: the sender saw a reset or close instead of the 413',
        missed.filter((o) => o.held).length,
      );
      ledger.wrong('oversized body answered with another status than 413', other.length);
      const describe = (o) =>
        `${o.size} ${o.chunked ? 'chunked' : 'Content-Length'} ${o.readFirst ? 'reading' : 'read-after'}: ${o.outcome}${o.error ? ` ${o.error}` : ''}`;
      const groups = new Map();
      for (const o of missed) groups.set(describe(o), (groups.get(describe(o)) ?? 0) + 1);
      for (const [what, count] of groups) ledger.note(`no 413 received: ${count}x ${what}`);
      if (other.length > 0) ledger.note(`other answers: ${[...new Set(other.map((o) => o.status))].join('/')}`);
    } finally {
      await receiver.close();
    }
  },
};
