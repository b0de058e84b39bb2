/**
 * Entry `payhook/redis`: a Redis {@link DedupStore} for merchants that run
 * more than one process. It takes your Redis client as it is — `ioredis` or
 * `redis` (node-redis) — through a minimal structural type, so payhook
 * depends on neither.
 *
 * @module
 */
import type { ClaimOptions, ClaimResult, CompleteOptions, DedupStore } from '../dedup/store.js';
import { storedKey } from '../dedup/stored-key.js';
import { checkKey, checkLease, checkRetention, checkToken, DEFAULT_LEASE_MS, newClaimToken } from '../dedup/token.js';
import { PayhookError } from '../errors.js';
import { describeError } from '../lib/misuse.js';

export type { ClaimOptions, ClaimResult, CompleteOptions, DedupStore } from '../dedup/store.js';

/**
 * The slice of an `ioredis` client (`Redis` or `Cluster`) payhook uses: the
 * generic `call(command, ...args)`.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import type { IoRedisLike } from 'payhook/redis';
 *
 * const client: IoRedisLike = new Redis(process.env.REDIS_URL!);
 * ```
 */
export interface IoRedisLike {
  call(command: string, ...args: string[]): Promise<unknown>;
}

/**
 * The slice of a `redis` (node-redis v4 and later) client payhook uses: the
 * generic `sendCommand(args)`. Any other client fits through a one-line
 * adapter: `{ sendCommand: (args) => myClient.raw(args) }`.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * import type { NodeRedisLike } from 'payhook/redis';
 *
 * const client: NodeRedisLike = await createClient({ url: process.env.REDIS_URL ?? 'redis://localhost:6379' })
 *   .on('error', (error) => console.error('Redis client:', error)) // without it, a lost connection ends the process
 *   .connect();
 * ```
 */
export interface NodeRedisLike {
  sendCommand(args: string[]): Promise<unknown>;
}

/**
 * A `redis` (node-redis v4 and later) cluster client (`createCluster`), told
 * apart by its `masters`: payhook calls its
 * `sendCommand(firstKey, isReadonly, args)`, where the key picks the node.
 * (`sendCommand` is typed loosely so that an adapter written as
 * `{ sendCommand: (args) => … }` still reads `args` as `string[]`.)
 *
 * @example
 * ```ts
 * import { createCluster } from 'redis';
 * import type { NodeRedisClusterLike } from 'payhook/redis';
 *
 * const cluster = createCluster({ rootNodes: [{ url: process.env.REDIS_URL ?? 'redis://localhost:6379' }] });
 * cluster.on('error', (error) => console.error('Redis cluster:', error)); // without it, an outage ends the process
 * await cluster.connect(); // v4 resolves nothing, v5 the cluster: pass the cluster itself
 * const client: NodeRedisClusterLike = cluster;
 * ```
 */
export interface NodeRedisClusterLike {
  readonly masters: unknown;
  readonly sendCommand: object;
}

/**
 * A `redis` (node-redis v5 and later) Sentinel client (`createSentinel`),
 * told apart by its `getMasterNode`: payhook calls its
 * `sendCommand(isReadonly, args)` with `isReadonly` false, so every command
 * goes to the master. (`sendCommand` is typed loosely, as in
 * {@link NodeRedisClusterLike}.)
 *
 * @example
 * ```ts
 * import { createSentinel } from 'redis';
 * import type { NodeRedisSentinelLike } from 'payhook/redis';
 *
 * const client: NodeRedisSentinelLike = await createSentinel({
 *   name: 'mymaster',
 *   sentinelRootNodes: [{ host: '127.0.0.1', port: 26379 }],
 * })
 *   .on('error', (error) => console.error('Redis Sentinel:', error)) // without it, an outage ends the process
 *   .connect();
 * ```
 */
export interface NodeRedisSentinelLike {
  readonly getMasterNode: unknown;
  readonly sendCommand: object;
}

/**
 * A Redis client payhook can use: an `ioredis` client (`Redis` or
 * `Cluster`), a `redis` (node-redis) client, cluster client or Sentinel
 * client, or any object with `sendCommand(args: string[])`
 * that sends one command and resolves its reply.
 *
 * @example
 * ```ts
 * import type { RedisClientLike } from 'payhook/redis';
 *
 * declare const myClient: { command(args: string[]): Promise<unknown> }; // another Redis client
 * const adapter: RedisClientLike = { sendCommand: (args) => myClient.command(args) };
 * ```
 */
export type RedisClientLike = IoRedisLike | NodeRedisLike | NodeRedisClusterLike | NodeRedisSentinelLike;

