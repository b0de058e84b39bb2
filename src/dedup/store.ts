/**
 * The deduplication store contract: how the delivery flow makes "process
 * each delivery once, lose none" hold across retries, concurrent copies and
 * crashes.
 *
 * @module
 */

/**
 * The answer of {@link DedupStore.claim}:
 *
 * - `claimed`: nobody holds or finished this delivery; the caller now holds it
 *   for the lease and must later `complete` or `release` it with `token`,
 *   which is this claim's own (no other claim of the key ever gets the same
 *   one, so a worker whose lease ran out cannot complete or release the claim
 *   that replaced its own).
 * - `in-progress`: another worker holds an unexpired claim. Do not process,
 *   and do not answer 200 (the holder may still fail).
 * - `completed`: the delivery was handled within the retention period.
 *   Answer 200 without processing it again.
 *
 * The handlers take no other result: any other `status` (`'CLAIMED'`, say),
 * `claimed` without a non-empty string `token`, or no object at all is answered 500
 * `INVALID_ARGUMENT` with the log event `misconfigured`.
 *
 * @example
 * ```ts
 * import type { ClaimResult } from 'payhook';
 *
 * function statusFor(result: ClaimResult): number {
 *   return result.status === 'in-progress' ? 409 : 200;
 * }
 * ```
 */
export type ClaimResult =
  | { readonly status: 'claimed'; readonly token: string }
  | { readonly status: 'in-progress' }
  | { readonly status: 'completed' };

/**
 * Options of {@link DedupStore.claim}.
 *
 * @example
 * ```ts
 * import type { ClaimOptions } from 'payhook';
 *
 * const options: ClaimOptions = { leaseMs: 60_000 };
 * ```
 */
export interface ClaimOptions {
  /**
   * How long the claim holds when its owner neither completes nor releases
   * it (the process died). After it, the next redelivery is processed.
   */
  leaseMs: number;
}

/**
 * Options of {@link DedupStore.complete}.
 *
 * @example
 * ```ts
 * import type { CompleteOptions } from 'payhook';
 *
 * const options: CompleteOptions = { retentionMs: 7 * 24 * 60 * 60_000 };
 * ```
 */
export interface CompleteOptions {
  /**
   * How long the delivery is remembered as handled. `Infinity` (a merchant's
   * `retentionMs: Infinity`) means for ever: a store that writes an expiry
   * time must keep it as such, not as a TTL and not through `JSON.stringify`,
   * which writes `Infinity` as `null` (read back as a time long past, every
   * redelivery would be handled again).
   */
  retentionMs: number;
}

/**
 * Where the delivery flow records which deliveries it claimed and
 * handled. Three operations, each atomic in the store:
 *
 * 1. `claim(key, { leaseMs })` — take the delivery for `leaseMs` if nobody
 *    holds or finished it. Resolves {@link ClaimResult}.
 * 2. `complete(key, token, { retentionMs })` — after the merchant's handler
 *    succeeded: remember the delivery as handled for `retentionMs`. It acts
 *    only while the caller's own claim (`token`) is current, or when the
 *    claim has already expired and nobody else took it; it never overwrites
 *    another worker's claim.
 * 3. `release(key, token)` — after the handler failed: forget the caller's
 *    own claim so the service's next retry is processed. Never releases
 *    another worker's claim.
 *
 * A store that cannot be reached must reject (the delivery flow answers 503, so
 * the service retries); it must never resolve `claimed` without a record.
 * payhook ships {@link createMemoryStore} (one process), `createSqliteStore`
 * in `payhook/sqlite` (one server, across restarts), and for several
 * instances `createRedisStore` (`payhook/redis`), `createPostgresStore`
 * (`payhook/postgres`) and `createDurableObjectStore` (`payhook/cloudflare`).
 *
 * @example
 * ```ts
 * import type { DedupStore } from 'payhook';
 *
 * async function once(store: DedupStore, key: string, work: () => Promise<void>): Promise<boolean> {
 *   const claim = await store.claim(key, { leaseMs: 60_000 });
 *   if (claim.status !== 'claimed') return claim.status === 'completed';
 *   try {
 *     await work();
 *   } catch (error) {
 *     await store.release(key, claim.token);
 *     throw error;
 *   }
 *   await store.complete(key, claim.token, { retentionMs: 7 * 86_400_000 });
 *   return true;
 * }
 * ```
 */
export interface DedupStore {
  /** Atomically claims `key` for `leaseMs`, unless it is held or completed. */
  claim(key: string, options: ClaimOptions): Promise<ClaimResult>;
  /** Marks `key` handled for `retentionMs`, if the caller's claim is current. */
  complete(key: string, token: string, options: CompleteOptions): Promise<void>;
  /** Drops the caller's own claim on `key`, so a redelivery is processed. */
  release(key: string, token: string): Promise<void>;
}
