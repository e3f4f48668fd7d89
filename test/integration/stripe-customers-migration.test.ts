import { expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { keptKeyAccount, sealApiKey } from '../../src/funds/payments/settings.js';
import { fileDatabase, migrateBefore } from '../support/older-schema.js';

/**
 * Migration 0030 (issue 33, item 10): customers and settings from before it carry one
 * marker for the account, unknown then, so a tenant's card keeps charging its recharges
 * until a key of another account is put; the same key put again keeps the marker.
 */
const pool = await fileDatabase('tally_stripe_customers');
await migrateBefore(pool, 30);
const serverSecret = Buffer.alloc(32, 7);

it("keeps the customers made before it as the configured key's, and a customer per account after", async () => {
  const tenant = (await pool.query<{ id: string }>(`insert into tenants (id, name) values (gen_random_uuid(), 'before') returning id`)).rows[0]!.id;
  await pool.query(
    `insert into payment_settings (processor, api_key_sealed, api_key_last4, livemode, webhook_secrets) values ('stripe', $1, '0001', false, '{whsec_before}')`,
    [sealApiKey('sk_test_before_0001', serverSecret)],
  );
  await pool.query(`insert into stripe_customers (tenant_id, livemode, customer_id, payment_method) values ($1, false, 'cus_before', 'pm_before')`, [
    tenant,
  ]);

  await migrate(pool);

  expect((await pool.query(`select key_account from payment_settings`)).rows).toEqual([{ key_account: 'before-0030' }]);
  expect((await pool.query(`select key_account, customer_id from stripe_customers`)).rows).toEqual([
    { key_account: 'before-0030', customer_id: 'cus_before' },
  ]);
  expect(await keptKeyAccount(pool, serverSecret, 'sk_test_before_0001')).toBe('before-0030');
  expect(await keptKeyAccount(pool, serverSecret, 'sk_test_another_0002')).toBeNull();
  // one customer per tenant, mode and account
  await pool.query(`insert into stripe_customers (tenant_id, livemode, key_account, customer_id) values ($1, false, 'acct_1Other', 'cus_other')`, [
    tenant,
  ]);
  await expect(
    pool.query(`insert into stripe_customers (tenant_id, livemode, key_account, customer_id) values ($1, false, 'acct_1Other', 'cus_third')`, [tenant]),
  ).rejects.toMatchObject({ constraint: 'stripe_customers_pkey' });
});
