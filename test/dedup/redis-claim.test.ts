// The Redis store's claim against a scripted client: the first-claim check runs once, and a key gone between
// SET NX and GET is claimed on the second try.
import { describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/redis/index.js';

/** A client that answers each command from `replies` (by command name, in turn), recording what it was sent. */
function scripted(replies: Record<string, unknown[]>) {
  const sent: string[][] = [];
  const client = {
    sendCommand: (args: string[]): Promise<unknown> => {
      sent.push(args);
      const queue = replies[args[0]!] ?? [];
      return Promise.resolve(queue.length > 0 ? queue.shift() : 1);
    },
  };
  return { sent, store: createRedisStore({ client }) };
}

describe('Redis store claim', () => {
  it('runs the first-claim check script once, not before every claim', async () => {
    const { sent, store } = scripted({ SET: ['OK', 'OK', 'OK'] });
    for (const key of ['a', 'b', 'c']) expect((await store.claim(key, { leaseMs: 1_000 })).status).toBe('claimed');
    expect(sent.filter((args) => args[0] === 'EVAL')).toHaveLength(1);
  });

  it('tries again when the key it found taken is gone by the GET (expired or released in between)', async () => {
    // SET NX finds the key taken; GET finds it gone; the second SET NX takes it.
    const { store } = scripted({ SET: [null, 'OK'], GET: [null] });
    expect((await store.claim('k', { leaseMs: 1_000 })).status).toBe('claimed');
  });
});
