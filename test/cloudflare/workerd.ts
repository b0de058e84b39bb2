// Starts the test Worker (test/cloudflare/worker.ts) in workerd through
// Miniflare, and a DedupStore that forwards each call to the Worker's
// /store/* endpoints (test/helpers/remote-store.ts), so the store-contract
// suite, which runs in Node, drives createDurableObjectStore inside workerd. Miniflare ships its own
// workerd binary; if it cannot start, the suite fails (no skip).
import { fileURLToPath } from 'node:url';
import { Miniflare, type WorkerOptions } from 'miniflare';
import type { DedupStore } from '../../src/dedup/store.js';
import { bundleForWorkerd } from '../../scripts/lib/bundle-worker.mjs';
import { remoteStore } from '../helpers/remote-store.js';
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
 * by script name, as separate Workers sharing one namespace are; `className` is the object class bound.
 */
export async function startWorkers(
  backend: Backend,
  instances: readonly string[],
  className = 'PeekableDedupObject',
): Promise<Miniflare> {
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
      { ...common, name: 'dedup', durableObjects: { DEDUP: { className, useSQLite } } },
      ...instances.map((name) => ({
        ...common,
        name,
        durableObjects: { DEDUP: { className, scriptName: 'dedup', useSQLite } },
      })),
    ],
  });
  await mf.ready;
  return mf;
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

/** A DedupStore whose every call runs inside workerd, in Worker `name`. */
export function storeThrough(mf: Miniflare, name: string, prefix?: string): DedupStore {
  return remoteStore(
    async (operation, body) =>
      (await (await worker(mf, name)).fetch(`http://worker/store/${operation}`, { method: 'POST', body })).json(),
    prefix === undefined ? {} : { prefix },
  );
}
