// payhook/cloudflare without @cloudflare/workers-types installed: the
// namespace is structural. The shapes below copy the parts of workers-types'
// DurableObjectNamespace and DurableObjectStub that matter here (an opaque id
// type, `get` with an options bag, the full fetch signature), so a real
// binding is shown to fit.
import { createDurableObjectStore, PayhookDedupObject, type DedupStore } from 'payhook/cloudflare';

interface DurableObjectId {
  toString(): string;
  equals(other: DurableObjectId): boolean;
  readonly name?: string;
}
interface DurableObjectStub {
  fetch(input: Request | string | URL, init?: RequestInit): Promise<Response>;
  readonly id: DurableObjectId;
}
interface DurableObjectNamespace {
  newUniqueId(): DurableObjectId;
  idFromName(name: string): DurableObjectId;
  idFromString(id: string): DurableObjectId;
  get(id: DurableObjectId, options?: { locationHint?: string }): DurableObjectStub;
  jurisdiction(name: 'eu' | 'fedramp'): DurableObjectNamespace;
}

export function store(env: { PAYHOOK_DEDUP: DurableObjectNamespace }): DedupStore {
  return createDurableObjectStore({ namespace: env.PAYHOOK_DEDUP.jurisdiction('eu'), prefix: 'shop:' });
}

export { PayhookDedupObject };
export const answer: (object: PayhookDedupObject, request: Request) => Promise<Response> = (object, request) =>
  object.fetch(request);
