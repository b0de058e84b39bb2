/**
 * The in-memory deduplication store: the default, for one process.
 *
 * @module
 */
import { PayhookError } from '../errors.js';
import { misuse } from '../lib/misuse.js';
import type { ClaimOptions, ClaimResult, CompleteOptions, DedupStore } from './store.js';
import { checkKey, checkLease, checkRetention, checkToken, newClaimToken, storeClock } from './token.js';

/**
 * Options of {@link createMemoryStore}.
 *
 * @example
 * ```ts
 * import type { MemoryStoreOptions } from 'payhook';
 *
 * const options: MemoryStoreOptions = { maxEntries: 50_000 };
 * ```
 */
export interface MemoryStoreOptions {
  /**
   * The most deliveries held at once: claims being handled plus completed
   * deliveries within their retention. Neither is ever dropped to make room
   * (that would run a payment twice): when the store is full, `claim`
   * rejects with `STORE_UNAVAILABLE`, the handler answers 503 and the
   * service retries later. Expired entries are dropped first, oldest first.
   * Size it to the deliveries of one `retentionMs` (7 days by default). On
   * Node, with 36-character delivery ids, an entry takes about 560 bytes once
   * completed and about 1.1 KB while claimed: 100 000 completed deliveries
   * hold about 56 MB.
   * @defaultValue 100 000
   */
  maxEntries?: number;
  /**
   * The clock, in milliseconds. Inject one in tests. A call that finds it
   * answering anything but a finite number (`NaN`, a `Date`) rejects with
   * `INVALID_ARGUMENT`.
   * @defaultValue `Date.now`
   */
  now?: () => number;
}

/**
 * The in-memory store with its size, for tests and metrics.
 *
 * @example
 * ```ts
 * import { createMemoryStore, type MemoryStore } from 'payhook';
 *
 * const store: MemoryStore = createMemoryStore();
 * console.log(store.size); // 0
 * ```
 */
export interface MemoryStore extends DedupStore {
  /** How many entries (claims and completed deliveries) are held, expired ones included until swept. */
  readonly size: number;
  /** Forgets everything. */
  clear(): void;
}

interface Claim {
  readonly token: string;
  readonly expiresAt: number;
}

const DEFAULT_MAX_ENTRIES = 100_000;
/** How many expired entries one call sweeps at most while there is room, so no call is slow. */
const SWEEP_BATCH = 64;

/**
 * Creates the in-memory {@link DedupStore}, the delivery flow's default.
 *
 * **One process only.** Each process (each Node cluster worker, each
 * serverless instance, each replica behind a load balancer) has its own
 * memory, so copies of one delivery that reach different processes are each
 * processed. Use `createRedisStore` from `payhook/redis` when you run more
 * than one.
 *
 * What it remembers, and for how long:
 * - a **claim** (a delivery being handled) until it is completed or released,
 *   or its lease (`leaseMs`) passes — never less: a claim is never dropped to
 *   make room;
 * - a **completed** delivery for its `retentionMs`, counted from completion —
 *   also never dropped to make room, so a redelivery within the retention is
 *   always a duplicate.
 *
 * When `maxEntries` are held, expired entries go first (oldest first); if
 * none has expired, `claim` rejects with `STORE_UNAVAILABLE` (the handler
 * answers 503 and the service retries) instead of forgetting one; it looks
 * at every entry once, then refuses at once until the earliest entry it saw
 * (or one added since) can have expired. The count
 * can pass `maxEntries` only for a completion whose claim had already expired
 * and was swept: recording that beats forgetting it. A restart forgets
 * everything: claims (their deliveries are retried and handled) and completed
 * deliveries (a redelivery after a restart runs `onPayment` again — keep it
 * idempotent).
 *
 * Expiry is lazy: expired entries are dropped when they are looked at, and a
 * few per call from the oldest end, so no timer is ever left running and the
 * process can exit freely.
 *
 * @example
 * ```ts
 * import { createMemoryStore } from 'payhook';
 * import { createWebhookHandler } from 'payhook/web';
 *
 * declare const outbox: { add(webhook: unknown): Promise<void> }; // your durable hand-off
 *
 * const handler = createWebhookHandler({
 *   environment: 'production',
 *   webhookUrl: 'https://shop.example.kg/webhooks/payments',
 *   store: createMemoryStore({ maxEntries: 50_000 }),
 *   onPayment: async (webhook) => { await outbox.add(webhook); },
 * });
 * ```
 */
