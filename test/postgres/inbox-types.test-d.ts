// The inbox's handler takes the same results as onPayment: park(...) parks, any
// other result or none marks the row done. Each line fails the type check if the
// handler it declares is refused.
import { describe, expectTypeOf, it } from 'vitest';
import { park } from '../../src/park.js';
import type { InboxHandler } from '../../src/postgres/index.js';
import type { SucceededPaymentWebhook } from '../../src/webhook/types.js';

describe('InboxHandler', () => {
  it('takes a handler that resolves nothing, park(...), or what its last query resolves with', () => {
    const nothing: InboxHandler = async (webhook, tx) => {
      await tx.query('UPDATE orders SET paid_at = now() WHERE id = $1', [webhook.id]);
    };
    const parks: InboxHandler = (webhook) => (webhook.amount > 100 ? park('amount differs') : undefined);
    const rows: InboxHandler = (webhook, tx) => tx.query('INSERT INTO payments (id) VALUES ($1)', [webhook.id]);
    expectTypeOf([nothing, parks, rows]).toEqualTypeOf<InboxHandler[]>();
  });

  it('refuses a handler that takes only some statuses: it is given every row', () => {
    // @ts-expect-error the inbox hands it every status, not only SUCCEEDED
    const fulfil: InboxHandler = (webhook: SucceededPaymentWebhook) => void webhook;
    void fulfil;
  });
});
