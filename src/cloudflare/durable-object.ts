import type { ClaimResult } from '../dedup/store.js';
import { checkLease, checkRetention, checkToken, newClaimToken } from '../dedup/token.js';
import { isPayhookError } from '../errors.js';
import { describeError } from '../lib/misuse.js';
import type { FailureBody, Operation, OperationBodies } from './protocol.js';

/**
 * The slice of a Durable Object storage transaction {@link PayhookDedupObject}
 * uses, written structurally so the published types need no
 * `@cloudflare/workers-types`.
 *
 * @example
 * ```ts
 * import type { DurableObjectStateLike, DurableObjectTransactionLike } from 'payhook/cloudflare';
 *
 * declare const ctx: DurableObjectStateLike;
 * await ctx.storage.transaction(async (txn: DurableObjectTransactionLike) => txn.get('record'));
 * ```
 */
export interface DurableObjectTransactionLike {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
  setAlarm(scheduledTime: number): Promise<void>;
  deleteAlarm(): Promise<void>;
}

/**
 * The slice of a `DurableObjectState` (the `ctx` workerd hands an object)
 * {@link PayhookDedupObject} uses. You need it only to extend the class.
 *
 * @example
 * ```ts
 * import { PayhookDedupObject, type DurableObjectStateLike } from 'payhook/cloudflare';
 *
 * export class DedupObject extends PayhookDedupObject {
 *   constructor(ctx: DurableObjectStateLike, env: unknown) {
 *     super(ctx, env);
 *   }
 * }
 * ```
 */
export interface DurableObjectStateLike {
  readonly storage: {
    transaction<T>(closure: (txn: DurableObjectTransactionLike) => Promise<T>): Promise<T>;
    /** Called once the object's record is gone, so it keeps no storage; workerd's storage has it. */
    deleteAll?(): Promise<void>;
  };
}

/**
 * The one record an object holds (one object per delivery key). `expiresAt`
 * is the end of the lease or of the retention, in the object's clock; `null`
 * means "kept forever".
 */
type DedupRecord =
  { state: 'claimed'; token: string; expiresAt: number } | { state: 'completed'; expiresAt: number | null };

const RECORD = 'record';
/**
 * The latest alarm workerd can set: it holds times as int64 nanoseconds since
 * 1970, so 2^63 ns (2262-04-11), though its error message says "after 2189".
 */
const MAX_ALARM_MS = 9_223_372_036_854;

function live(record: unknown, now: number): DedupRecord | undefined {
  const found = record as DedupRecord | undefined;
  if (found === undefined || (found.expiresAt !== null && found.expiresAt <= now)) return undefined;
  return found;
}

/** Arms the alarm that deletes the record once it expires. */
async function arm(txn: DurableObjectTransactionLike, expiresAt: number | null): Promise<void> {
  // An expiry no alarm can hold keeps the record; reads still see it expire.
  if (expiresAt !== null && expiresAt <= MAX_ALARM_MS) await txn.setAlarm(expiresAt);
  else await txn.deleteAlarm();
}

async function write(txn: DurableObjectTransactionLike, record: DedupRecord): Promise<void> {
  await txn.put(RECORD, record);
  await arm(txn, record.expiresAt);
}

async function forget(txn: DurableObjectTransactionLike): Promise<void> {
  await txn.delete(RECORD);
  await txn.deleteAlarm();
}

function failure(status: number, code: string, message: string): Response {
  const body: FailureBody = { code, message };
  return Response.json(body, { status });
}

/**
 * The Durable Object behind {@link createDurableObjectStore}: it keeps the
 * claim or completion of one delivery key. Export it from your Worker's main
 * module and bind it in `wrangler.toml`; you never call it yourself.
 *
 * Each operation reads and writes the object's record inside one storage
 * transaction, and the object runs one event at a time, so two Workers
 * claiming the same delivery at once get one `claimed` and one
 * `in-progress`, wherever they run. Expired leases count as absent when read,
 * and an alarm at the expiry deletes the record and then all of the object's
 * storage (`deleteAll`), so no object is left behind and storage does not grow.
 * Works on both storage back-ends (`new_sqlite_classes`, recommended, and
 * `new_classes`).
 *
 * @example
 * ```ts
 * // src/index.ts: the Worker's main module exports the class under the
 * // class_name of wrangler.toml's [[durable_objects.bindings]].
 * export { PayhookDedupObject } from 'payhook/cloudflare';
 * ```
 */
