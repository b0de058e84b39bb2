// Issue 12 defect 5: the 413 for an oversized body often never reached the
// sender: the socket was closed with unread data and the client saw a reset.
// Raw sockets, as a client that writes its whole body before reading.
import { randomBytes } from 'node:crypto';
import { DEFAULT_MAX_BODY_BYTES } from 'payhook';
import { pool, startReceiver } from '../harness.mjs';
import { rawSend } from '../net.mjs';

export const oversized = {
  id: '5',
  name: 'oversized',
  title: 'bodies of twice the default maxBodyBytes over raw sockets (declared length and chunked)',
  async run(ctx, pair, ledger) {
    const senders = ctx.quick ? 16 : 32;
    const receiver = await startReceiver({ ...pair, clients: ctx.clients, ledger });
    try {
      const bytes = 2 * DEFAULT_MAX_BODY_BYTES;
      const outcomes = await pool(Array.from({ length: senders }, (_, i) => i), 8, async (i) => {
        const chunked = i % 2 === 1;
        const head =
          `POST /hook HTTP/1.1\r\nHost: ${receiver.host}\r\nContent-Type: application/json\r\n` +
          `x-api-timestamp: ${Date.now()}\r\nsignature: ${randomBytes(256).toString('base64')}\r\n` +
          (chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${bytes}\r\n`) +
          '\r\n';
        const id = `oversized-${i}`;
        ledger.sent(id, 'refuse');
        const result = await rawSend({ port: receiver.port, head, bodyBytes: bytes, chunked });
        if (result.outcome === 'answered') ledger.answer(id, result.status);
        return { chunked, ...result };
      });
      const got413 = outcomes.filter((o) => o.outcome === 'answered' && o.status === 413);
      const other = outcomes.filter((o) => o.outcome === 'answered' && o.status !== 413);
      const missed = outcomes.filter((o) => o.outcome !== 'answered');
      ledger.metric('received413', `${got413.length}/${senders}`);
      ledger.metric('resetOrClosed', missed.length);
      ledger.wrong('oversized body: the sender saw a reset or close instead of the 413', missed.length);
      ledger.wrong('oversized body answered with another status than 413', other.length);
      const kinds = (list) => `${list.filter((o) => !o.chunked).length} declared/${list.filter((o) => o.chunked).length} chunked`;
      if (missed.length > 0) ledger.note(`no 413 received: ${kinds(missed)} (${[...new Set(missed.map((o) => o.outcome + (o.error ? ` ${o.error}` : '')))].join(', ')})`);
      if (other.length > 0) ledger.note(`other answers: ${[...new Set(other.map((o) => o.status))].join('/')}`);
    } finally {
      await receiver.close();
    }
  },
};