/**
 * Options of {@link createRedisStore}.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import type { RedisStoreOptions } from 'payhook/redis';
 *
 * const redis = new Redis(process.env.REDIS_URL!);
 * const options: RedisStoreOptions = { client: redis, prefix: 'shop:payhook:' };
 * ```
 */
export interface RedisStoreOptions {
  /** A connected `ioredis` or `redis` client (see {@link RedisClientLike}). */
  client: RedisClientLike;
  /**
   * Prepended to every key, so several apps can share one database. End it
   * with a separator, as the default does: with `'shop'` and `'shop1'`, one
   * app's key `1234_DEBIT:SUCCEEDED` and the other's `234_DEBIT:SUCCEEDED`
   * would be one Redis key.
   * @defaultValue `'payhook:'`
   */
  prefix?: string;
}

const COMPLETED = 'completed';
const CLAIMED = 'claimed:';

// Both scripts read the key and act only on the caller's own claim, in one
// atomic step: a worker whose lease expired and was re-claimed by another can
// neither complete nor release that other worker's claim.
const COMPLETE_SCRIPT = `local v = redis.call('GET', KEYS[1])
if v == ARGV[1] or not v then
  if ARGV[2] == 'inf' then redis.call('SET', KEYS[1], '${COMPLETED}')
  else redis.call('SET', KEYS[1], '${COMPLETED}', 'PX', ARGV[2]) end
  return 1
end
return 0`;

// Redis 7 runs a script flagged allow-oom at maxmemory: a completion refused there (an OOM error, as its SET can
// grow memory) would be forgotten once the claim's lease ends, and a copy retried after it handled again. Other
// servers (Redis 6, KeyDB, Dragonfly) cannot compile a script's flag line: the first claim's check finds out.
const ALLOW_OOM = '#!lua flags=allow-oom\n';

