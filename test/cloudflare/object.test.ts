// PayhookDedupObject on its own, in Node, against a stand-in state: what its alarm does to a record that a retry
// rewrote after the alarm was armed (kept), to an expired one and to an empty object (storage emptied). The object in
// workerd is tested in durable-object.test.ts.
import { describe, expect, it } from 'vitest';
import { PayhookDedupObject, type DurableObjectStateLike } from '../../src/cloudflare/index.js';

function standIn() {
  const kept = new Map<string, unknown>();
  const seen = { alarm: null as number | null, emptied: 0 };
  const txn = {
    get: (key: string) => Promise.resolve(kept.get(key)),
    put: (key: string, value: unknown) => Promise.resolve(void kept.set(key, value)),
    delete: (key: string) => Promise.resolve(kept.delete(key)),
    setAlarm: (time: number) => Promise.resolve(void (seen.alarm = time)),
    deleteAlarm: () => Promise.resolve(void (seen.alarm = null)),
  };
  const state: DurableObjectStateLike = {
    storage: {
      transaction: (closure) => closure(txn),
      deleteAll: () => {
        seen.emptied++;
        kept.clear();
        seen.alarm = null;
        return Promise.resolve();
      },
    },
  };
  const object = new PayhookDedupObject(state);
  const call = async (operation: string, body: unknown) => {
    const response = await object.fetch(
      new Request(`https://payhook-dedup.invalid/${operation}`, { method: 'POST', body: JSON.stringify(body) }),
    );
    return (response.status === 204 ? null : await response.json()) as { status: string; token: string } | null;
  };
  return { object, call, kept, seen };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PayhookDedupObject.alarm', () => {
  // Events run one at a time: an alarm due at the first claim's expiry can run after a retry claimed and completed
  // the delivery. Emptying the object then would let the next copy run onPayment a second time.
  it('keeps a record rewritten since the alarm was armed, re-armed for its own expiry, and empties nothing', async () => {
    const { object, call, kept, seen } = standIn();
    expect((await call('claim', { leaseMs: 20 }))?.status).toBe('claimed');
    await sleep(40);
    const retry = await call('claim', { leaseMs: 60_000 });
    if (retry?.status !== 'claimed') throw new Error(String(retry?.status));
    await call('complete', { token: retry.token, retentionMs: 86_400_000 });
    const expiry = (kept.get('record') as { expiresAt: number }).expiresAt;
    seen.alarm = null; // the alarm fired: it must arm the next one itself
    await object.alarm();
    expect(kept.get('record')).toMatchObject({ state: 'completed' });
    expect(seen).toEqual({ alarm: expiry, emptied: 0 });
    expect(await call('claim', { leaseMs: 60_000 })).toEqual({ status: 'completed' });
  });

  it('deletes an expired record and empties the object, and empties one with no record left', async () => {
    const expired = standIn();
    await expired.call('claim', { leaseMs: 20 });
    await sleep(40);
    await expired.object.alarm();
    expect([expired.kept.size, expired.seen.emptied, expired.seen.alarm]).toEqual([0, 1, null]);
    const empty = standIn();
    await empty.object.alarm();
    expect(empty.seen.emptied).toBe(1);
  });
});
