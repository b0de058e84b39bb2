// The numbers createRedisStore puts on the wire: plain positive integers,
// whatever the caller's leaseMs / retentionMs look like. A fake client
// captures every command (no server needed to see the arguments).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/redis/index.js';

function capturing() {
  const commands: string[][] = [];
  const client = {
    sendCommand: (args: string[]): Promise<unknown> => {
      commands.push(args);
      return Promise.resolve(args[0] === 'SET' ? 'OK' : 1);
    },
  };
  return { commands, store: createRedisStore({ client }) };
}

const PLAIN_INTEGER = /^[1-9]\d*$/;

// Bun's RedisClient has send(command, args), neither call() nor sendCommand(): docs/stores.md shows its wrapper.
describe('a Redis client of another shape', () => {
  it('is refused with a message that points at the wrapper, and works wrapped as docs/stores.md shows', async () => {
    const sent: Array<[string, string[]]> = [];
    const redis = {
      send: (command: string, args: string[]): Promise<unknown> => {
        sent.push([command, args]);
        return Promise.resolve(command === 'SET' ? 'OK' : 1);
      },
    };
    expect(() => createRedisStore({ client: redis as never })).toThrow(
      expect.objectContaining({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining("payhook's docs/stores.md"),
      }),
    );
    const store = createRedisStore({ client: { sendCommand: (args) => redis.send(args[0]!, args.slice(1)) } });
    expect(await store.claim('k', { leaseMs: 1000 })).toMatchObject({ status: 'claimed' });
    // The command apart from its arguments, as Bun's send takes them.
    expect(sent.length).toBeGreaterThan(0);
    for (const [command, args] of sent) {
      expect(['SET', 'EVAL']).toContain(command);
      expect(args.some((arg) => arg.endsWith('k'))).toBe(true);
    }
  });
});

describe('Redis numeric arguments', () => {
  it('sends huge and fractional durations as plain integers (rounded up), never 1e+21 or 1.5', async () => {
    const { commands, store } = capturing();
    const claim = await store.claim('k', { leaseMs: 1.5 });
    expect(commands.at(-1)?.slice(-2)).toEqual(['PX', '2']);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await store.complete('k', claim.token, { retentionMs: 2 ** 51 + 0.5 });
    expect(commands.at(-1)?.at(-1)).toBe('2251799813685249');
    await store.complete('k', claim.token, { retentionMs: 1e15 });
    expect(commands.at(-1)?.at(-1)).toBe('1000000000000000');
    await store.complete('k', claim.token, { retentionMs: Infinity });
    expect(commands.at(-1)?.at(-1)).toBe('inf');
  });

  it('refuses durations Redis cannot take as INVALID_ARGUMENT, before sending anything', async () => {
    const { commands, store } = capturing();
    for (const leaseMs of [1e21, Number.MAX_SAFE_INTEGER + 2, 0, -1, Number.NaN, Infinity]) {
      await expect(store.claim('k', { leaseMs }), String(leaseMs)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    for (const retentionMs of [1e21, 2 ** 60, 0, -5, Number.NaN]) {
      await expect(store.complete('k', 'token', { retentionMs }), String(retentionMs)).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
    }
    expect(commands).toEqual([]);
  });

  it('every accepted duration goes out as the integer ceiling of its value', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.double({ min: Number.MIN_VALUE, max: Number.MAX_SAFE_INTEGER - 1, noNaN: true }),
        async (ms) => {
          const { commands, store } = capturing();
          const claim = await store.claim('k', { leaseMs: ms });
          if (claim.status !== 'claimed') return false;
          await store.complete('k', claim.token, { retentionMs: ms });
          const sent = [commands.at(-2)?.at(-1), commands.at(-1)?.at(-1)]; // SET, then EVAL (complete)
          return sent.every(
            (value) => value !== undefined && PLAIN_INTEGER.test(value) && Number(value) === Math.ceil(ms),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
