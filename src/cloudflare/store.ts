import type { ClaimOptions, ClaimResult, CompleteOptions, DedupStore } from '../dedup/store.js';
import { checkKey, checkLease, checkRetention, checkToken } from '../dedup/token.js';
import { PayhookError } from '../errors.js';
import { describeError, misuse } from '../lib/misuse.js';
import { OPERATION_URL, type FailureBody, type Operation, type OperationBodies } from './protocol.js';

/**
 * The slice of a Durable Object stub payhook uses: `fetch`. A
 * `DurableObjectStub` from `@cloudflare/workers-types` fits.
 *
 * @example
 * ```ts
 * import type { DurableObjectNamespaceLike, DurableObjectStubLike } from 'payhook/cloudflare';
 *
 * declare const env: { PAYHOOK_DEDUP: DurableObjectNamespaceLike };
 * const stub: DurableObjectStubLike = env.PAYHOOK_DEDUP.get(env.PAYHOOK_DEDUP.idFromName('x'));
 * ```
 */
export interface DurableObjectStubLike {
  fetch(
    url: string,
    init: { method: string; headers: Record<string, string>; body: string },
  ): Promise<{ readonly status: number; json(): Promise<unknown>; text(): Promise<string> }>;
}

/**
 * The slice of a Durable Object namespace binding (`env.PAYHOOK_DEDUP`)
 * payhook uses, so its types need no `@cloudflare/workers-types`. A
 * `DurableObjectNamespace`, or one narrowed by `.jurisdiction('eu')`, fits.
 *
 * @example
 * ```ts
 * import type { DurableObjectNamespaceLike } from 'payhook/cloudflare';
 *
 * // In a Worker: env.PAYHOOK_DEDUP is a DurableObjectNamespace from @cloudflare/workers-types.
 * declare const env: { PAYHOOK_DEDUP: DurableObjectNamespaceLike };
 * const namespace: DurableObjectNamespaceLike = env.PAYHOOK_DEDUP;
 * ```
 */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown;
  get(id: unknown): DurableObjectStubLike;
}

/**
 * Options of {@link createDurableObjectStore}.
 *
 * @example
 * ```ts
 * import type { DurableObjectNamespaceLike, DurableObjectStoreOptions } from 'payhook/cloudflare';
 *
 * declare const env: { PAYHOOK_DEDUP: DurableObjectNamespaceLike };
 * const options: DurableObjectStoreOptions = { namespace: env.PAYHOOK_DEDUP, prefix: 'shop:' };
 * ```
 */
export interface DurableObjectStoreOptions {
  /** The binding of {@link PayhookDedupObject} declared in `wrangler.toml`. */
  namespace: DurableObjectNamespaceLike;
  /**
   * Prepended to every delivery key to name its object, so several apps can
   * share one namespace. End it with a separator, as the default does: with
   * `'shop'` and `'shop1'`, the key `1234_DEBIT:SUCCEEDED` of one and
   * `234_DEBIT:SUCCEEDED` of the other would name one object. Changing it
   * forgets the deliveries handled so far.
   * @defaultValue `'payhook:'`
   */
  prefix?: string;
}

/**
 * Creates a {@link DedupStore} on Cloudflare Durable Objects: atomic across
 * every Worker instance, isolate and location that shares the binding, with
 * nothing else to run. Pair it with {@link PayhookDedupObject}, exported from
 * your Worker and bound in `wrangler.toml`.
 *
 * Each delivery key gets an object of its own (`idFromName(prefix + key)`):
 * atomicity is only needed per key, an object handles its events one at a
 * time, and one object per key means no two deliveries ever queue behind
 * each other and each record expires by its own alarm. A shared, sharded
 * object would cap throughput at the shards' capacity and need a sweep.
 *
 * The lease and the retention run on the object's clock, the same for every
 * caller. A stub that cannot be reached, or an object that fails, rejects
 * with `STORE_UNAVAILABLE`; the handler then answers 503 and the service
 * retries. `complete` and `release`, idempotent under their token, are tried
 * once more on an error Workers marks `retryable` or `durableObjectReset`,
 * and not `overloaded`, so one passing failure does not leave a delivery claimed
 * for a lease (a handled one is recorded, a failed one freed). An object without `fetch`, or answering what
 * {@link PayhookDedupObject} never does (a `fetch` that throws, text short of a server error, a
 * success that is no claim result), is another class bound: the store
 * rejects with `INVALID_ARGUMENT`, and the handler answers 500 and logs it as
 * `misconfigured`.
 *
 * @throws PayhookError `INVALID_ARGUMENT` when `namespace` is not a
 * Durable Object namespace (a service binding, say).
 *
 * @example
 * ```ts
 * // wrangler.toml:
 * //   [[durable_objects.bindings]]
 * //   name = "PAYHOOK_DEDUP"
 * //   class_name = "PayhookDedupObject"
 * //   [[migrations]]
 * //   tag = "v1"
 * //   new_sqlite_classes = ["PayhookDedupObject"]
 * import { createDurableObjectStore, type DurableObjectNamespaceLike } from 'payhook/cloudflare';
 * import { createWebhookHandler, type WebhookHandler, type WebhookHandlerContext } from 'payhook/web';
 *
 * export { PayhookDedupObject } from 'payhook/cloudflare';
 *
 * let webhook: WebhookHandler | undefined; // one per isolate
 *
 * export default {
 *   // env and ctx as the Workers runtime passes them (DurableObjectNamespace, ExecutionContext in its types)
 *   fetch(request: Request, env: { PAYHOOK_DEDUP: DurableObjectNamespaceLike }, ctx: WebhookHandlerContext): Promise<Response> {
 *     webhook ??= createWebhookHandler({
 *       environment: 'production',
 *       webhookUrl: 'https://shop.example.kg/webhooks/payments',
 *       store: createDurableObjectStore({ namespace: env.PAYHOOK_DEDUP }),
 *       onPayment: async (payment) => console.log(payment.id),
 *     });
 *     return webhook(request, ctx);
 *   },
 * };
 * ```
 */