const RELEASE_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0`;

// A reply that no retry will change: the user may not run the command (an
// ACL such as -@scripting; inside a script an ERR, worded by Redis 6 as
// "Error running script … can't run / can't access", by 7.0 as "The user
// executing the script can't …", by 7.2 and Valkey as "ACL failure in
// script"), or the server does not have it (a Redis-compatible service
// without EVAL), or a node of a Redis Cluster redirects a plain client that
// cannot follow (MOVED, ASK). Misconfiguration, not an outage.
const REFUSED =
  /^(?:NOPERM|ERR (?:The user executing the script can't|ACL failure in script|Error running script\b.*\bcan't (?:run|access)|unknown command)|(MOVED|ASK) )/s;

// The first claim's check: every command the scripts call, on a key under the prefix that no delivery has (the
// store writes a key holding a NUL as its JSON literal), so an ACL that leaves one out fails before any payment.
const CHECK_SCRIPT = `redis.call('GET', KEYS[1])
redis.call('DEL', KEYS[1])
return 1`;

type Send = (args: string[]) => Promise<unknown>;

const decoder = new TextDecoder();

/** A reply as text (bytes from a client set to return Buffers decoded), or `null` for none. */
function replyText(what: string, reply: unknown): string | null {
  if (reply === null || typeof reply === 'string') return reply;
  if (reply instanceof Uint8Array) return decoder.decode(reply);
  throw new PayhookError(
    'INVALID_ARGUMENT',
    `Redis ${what} resolved ${reply === undefined ? 'undefined (a node-redis client in legacy mode?)' : `a ${typeof reply}`}, not its reply: give the client itself, or an adapter that resolves the reply unchanged.`,
  );
}

function commandSender(client: RedisClientLike): Send {
  if (typeof client !== 'object' || client === null) {
    throw new PayhookError(
      'INVALID_ARGUMENT',
      'createRedisStore needs { client }: an ioredis or redis (node-redis) client.',
    );
  }
  // ioredis has both `call` and a lower-level `sendCommand(Command)`: prefer `call`.
  if (typeof (client as IoRedisLike).call === 'function') {
    const io = client as IoRedisLike;
    return (args) => io.call(args[0] as string, ...args.slice(1));
  }
  if (typeof (client as NodeRedisLike).sendCommand === 'function') {
    const nodeRedis = client as unknown as { sendCommand(...args: unknown[]): Promise<unknown> };
    // A node-redis cluster (createCluster): its sendCommand takes the key
    // that picks the node first. Each command here names at most one key:
    // SET/GET's first argument, EVAL's fourth (after the script and `1`).
    if ('masters' in client)
      return (args) => nodeRedis.sendCommand(args[0] === 'EVAL' ? args[3] : args[1], false, args);
    // A node-redis Sentinel client (createSentinel): isReadonly first, false for the master.
    if ('getMasterNode' in client) return (args) => nodeRedis.sendCommand(false, args);
    return (args) => nodeRedis.sendCommand(args);
  }
  throw new PayhookError(
    'INVALID_ARGUMENT',
    "The Redis client has neither call() (ioredis) nor sendCommand() (redis / node-redis): wrap it as payhook's docs/stores.md shows.",
  );
}

/**
 * A duration as Redis reads it: a plain positive integer. `String(ms)` would
 * send `1e+21` for a huge value, or `1.5` for a fractional one, and Redis
 * refuses both (so every claim or complete would fail); fractions round up.
 */
function milliseconds(name: 'leaseMs' | 'retentionMs', ms: number): string {
  const whole = Math.ceil(ms);
  if (!(whole >= 1 && whole <= Number.MAX_SAFE_INTEGER)) {
    throw new PayhookError(
      'INVALID_ARGUMENT',
      `${name} must be a number of milliseconds from 1 to ${Number.MAX_SAFE_INTEGER}${name === 'retentionMs' ? ' (or Infinity)' : ''}, not ${ms}.`,
    );
  }
  return whole.toFixed(0);
}

/**
 * Creates a Redis {@link DedupStore}, for receivers that run several
 * processes or instances (each sees every other's claims).
 *
 * - `claim`: `SET <prefix><key> claimed:<token> NX PX <leaseMs>` — atomic; if
 *   the key exists, one `GET` tells a running claim from a completed one.
 * - `complete` and `release`: a short Lua script (`EVAL`) that acts only when
 *   the key still holds the caller's own token (complete also when the claim
 *   has expired and nobody re-took it). Completed keys expire after
 *   `retentionMs` (`PX`), so the database does not grow without bound.
 *
 * A key that UTF-8 cannot carry as it is (a lone surrogate), or one holding a
 * NUL or starting with `"`, is stored as its JSON literal, so distinct keys
 * stay distinct (clients would turn a lone surrogate into U+FFFD).
 *
 * Works with `ioredis` (through `call`) and with `redis` / node-redis v4 and
 * later (through `sendCommand`; its cluster and Sentinel clients too), and with any client wrapped as
 * `{ sendCommand(args) }`. A failing command rejects with
 * `STORE_UNAVAILABLE`; the delivery flow then answers 503 so the service retries.
 * A command Redis refuses (`NOPERM` from an ACL such as `-@scripting` or one
 * whose key patterns leave out `prefix`, or
 * `ERR unknown command` from a service without `EVAL`) rejects with
 * `INVALID_ARGUMENT`, answered 500 as misconfigured; the store's first claim
 * runs a script calling `GET` and `DEL` on a key under `prefix` that no
 * delivery has, to find this out before any payment is handled. So is
 * a `MOVED` or `ASK` reply: a plain client given one node of a Redis Cluster,
 * and a key under `prefix` that payhook did not write (another application's
 * string or hash: give payhook a prefix of its own).
 * `leaseMs` and `retentionMs` are sent as whole milliseconds (fractions
 * round up); a value above `Number.MAX_SAFE_INTEGER` is `INVALID_ARGUMENT`.
 * Commands are sent as the client sends them: configure its timeouts and
 * offline queue (the delivery flow also bounds each store call with
 * `storeTimeoutMs`). A claim or release that fails (its reply lost when the
 * connection drops, though Redis may have run it) is followed by a release
 * with the same token, which the client sends once connected again, so the
 * claim does not hold the delivery for a lease (sent again until Redis
 * answers it, which a restarted Redis does not while it is `LOADING`, with
 * pauses adding up to the claim's lease at most, or 60 s after a failed
 * release); keep the offline queue on.
 * Run it on a Redis whose `maxmemory-policy` is
 * `noeviction` (Redis's default): every key has a TTL (but a completion
 * under `retentionMs: Infinity`), so an evicting policy may drop completed
 * deliveries and let their redeliveries through. A full Redis refuses new
 * claims (`STORE_UNAVAILABLE`) but, from Redis 7 on, still records
 * completions (a script flagged `allow-oom`; Redis 6, KeyDB and Dragonfly
 * get the plain one, which a full Redis refuses). A client that does not
 * resolve replies (node-redis legacy mode) is `INVALID_ARGUMENT` at the
 * first claim.
 *
 * @throws PayhookError `INVALID_ARGUMENT` when `client` is not a
 * Redis client.
 *
 * @example
 * ```ts
 * // ioredis
 * import { Redis } from 'ioredis';
 * import { createRedisStore } from 'payhook/redis';
 *
 * const store = createRedisStore({ client: new Redis(process.env.REDIS_URL!) });
 * ```
 *
 * @example
 * ```ts
 * // redis (node-redis)
 * import { createClient } from 'redis';
 * import { createRedisStore } from 'payhook/redis';
 *
 * const client = await createClient({ url: process.env.REDIS_URL ?? 'redis://localhost:6379' })
 *   .on('error', (error) => console.error('Redis client:', error)) // without it, a lost connection ends the process
 *   .connect();
 * const store = createRedisStore({ client, prefix: 'shop:payhook:' });
 * ```
 */
