// A DedupStore whose calls run somewhere else (a Worker in workerd, a store
// in another runtime's process), so the Node-side contract suite can drive
// stores it cannot load itself. Each call is POSTed as JSON to
// `<operation>`; numbers JSON cannot carry (NaN, Infinity) travel as
// { "$number": "…" }, so the store's own misuse checks see them. The far side
// answers { ok: true, result } or { ok: false, error: { code, message } }.
import type { DedupStore } from '../../src/dedup/store.js';
import { PayhookError, type PayhookErrorCode } from '../../src/errors.js';

/** Sends one call's JSON body to `operation`; resolves the parsed answer. */
export type RemoteCall = (operation: 'claim' | 'complete' | 'release', body: string) => Promise<unknown>;

function encode(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'number' && !Number.isFinite(v) ? { $number: String(v) } : v,
  );
}

export function remoteStore(send: RemoteCall, extra: Record<string, unknown> = {}): DedupStore {
  async function call(operation: 'claim' | 'complete' | 'release', args: Record<string, unknown>): Promise<unknown> {
    const answer = (await send(operation, encode({ ...args, ...extra }))) as {
      ok: boolean;
      result?: unknown;
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
