/**
 * The in-memory deduplication store: the default, for one process.
 *
 * @module
 */
import { PayhookError } from '../errors.js';
import type { ClaimOptions, ClaimResult, CompleteOptions, DedupStore } from './store.js';
import { checkKey, checkLease, checkRetention, checkToken, newClaimToken } from './token.js';

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
   * The most deliveries remembered at once. When full, expired entries go
   * first, then the least recently written one (which shortens the retention
   * of the oldest completed deliveries under heavy load).
   * @defaultValue 10 000
   */
  maxEntries?: number;
  /**
   * The clock, in milliseconds. Inject one in tests.
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

type Entry = { state: 'claimed'; token: string; expiresAt: number } | { state: 'completed'; expiresAt: number };

const DEFAULT_MAX_ENTRIES = 10_000;
/** How many expired entries one call sweeps at most, so no call is slow. */
const SWEEP_BATCH = 64;

/**
 * Creates the in-memory {@link DedupStore}, the pipeline's default.
 *
 * **One process only.** Each process (each Node cluster worker, each
 * serverless instance, each replica behind a load balancer) has its own
 * memory, so copies of one delivery that reach different processes are each
 * processed. Use `createRedisStore` from `payhook/redis` when you run more
 * than one. A restart forgets everything, too.
 *
 * It is bounded by entries (`maxEntries`) and by time (each entry expires
 * with its lease or retention). Expiry is lazy: expired entries are dropped
 * when they are looked at, and a few per call from the oldest end, so no
 * timer is ever left running and the process can exit freely.
 *
 * @example
 * ```ts
 * import { createMemoryStore } from 'payhook';
 * import { createWebhookHandler } from 'payhook/web';
 *
 * const handler = createWebhookHandler({
 *   environment: 'production',
 *   store: createMemoryStore({ maxEntries: 50_000 }),
 *   onPayment: async (webhook) => { await outbox.add(webhook); },
 * });
 * ```
 */
export function createMemoryStore(options?: MemoryStoreOptions): MemoryStore {
  const maxEntries = options?.maxEntries ?? DEFAULT_MAX_ENTRIES;
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
    throw new PayhookError('INVALID_ARGUMENT', 'maxEntries must be a whole number of at least 1.');
  }
  const clock = options?.now ?? Date.now;
  if (typeof clock !== 'function') {
    throw new PayhookError('INVALID_ARGUMENT', 'now must be a function returning milliseconds.');
  }
  // Map order is write order: every write deletes and re-inserts its key, so
  // the first entries are the least recently written.
  const entries = new Map<string, Entry>();

  function live(key: string, now: number): Entry | undefined {
    const entry = entries.get(key);
    if (entry !== undefined && entry.expiresAt <= now) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  }

  function write(key: string, entry: Entry, now: number): void {
    entries.delete(key);
    let swept = 0;
    for (const [oldKey, old] of entries) {
      if (swept >= SWEEP_BATCH || old.expiresAt > now) break;
      entries.delete(oldKey);
      swept++;
    }
    while (entries.size >= maxEntries) {
      const oldest = entries.keys().next();
      if (oldest.done === true) break;
      entries.delete(oldest.value);
    }
    entries.set(key, entry);
  }

  return {
    get size() {
      return entries.size;
    },
    clear() {
      entries.clear();
    },
    claim(key: string, claimOptions: ClaimOptions): Promise<ClaimResult> {
      try {
        checkKey(key);
        checkLease(claimOptions?.leaseMs);
      } catch (error) {
        return Promise.reject(error);
      }
      const now = clock();
      const entry = live(key, now);
      if (entry?.state === 'completed') return Promise.resolve({ status: 'completed' });
      if (entry?.state === 'claimed') return Promise.resolve({ status: 'in-progress' });
      const token = newClaimToken();
      write(key, { state: 'claimed', token, expiresAt: now + claimOptions.leaseMs }, now);
      return Promise.resolve({ status: 'claimed', token });
    },
    complete(key: string, token: string, completeOptions: CompleteOptions): Promise<void> {
      try {
        checkKey(key);
        checkToken(token);
        checkRetention(completeOptions?.retentionMs);
      } catch (error) {
        return Promise.reject(error);
      }
      const now = clock();
      const entry = live(key, now);
      // Our claim, or an expired one nobody re-took: the work is done, record it.
      if (entry === undefined || (entry.state === 'claimed' && entry.token === token)) {
        write(key, { state: 'completed', expiresAt: now + completeOptions.retentionMs }, now);
      }
      return Promise.resolve();
    },
    release(key: string, token: string): Promise<void> {
      try {
        checkKey(key);
        checkToken(token);
      } catch (error) {
        return Promise.reject(error);
      }
      const entry = entries.get(key);
      if (entry?.state === 'claimed' && entry.token === token) entries.delete(key);
      return Promise.resolve();
    },
  };
}
