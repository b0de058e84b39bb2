// The Redis store's claim against a scripted client: the first-claim check runs once, and a key gone between
// SET NX and GET is claimed on the second try.
import { describe, expect, it, vi } from 'vitest';
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

  it('sends the release after a lost SET reply again until Redis answers it (LOADING after a restart)', async () => {
    // The SET ran but its reply was lost; the restarted server answers LOADING to the first releases.
    const sent: string[][] = [];
    let releases = 0;
    const client = {
      sendCommand: (args: string[]): Promise<unknown> => {
        sent.push(args);
        if (args[0] === 'SET') return Promise.reject(new Error('Socket closed unexpectedly'));
        // The release script (EVAL script 1 key claimed:<token>): LOADING twice, then answered.
        if (args[0] === 'EVAL' && args[4] !== undefined && releases++ < 2) {
          return Promise.reject(new Error('LOADING Redis is loading the dataset in memory'));
        }
        return Promise.resolve(1);
      },
    };
    const store = createRedisStore({ client });
    await expect(store.claim('k', { leaseMs: 60_000 })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    const token = sent.find((args) => args[0] === 'SET')![2]!;
    const releasesSent = () => sent.filter((args) => args[0] === 'EVAL' && args[4] === token).length;
    await vi.waitFor(() => expect(releasesSent()).toBe(3), { timeout: 2_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(releasesSent()).toBe(3);
  });

  it('stops sending it once the claim would have expired, or when Redis refuses it', async () => {
    for (const [refusal, most] of [
      ['LOADING Redis is loading the dataset in memory', 4],
      ["NOPERM this user has no permissions to run the 'eval' command", 1],
    ] as const) {
      const sent: string[][] = [];
      const client = {
        sendCommand: (args: string[]): Promise<unknown> => {
          sent.push(args);
          if (args[0] === 'SET') return Promise.reject(new Error('Socket closed unexpectedly'));
          // The first-claim check passes; every release of the claim is refused.
          return args[4]?.startsWith('claimed:') ? Promise.reject(new Error(refusal)) : Promise.resolve(0);
        },
      };
      const store = createRedisStore({ client });
      await expect(store.claim('k', { leaseMs: 200 })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      const token = sent.find((args) => args[0] === 'SET')![2]!;
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      const releases = sent.filter((args) => args[0] === 'EVAL' && args[4] === token).length;
      // LOADING: at 0, 50, 150 ms (the next, at 350 ms, is past the 200 ms lease); a refusal: once.
      expect(releases, refusal).toBeGreaterThanOrEqual(1);
      expect(releases, refusal).toBeLessThanOrEqual(most);
    }
  });

  // A merchant's suite with fake setTimeout and the real clock: bounded by the clock, the chain never ended
  // (vitest aborted after 10,000 timers); bounded by its own pauses, it ends as with real timers.
  it('ends the retries under fake timers that leave the clock real', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const sent: string[][] = [];
      const client = {
        sendCommand: (args: string[]): Promise<unknown> => {
          sent.push(args);
          return args[0] === 'SET' || args[4]?.startsWith('claimed:')
            ? Promise.reject(new Error('Socket closed unexpectedly'))
            : Promise.resolve(0);
        },
      };
      const store = createRedisStore({ client });
      await expect(store.claim('k', { leaseMs: 60_000 })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      await vi.runAllTimersAsync();
      expect(vi.getTimerCount()).toBe(0);
      const token = sent.find((args) => args[0] === 'SET')![2]!;
      // 50, 100 … 800 ms, then 1 s apart (never longer) until the pauses add up to the 60 s lease: 64 sends.
      expect(sent.filter((args) => args[0] === 'EVAL' && args[4] === token)).toHaveLength(64);
    } finally {
      vi.useRealTimers();
    }
  });

  // release() itself can lose its reply: sent again as a claim's follow-up is, for as long as the handler's lease.
  it("sends release()'s own script again until Redis answers it", async () => {
    const sent: string[][] = [];
    const failures = [
      'Socket closed unexpectedly',
      'LOADING Redis is loading the dataset in memory',
      'LOADING Redis is loading the dataset in memory',
    ];
    const client = {
      sendCommand: (args: string[]): Promise<unknown> => {
        sent.push(args);
        const failure = args[0] === 'EVAL' && args[4] === 'claimed:t' ? failures.shift() : undefined;
        return failure === undefined ? Promise.resolve(1) : Promise.reject(new Error(failure));
      },
    };
    const store = createRedisStore({ client });
    await expect(store.release('k', 't')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    const releasesSent = () => sent.filter((args) => args[0] === 'EVAL' && args[4] === 'claimed:t').length;
    await vi.waitFor(() => expect(releasesSent()).toBe(4), { timeout: 2_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(releasesSent()).toBe(4);
  });

  // A script's key is its fourth argument: a foreign value there is named by its key, as GET's and SET's are.
  it('names the key of a script that meets a value of another type (WRONGTYPE)', async () => {
    const client = {
      sendCommand: (args: string[]): Promise<unknown> =>
        args[0] === 'EVAL' && args[3] === 'payhook:k'
          ? Promise.reject(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'))
          : Promise.resolve(0),
    };
    const store = createRedisStore({ client });
    await expect(store.complete('k', 't', { retentionMs: 1_000 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('The Redis key "payhook:k" holds a value payhook did not write'),
    });
  });
});