export function createRedisStore(options: RedisStoreOptions): DedupStore {
  if (typeof options !== 'object' || options === null) {
    throw new PayhookError(
      'INVALID_ARGUMENT',
      'createRedisStore needs { client }: an ioredis or redis (node-redis) client.',
    );
  }
  const send = commandSender(options.client);
  const prefix = options.prefix ?? 'payhook:';
  if (typeof prefix !== 'string') {
    throw new PayhookError('INVALID_ARGUMENT', 'prefix must be a string.');
  }

  // A key under the prefix that payhook did not write stays so whatever the retries: misconfiguration, not an outage.
  const foreign = (redisKey: string | undefined, cause?: unknown): PayhookError =>
    new PayhookError(
      'INVALID_ARGUMENT',
      `The Redis key ${JSON.stringify(redisKey)} holds a value payhook did not write; is the prefix shared? Give payhook a prefix of its own.`,
      { cause },
    );

  async function run(what: string, args: string[]): Promise<unknown> {
    try {
      return await send(args);
    } catch (cause) {
      const message = describeError(cause);
      // The key is GET's and SET's first argument, a script's fourth.
      if (message.startsWith('WRONGTYPE')) throw foreign(args[args[0] === 'EVAL' ? 3 : 1], cause);
      const refused = REFUSED.exec(message);
      if (refused) {
        // refused[1]: a MOVED or ASK redirect. An ACL key pattern is a glob: the prefix's own *?[]\ are escaped.
        const keys = `~${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
        const fix = refused[1]
          ? 'A Redis Cluster needs an ioredis Cluster or node-redis createCluster client.'
          : `payhook needs GET, SET, DEL and EVAL (Lua scripts) on the keys ${prefix}*: grant them to the client's user (ACL +@scripting ${keys}, with the client's own keyPrefix in front if it sets one), give a prefix its key patterns allow, or use a Redis that runs scripts.`;
        throw new PayhookError('INVALID_ARGUMENT', `Redis refused ${what}: ${message}. ${fix}`, { cause });
      }
      // node-redis's and ioredis's words for a client never connected, quit, or whose reconnecting gave up.
      const closed = /^(?:The client is closed|Connection is closed)/.test(message)
        ? ' (connect the client before the first delivery, and keep it open while the handler runs)'
        : '';
      throw new PayhookError('STORE_UNAVAILABLE', `Redis ${what} failed: ${message}${closed}`, { cause });
    }
  }

  // Whether EVAL has worked once: until it has, a claim first runs the check
  // script, so a Redis that refuses scripts (or a command in them) fails the
  // claim (the delivery answered 500, retried) rather than every complete or
  // release after onPayment ran. The check also finds out whether the server
  // compiles a script's flag line, and so which completion script to send.
  let scriptsWork = false;
  let completeScript = ALLOW_OOM + COMPLETE_SCRIPT;
  async function checkScripts(): Promise<void> {
    if (scriptsWork) return;
    const probe = `${prefix}\u0000check`;
    const flagged = () => run('EVAL', ['EVAL', ALLOW_OOM + CHECK_SCRIPT, '1', probe]);
    // An error reply (ERR …): maybe the flag line, in words each server has its own of (Redis 6 "Error compiling
    // script", Dragonfly Lua's "unexpected symbol near '#'"), maybe a proxy's passing error. So the plain script is
    // run, then the flagged one again: refused again, it is the flag line. A refusal (an ACL) or no answer (a
    // connection lost) is the claim's failure, and the next claim checks again.
    const errorReply = (error: unknown): boolean => {
      const { code, cause } = error as PayhookError;
      return code !== 'INVALID_ARGUMENT' && describeError(cause).startsWith('ERR ');
    };
    try {
      await flagged();
    } catch (error) {
      if (!errorReply(error)) throw error;
      await run('EVAL', ['EVAL', CHECK_SCRIPT, '1', probe]);
      try {
        await flagged();
      } catch (again) {
        if (!errorReply(again)) throw again;
        completeScript = COMPLETE_SCRIPT;
      }
    }
    scriptsWork = true;
  }

  const text = async (what: string, args: string[]): Promise<string | null> => replyText(what, await run(what, args));

  const releaseArgs = (redisKey: string, token: string): string[] => [
    'EVAL',
    RELEASE_SCRIPT,
    '1',
    redisKey,
    CLAIMED + token,
  ];

  /**
   * A SET or release whose reply was lost (node-redis rejects a command in
   * flight when the connection drops; ioredis sends it again) may have run:
   * the claim would then hold the delivery for a lease, every retry answered
   * 409. So a failed one is followed by a release with the same token, which
   * the client sends once connected again; a no-op if the claim is not there.
   */
  async function releaseOnFailure<T>(
    redisKey: string,
    token: string,
    pending: Promise<T>,
    leaseMs: number,
  ): Promise<T> {
    try {
      return await pending;
    } catch (error) {
      releaseUntilAnswered(redisKey, token, leaseMs, 50);
      throw error;
    }
  }

  /**
   * That release can fail as well: node-redis writes its offline queue to a
   * restarted server still loading its data (`LOADING`), or the connection
   * drops again. Sent once, it left a claim the server had persisted before
   * a crash holding the delivery for its whole lease. So it is sent again,
   * 50 ms to 1 s apart, until Redis answers it or the claim would have
   * expired anyway (a release does not know the lease: the handler's default
   * is assumed); each try deletes only this token's claim.
   */
  function releaseUntilAnswered(redisKey: string, token: string, leftMs: number, delayMs: number): void {
    run('EVAL (release)', releaseArgs(redisKey, token)).catch((error: unknown) => {
      // Refused (an ACL, a foreign key), not lost: no retry mends it.
      if ((error as { code?: unknown } | null)?.code === 'INVALID_ARGUMENT') return;
      // Counted in the pauses themselves, not by the clock: fake timers in a merchant's tests end the chain too.
      if (delayMs >= leftMs) return;
      const next = () => releaseUntilAnswered(redisKey, token, leftMs - delayMs, Math.min(delayMs * 2, 1_000));
      (setTimeout(next, delayMs) as { unref?: () => void }).unref?.(); // never what keeps a process from exiting
    });
  }

  return {
    async claim(key: string, claimOptions: ClaimOptions): Promise<ClaimResult> {
      checkKey(key);
      checkLease(claimOptions?.leaseMs);
      const redisKey = prefix + storedKey(key);
      const token = newClaimToken();
      const lease = milliseconds('leaseMs', claimOptions.leaseMs);
      await checkScripts();
      // Two tries: the key may expire or be released between SET and GET.
      for (let attempt = 0; attempt < 2; attempt++) {
        const set = await releaseOnFailure(
          redisKey,
          token,
          text('SET NX PX', ['SET', redisKey, CLAIMED + token, 'NX', 'PX', lease]),
          claimOptions.leaseMs,
        );
        if (set === 'OK') return { status: 'claimed', token };
        if (set !== null) {
          throw new PayhookError('INVALID_ARGUMENT', `Redis SET NX PX answered ${JSON.stringify(set)}, not OK or nil.`);
        }
        const current = await text('GET', ['GET', redisKey]);
        if (current === COMPLETED) return { status: 'completed' };
        // This very claim: the client sent the SET again after its reply was lost (ioredis does on a reconnect).
        if (current === CLAIMED + token) return { status: 'claimed', token };
        if (current?.startsWith(CLAIMED)) return { status: 'in-progress' };
        if (current !== null) throw foreign(redisKey);
      }
      return { status: 'in-progress' };
    },
    async complete(key: string, token: string, completeOptions: CompleteOptions): Promise<void> {
      checkKey(key);
      checkToken(token);
      checkRetention(completeOptions?.retentionMs);
      const retention =
        completeOptions.retentionMs === Infinity ? 'inf' : milliseconds('retentionMs', completeOptions.retentionMs);
      await checkScripts(); // a no-op after this store's first claim, which tells which script this server runs
      await run('EVAL (complete)', ['EVAL', completeScript, '1', prefix + storedKey(key), CLAIMED + token, retention]);
    },
    async release(key: string, token: string): Promise<void> {
      checkKey(key);
      checkToken(token);
      const redisKey = prefix + storedKey(key);
      // The claim's lease is not known here: retried for as long as the handler's default one.
      await releaseOnFailure(redisKey, token, run('EVAL (release)', releaseArgs(redisKey, token)), DEFAULT_LEASE_MS);
    },
  };
}
