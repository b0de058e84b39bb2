// How the Durable Object store reads Workers' error flags: a reset is an outage whatever its wording.
import { describe, expect, it } from 'vitest';
import { createDurableObjectStore } from '../../src/cloudflare/index.js';

describe('createDurableObjectStore', () => {
  it('takes a reset the runtime flags durableObjectReset (whatever its wording) for an outage, not another class', async () => {
    const failure = Object.assign(
      new Error('Durable Object storage operation exceeded timeout which caused object to be reset.'),
      { remote: true, durableObjectReset: true },
    );
    const store = createDurableObjectStore({
      namespace: { idFromName: (name) => ({ name }), get: () => ({ fetch: () => Promise.reject(failure) }) },
    });
    await expect(store.claim('k', { leaseMs: 1000 })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });
});
