// The binding `wrangler types` writes for a re-exported PayhookDedupObject,
// `DurableObjectNamespace<PayhookDedupObject>`, needs the class to carry
// workers-types' brand (its constraint, restated here: workers-types is not
// installed). Fails the type check if the class loses it.
import { describe, expectTypeOf, it } from 'vitest';
import { PayhookDedupObject, type DurableObjectStateLike } from '../../src/cloudflare/index.js';

interface DurableObjectBranded {
  __DURABLE_OBJECT_BRAND: never;
}
type Namespace<T extends DurableObjectBranded | undefined = undefined> = { readonly of?: T };

class MerchantObject extends PayhookDedupObject {}

describe('PayhookDedupObject as workers-types sees it', () => {
  it('satisfies the DurableObjectNamespace<T> constraint, subclasses too', () => {
    expectTypeOf<PayhookDedupObject>().toMatchTypeOf<DurableObjectBranded>();
    expectTypeOf<Namespace<MerchantObject>>().not.toBeNever();
  });
});

describe('DurableObjectStateLike', () => {
  // A subclass that wraps ctx.storage and hands on only transaction (as before deleteAll was used) still type-checks.
  it('takes a storage without deleteAll', () => {
    expectTypeOf<{
      storage: { transaction: DurableObjectStateLike['storage']['transaction'] };
    }>().toMatchTypeOf<DurableObjectStateLike>();
  });
});
