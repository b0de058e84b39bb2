// Starts the test Worker (test/cloudflare/worker.ts) in workerd through
// Miniflare, and a DedupStore that forwards each call to the Worker's
// /store/* endpoints, so the store-contract suite, which runs in Node, drives
// createDurableObjectStore running inside workerd. Miniflare ships its own
// workerd binary; if it cannot start, the suite fails (no skip).
import { fileURLToPath } from 'node:url';
import { Miniflare, type WorkerOptions } from 'miniflare';
import type { DedupStore } from '../../src/dedup/store.js';
import { PayhookError, type PayhookErrorCode } from '../../src/errors.js';
import { bundleForWorkerd } from '../helpers/bundle-worker.mjs';
import { PUBLIC_KEY } from '../helpers/sign.js';

export const WEBHOOK_URL = 'https://shop.example.kg/webhooks/payments';
const COMPATIBILITY_DATE = '2025-09-01';

let bundled: Promise<string> | undefined;
function script(): Promise<string> {
  bundled ??= bundleForWorkerd(fileURLToPath(new URL('./worker.ts', import.meta.url)));
  return bundled;
}

/** How the Workers reach the object class. */
export type Backend = 'sqlite' | 'kv';

/**
 * One workerd with a Worker `dedup` hosting the object class (SQLite- or
 * KV-backed storage) and `instances` more Workers (`a`, `b`, …) bound to it
 * by script name, as separate Workers sharing one namespace are.
 */
export async function startWorkers(backend: Backend, instances: readonly string[]): Promise<Miniflare> {
  const code = await script();
  const common: WorkerOptions = {
    modules: true,
    script: code,
    compatibilityDate: COMPATIBILITY_DATE,
    bindings: { PUBLIC_KEY_PEM: PUBLIC_KEY, WEBHOOK_URL },
  };
  const useSQLite = backend === 'sqlite';
  const mf = new Miniflare({
    workers: [
      { ...common, name: 'dedup', durableObjects: { DEDUP: { className: 'PeekableDedupObject', useSQLite } } },
      ...instances.map((name) => ({
        ...common,
        name,
        durableObjects: { DEDUP: { className: 'PeekableDedupObject', scriptName: 'dedup', useSQLite } },
      })),
    ],
  });
  await mf.ready;
  return mf;
}

function encode(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'number' && !Number.isFinite(v) ? { $number: String(v) } : v,
  );
}

/** What Miniflare hands Node for a Worker or an object stub (typed here: workers-types are not installed). */
export interface Fetcher {
  fetch(url: string, init?: RequestInit): Promise<Response>;
}

/** Worker `name`'s fetch, called from Node. */
export async function worker(mf: Miniflare, name: string): Promise<Fetcher> {
  return (await mf.getWorker(name)) as unknown as Fetcher;
}

/** A stub of the object named `name`, in the namespace the `dedup` Worker hosts. */
export async function objectStub(mf: Miniflare, name: string): Promise<Fetcher> {
  const namespace = (await mf.getDurableObjectNamespace('DEDUP', 'dedup')) as unknown as {
    idFromName(name: string): unknown;
    get(id: unknown): Fetcher;
  };
  return namespace.get(namespace.idFromName(name));
}

/** A DedupStore whose every call runs inside workerd, in Worker `worker`. */
export function storeThrough(mf: Miniflare, name: string, prefix?: string): DedupStore {
  async function call(operation: string, args: Record<string, unknown>): Promise<unknown> {
    const target = await worker(mf, name);
    const body = encode(prefix === undefined ? args : { ...args, prefix });
    const response = await target.fetch(`http://worker/store/${operation}`, { method: 'POST', body });
    const answer = (await response.json()) as {
      ok: boolean;
      result: unknown;
      error?: { code: string; message: string };
    };
    if (!answer.ok) throw new PayhookError(answer.error!.code as PayhookErrorCode, answer.error!.message);
    return answer.result;
  }
  return {
    claim: (key, options) => call('claim', { key, leaseMs: options.leaseMs }) as ReturnType<DedupStore['claim']>,
    complete: async (key, token, options) => {
      await call('complete', { key, token, retentionMs: options.retentionMs });
    },
    release: async (key, token) => {
      await call('release', { key, token });
    },
  };
}
