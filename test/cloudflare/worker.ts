// The Worker the Cloudflare tests bundle (esbuild, as wrangler would) and run
// in workerd through Miniflare. The same script plays every part:
//   - it hosts PayhookDedupObject (exported, as a merchant's Worker does);
//   - POST /store/<claim|complete|release> runs createDurableObjectStore
//     inside workerd, so the Node-side contract suite drives the real store
//     (numbers that JSON cannot carry — NaN, Infinity — travel as
//     { "$number": "…" }, so the misuse checks run here too);
//   - POST /webhooks/payments is createWebhookHandler from payhook/web with
//     that store; onPayment waits a little, so copies of a delivery overlap;
//   - GET /handled lists what this instance's onPayment saw, GET /reported the codes its async onError
//     reported (after a timer: what the handler does not hand to waitUntil, workerd cancels once it answers);
//   - GET /peek?key=… shows the record and the alarm the object keeps, and how often it emptied its storage.
import { createDurableObjectStore, PayhookDedupObject } from '../../src/cloudflare/index.js';
import type { DurableObjectNamespaceLike, DurableObjectStateLike } from '../../src/cloudflare/index.js';
import { isPayhookError } from '../../src/errors.js';
import { createWebhookHandler, type WebhookHandler } from '../../src/web/index.js';

interface Env {
  DEDUP: DurableObjectNamespaceLike;
  PUBLIC_KEY_PEM: string;
  WEBHOOK_URL: string;
}

interface StorageForTests {
  get(key: string): Promise<unknown>;
  getAlarm(): Promise<number | null>;
}

/** The product's object, plus a read-only look at its storage for the tests. */
export class PeekableDedupObject extends PayhookDedupObject {
  readonly #storage: StorageForTests;
  readonly #emptied: () => number;

  constructor(state: DurableObjectStateLike, env: unknown) {
    // Counts the calls of deleteAll, which leave nothing the storage API can read (only billing sees an object
    // that kept its storage).
    const { storage } = state;
    let emptied = 0;
    super(
      {
        storage: {
          transaction: (closure) => storage.transaction(closure),
          deleteAll: async () => {
            emptied++;
            await storage.deleteAll?.();
          },
        },
      },
      env,
    );
    this.#storage = storage as unknown as StorageForTests;
    this.#emptied = () => emptied;
  }

  override async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname !== '/peek') return super.fetch(request);
    return Response.json({
      record: (await this.#storage.get('record')) ?? null,
      alarm: await this.#storage.getAlarm(),
      emptied: this.#emptied(),
    });
  }
}

export { PayhookDedupObject };

/** Merchants' own objects, bound by mistake where PayhookDedupObject belongs: one answering text, */
export class ForeignObject {
  fetch(): Response {
    return new Response('hello from another object');
  }
}

/** one routing its own paths (404 for the store's), */
export class RouterObject {
  fetch(): Response {
    return new Response('not found', { status: 404 });
  }
}

/** one routing its own paths with JSON errors, */
export class JsonRouterObject {
  fetch(): Response {
    return Response.json({ error: 'Not Found' }, { status: 404 });
  }
}

/** one whose router throws for a path it does not know, */
export class ThrowingRouterObject {
  fetch(request: Request): Response {
    throw new Error(`No route for ${new URL(request.url).pathname}`);
  }
}

/** and one with RPC methods only (no fetch), as new Durable Objects often are. */
export class RpcOnlyObject {
  hello(): string {
    return 'hello';
  }
}

const handled: string[] = [];
const reported: string[] = [];
let handler: WebhookHandler | undefined;

function decode(text: string): Record<string, unknown> {
  return JSON.parse(text, (_key, value: unknown) =>
    typeof value === 'object' && value !== null && '$number' in value ? Number(value.$number) : value,
  ) as Record<string, unknown>;
}

async function storeCall(operation: string, env: Env, request: Request): Promise<Response> {
  const args = decode(await request.text());
  const prefix = args['prefix'] as string | undefined;
  const store = createDurableObjectStore({ namespace: env.DEDUP, ...(prefix === undefined ? {} : { prefix }) });
  try {
    const key = args['key'] as string;
    const token = args['token'] as string;
    let result: unknown;
    if (operation === 'claim') result = await store.claim(key, { leaseMs: args['leaseMs'] as number });
    else if (operation === 'complete') await store.complete(key, token, { retentionMs: args['retentionMs'] as number });
    else if (operation === 'release') await store.release(key, token);
    else return new Response('no such operation', { status: 404 });
    return Response.json({ ok: true, result: result ?? null });
  } catch (error) {
    const code = isPayhookError(error) ? error.code : 'NOT_A_PAYHOOK_ERROR';
    return Response.json({ ok: false, error: { code, message: String(error) } });
  }
}

export default {
  async fetch(request: Request, env: Env, context: { waitUntil(promise: Promise<unknown>): void }): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname.startsWith('/store/')) return storeCall(url.pathname.slice('/store/'.length), env, request);
    if (url.pathname === '/handled') return Response.json(handled);
    if (url.pathname === '/reported') return Response.json(reported);
    if (url.pathname === '/peek') {
      const stub = env.DEDUP.get(env.DEDUP.idFromName(`payhook:${url.searchParams.get('key')}`));
      const answer = await stub.fetch('https://peek/peek', { method: 'POST', headers: {}, body: '' });
      return new Response(await answer.text(), { status: answer.status });
    }
    if (url.pathname === '/webhooks/payments') {
      handler ??= createWebhookHandler({
        publicKeys: env.PUBLIC_KEY_PEM,
        webhookUrl: env.WEBHOOK_URL,
        store: createDurableObjectStore({ namespace: env.DEDUP }),
        onPayment: async (webhook) => {
          handled.push(webhook.id);
          await new Promise((resolve) => setTimeout(resolve, 30));
        },
        onError: async (error) => {
          await new Promise((resolve) => setTimeout(resolve, 20));
          reported.push(error.code);
        },
      });
      return handler(request, context);
    }
    return new Response('not found', { status: 404 });
  },
};