export function createMemoryStore(options?: MemoryStoreOptions): MemoryStore {
  const maxEntries = options?.maxEntries ?? DEFAULT_MAX_ENTRIES;
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
    throw misuse('maxEntries must be a whole number of at least 1.');
  }
  const clock = storeClock(options?.now);
  // Map order is insertion order: claims in the order they were taken,
  // completed deliveries in the order they were completed (so, with one
  // retention, in the order they expire).
  const claims = new Map<string, Claim>();
  const completed = new Map<string, number>();
  const size = (): number => claims.size + completed.size;
  // What the last look at every entry found: no entry expires before this
  // time (entries added since lower it). Until then a full store refuses
  // without looking again, so a flood against a full store costs no
  // O(maxEntries) scan per delivery.
  let nothingExpiresBefore = Number.NEGATIVE_INFINITY;
  const added = (expiresAt: number): void => {
    nothingExpiresBefore = Math.min(nothingExpiresBefore, expiresAt);
  };

  /**
   * Drops expired entries. Usually from the oldest end of each map, at most
   * SWEEP_BATCH of each, stopping at the first live one; `all` (the store is
   * still full after that) looks at every entry, since with several leases or
   * retentions (or a clock stepped back) an expired entry can stand behind a
   * live one.
   */
  function sweep(now: number, all: boolean): void {
    if (all && now < nothingExpiresBefore) return;
    const claimsLeft = dropExpired(claims, (claim) => claim.expiresAt, now, all);
    const completedLeft = dropExpired(completed, (expiresAt) => expiresAt, now, all);
    if (all) nothingExpiresBefore = Math.min(claimsLeft, completedLeft);
  }

  function completedAt(key: string, now: number): boolean {
    const expiresAt = completed.get(key);
    if (expiresAt === undefined) return false;
    if (expiresAt > now) return true;
    completed.delete(key);
    return false;
  }

  function liveClaim(key: string, now: number): Claim | undefined {
    const claim = claims.get(key);
    if (claim === undefined || claim.expiresAt > now) return claim;
    claims.delete(key);
    return undefined;
  }

  return {
    get size() {
      return size();
    },
    clear() {
      claims.clear();
      completed.clear();
    },
    claim: (key: string, claimOptions: ClaimOptions): Promise<ClaimResult> =>
      settle(() => {
        checkKey(key);
        checkLease(claimOptions?.leaseMs);
        const now = clock();
        if (completedAt(key, now)) return { status: 'completed' };
        if (liveClaim(key, now) !== undefined) return { status: 'in-progress' };
        // The oldest entries first: at capacity one usually expires for each new one, which needs no full look.
        sweep(now, false);
        if (size() >= maxEntries) sweep(now, true);
        if (size() >= maxEntries) {
          throw new PayhookError(
            'STORE_UNAVAILABLE',
            `The memory store is full: ${maxEntries} deliveries are being handled or remembered within their ` +
              'retention, and forgetting one could run it twice. Raise maxEntries, or use a shared store.',
          );
        }
        const token = newClaimToken();
        claims.set(key, { token, expiresAt: now + claimOptions.leaseMs });
        added(now + claimOptions.leaseMs);
        return { status: 'claimed', token };
      }),
    complete: (key: string, token: string, completeOptions: CompleteOptions): Promise<void> =>
      settle(() => {
        checkKey(key);
        checkToken(token);
        checkRetention(completeOptions?.retentionMs);
        const now = clock();
        const claim = liveClaim(key, now);
        // Our claim, or an expired one nobody re-took: the work is done, record it.
        if (claim === undefined ? !completedAt(key, now) : claim.token === token) {
          claims.delete(key);
          completed.delete(key);
          completed.set(key, now + completeOptions.retentionMs);
          added(now + completeOptions.retentionMs);
        }
      }),
    release: (key: string, token: string): Promise<void> =>
      settle(() => {
        checkKey(key);
        checkToken(token);
        if (claims.get(key)?.token === token) claims.delete(key);
      }),
  };
}

/** Runs a synchronous store operation as a promise: its result, or its thrown error as the rejection. */
function settle<T>(operation: () => T): Promise<T> {
  try {
    return Promise.resolve(operation());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

/**
 * Drops expired entries of `map` (see `sweep`); with `all`, returns the
 * earliest expiry among the entries it kept (`Infinity`: none).
 */
function dropExpired<V>(map: Map<string, V>, expiresAt: (value: V) => number, now: number, all: boolean): number {
  let looked = 0;
  let earliest = Number.POSITIVE_INFINITY;
  for (const [key, value] of map) {
    const at = expiresAt(value);
    if (at <= now) map.delete(key);
    else if (!all) break;
    else earliest = Math.min(earliest, at);
    if (!all && ++looked >= SWEEP_BATCH) break;
  }
  return earliest;
}