export function createDurableObjectStore(options: DurableObjectStoreOptions): DedupStore {
  const given = (options as Partial<DurableObjectStoreOptions> | null | undefined)?.namespace;
  if (typeof given?.idFromName !== 'function' || typeof given.get !== 'function') {
    throw misuse(
      'createDurableObjectStore needs { namespace }: ' +
        'the Durable Object binding of PayhookDedupObject (env.PAYHOOK_DEDUP).',
    );
  }
  // A service binding ([[services]]) answers every name with an RPC function, idFromName too; a namespace has no fetch.
  if (typeof (given as { fetch?: unknown }).fetch === 'function') {
    throw misuse(
      'createDurableObjectStore was given a service binding, not a Durable Object namespace: bind PayhookDedupObject ' +
        'under [[durable_objects.bindings]] (with script_name when another Worker hosts it), not [[services]].',
    );
  }
  const namespace: DurableObjectNamespaceLike = given;
  const prefix = options.prefix ?? 'payhook:';
  if (typeof prefix !== 'string') throw misuse('prefix must be a string.');

  async function send<O extends Operation>(operation: O, key: string, body: OperationBodies[O]): Promise<unknown> {
    let status = 0;
    let answer: unknown;
    for (let attempt = 1; ; attempt++) {
      try {
        const stub = namespace.get(namespace.idFromName(prefix + key));
        const response = await stub.fetch(OPERATION_URL + operation, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        status = response.status;
        answer = status === 204 ? undefined : await response.json();
        break;
      } catch (cause) {
        // Workers marks a passing failure (the object reset, say) retryable, and any failure on the object's side
        // remote: what its own code threw, but also the runtime's own resets and internal errors.
        const { retryable, overloaded, remote, durableObjectReset } = (cause ?? {}) as Record<string, unknown>;
        const thrownByObject =
          remote === true &&
          retryable !== true &&
          overloaded !== true &&
          durableObjectReset !== true &&
          !/internal error/i.test(describeError(cause));
        // PayhookDedupObject has a fetch that never throws and answers JSON (or nothing, 204): an object without one
        // (workerd's message), one whose fetch threw, or text short of a server error, is another class bound, a
        // mistake no retry mends.
        if (
          (cause instanceof SyntaxError && status < 500) ||
          /export a fetch\(\)/.test(describeError(cause)) ||
          thrownByObject
        )
          throw notOurs(operation, cause);
        // complete and release are idempotent under their token, so one more try, on a new stub, spares the delivery
        // its claim's lease.
        // A reset object (durableObjectReset, which workerd does not mark retryable) is a new one on the next stub.
        const passing = retryable === true || durableObjectReset === true;
        if (attempt === 1 && operation !== 'claim' && passing && overloaded !== true) continue;
        throw new PayhookError(
          'STORE_UNAVAILABLE',
          `The Durable Object store could not ${operation}: ${describeError(cause)}`,
          { cause },
        );
      }
    }
    if (status < 200 || status > 299) {
      const failed = answer as Partial<FailureBody> | null;
      // PayhookDedupObject names every failure with its code: JSON without one, short of a server error, is another
      // class's answer (a router's JSON 404), as text is.
      if (typeof failed?.code !== 'string' && status < 500) throw notOurs(operation);
      const message = typeof failed?.message === 'string' ? failed.message : `status ${status}`;
      throw new PayhookError('STORE_UNAVAILABLE', `The Durable Object refused ${operation}: ${message}`);
    }
    return answer;
  }

  return {
    async claim(key: string, claimOptions: ClaimOptions): Promise<ClaimResult> {
      checkKey(key);
      checkLease(claimOptions?.leaseMs);
      const answer = (await send('claim', key, { leaseMs: claimOptions.leaseMs })) as Partial<
        Record<string, unknown>
      > | null;
      if (answer?.status === 'claimed' && typeof answer.token === 'string' && answer.token !== '') {
        return { status: 'claimed', token: answer.token };
      }
      if (answer?.status === 'in-progress' || answer?.status === 'completed') return { status: answer.status };
      throw notOurs('claim');
    },
    async complete(key: string, token: string, completeOptions: CompleteOptions): Promise<void> {
      checkKey(key);
      checkToken(token);
      checkRetention(completeOptions?.retentionMs);
      const { retentionMs } = completeOptions;
      await send('complete', key, { token, retentionMs: retentionMs === Infinity ? null : retentionMs });
    },
    async release(key: string, token: string): Promise<void> {
      checkKey(key);
      checkToken(token);
      await send('release', key, { token });
    },
  };
}

/** The error of an answer PayhookDedupObject never gives: the binding names another class. */
function notOurs(operation: Operation, cause?: unknown): PayhookError {
  return new PayhookError(
    'INVALID_ARGUMENT',
    `The Durable Object answered ${operation} as no PayhookDedupObject does: bind the namespace to PayhookDedupObject.`,
    { cause },
  );
}