export class PayhookDedupObject {
  /**
   * Type only (nothing at run time): the mark `@cloudflare/workers-types` asks
   * of a Durable Object class, so the binding `wrangler types` writes,
   * `DurableObjectNamespace<PayhookDedupObject>`, type-checks.
   * @internal
   */
  declare readonly __DURABLE_OBJECT_BRAND: never;
  readonly #state: DurableObjectStateLike;

  /** Called by workerd with the object's state; the environment is not used. */
  constructor(state: DurableObjectStateLike, _env?: unknown) {
    this.#state = state;
  }

  /** Answers one store operation sent by {@link createDurableObjectStore}. */
  async fetch(request: Request): Promise<Response> {
    const operation = new URL(request.url).pathname.slice(1) as Operation;
    try {
      const body = (await request.json()) as Partial<OperationBodies[Operation]> | null;
      if (typeof body !== 'object' || body === null) return failure(400, 'INVALID_ARGUMENT', 'Expected a JSON object.');
      switch (operation) {
        case 'claim': {
          const { leaseMs } = body as Partial<OperationBodies['claim']>;
          checkLease(leaseMs);
          return Response.json(await this.#claim(leaseMs));
        }
        case 'complete': {
          const { token, retentionMs } = body as Partial<OperationBodies['complete']>;
          checkToken(token);
          if (retentionMs !== null) checkRetention(retentionMs);
          await this.#complete(token, retentionMs ?? Infinity);
          return new Response(null, { status: 204 });
        }
        case 'release': {
          const { token } = body as Partial<OperationBodies['release']>;
          checkToken(token);
          await this.#release(token);
          return new Response(null, { status: 204 });
        }
        default:
          return failure(404, 'INVALID_ARGUMENT', `No store operation ${JSON.stringify(operation)}.`);
      }
    } catch (error) {
      if (error instanceof SyntaxError) return failure(400, 'INVALID_ARGUMENT', 'The body is not JSON.');
      if (isPayhookError(error) && error.code === 'INVALID_ARGUMENT') return failure(400, error.code, error.message);
      return failure(500, 'STORE_UNAVAILABLE', `The dedup object failed: ${describeError(error)}`);
    }
  }

  /** Deletes the record once it has expired (workerd calls this at the time the last write armed). */
  async alarm(): Promise<void> {
    const emptied = await this.#state.storage.transaction(async (txn) => {
      const record = (await txn.get(RECORD)) as DedupRecord | undefined;
      if (record === undefined) return true;
      if (live(record, Date.now()) !== undefined) {
        await arm(txn, record.expiresAt); // rewritten since this alarm was armed: wait for the new expiry
        return false;
      }
      await forget(txn);
      return true;
    });
    if (emptied) await this.#vacate();
  }

  /**
   * An object that ever wrote keeps its storage (billed) until deleteAll, even with no key left. The input gate stays
   * shut over storage calls, so no claim can come between the emptying transaction and this.
   */
  async #vacate(): Promise<void> {
    await this.#state.storage.deleteAll?.();
  }

  #claim(leaseMs: number): Promise<ClaimResult> {
    return this.#state.storage.transaction(async (txn): Promise<ClaimResult> => {
      const now = Date.now();
      const record = live(await txn.get(RECORD), now);
      if (record?.state === 'completed') return { status: 'completed' };
      if (record?.state === 'claimed') return { status: 'in-progress' };
      const token = newClaimToken();
      await write(txn, { state: 'claimed', token, expiresAt: now + leaseMs });
      return { status: 'claimed', token };
    });
  }

  #complete(token: string, retentionMs: number): Promise<void> {
    return this.#state.storage.transaction(async (txn) => {
      const now = Date.now();
      const record = live(await txn.get(RECORD), now);
      // Our claim, or an expired one nobody re-took: the work is done, record it.
      if (record === undefined || (record.state === 'claimed' && record.token === token)) {
        await write(txn, { state: 'completed', expiresAt: retentionMs === Infinity ? null : now + retentionMs });
      }
    });
  }

  async #release(token: string): Promise<void> {
    const emptied = await this.#state.storage.transaction(async (txn) => {
      const record = (await txn.get(RECORD)) as DedupRecord | undefined;
      if (record?.state !== 'claimed' || record.token !== token) return false;
      await forget(txn);
      return true;
    });
    if (emptied) await this.#vacate();
  }
}
