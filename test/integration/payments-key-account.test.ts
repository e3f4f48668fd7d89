import { afterEach, expect, it } from 'vitest';
import { assertLedgerInvariants } from '../support/invariants.js';
import { STRIPE_KEY, STRIPE_SECRET, checkout, eventsSettled, paymentTenant, paymentsStack, type PaymentTenant } from '../support/payments.js';
import { autoRecharge } from '../support/paying-world.js';

/**
 * A tenant's Stripe customer belongs to the account that created it (issue 33, item 10;
 * migration 0030). After the operator puts a key of another account, a checkout makes a
 * customer in that account instead of naming one Stripe no longer knows, and no recharge
 * charges a card the new account does not have; a key rolled in the same account keeps
 * the customer and its card. The local Stripe scopes customers by the key's account, as
 * Stripe does ("No such customer").
 */
const OTHER_KEY = 'sk_test_tally_other_account_0001';
const ROLLED_KEY = 'sk_test_tally_rolled_same_0002';
const stack = await paymentsStack({
  stripe: { accounts: { [STRIPE_KEY]: 'acct_1First', [OTHER_KEY]: 'acct_1Second', [ROLLED_KEY]: 'acct_1First' } },
});
afterEach(async () => {
  await stack.stopWorkers();
  await assertLedgerInvariants(stack.db.pool);
});

const q = async <T extends object = any>(sql: string, values: unknown[] = []) => (await stack.db.pool.query<T>(sql, values)).rows;

async function putKey(apiKey: string) {
  const answer = await stack.admin.request('PUT', '/v1/payment-settings/stripe', {
    api_key: apiKey,
    webhook_secrets: [STRIPE_SECRET],
    base_url: stack.stripe.url,
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return (await q<{ key_account: string }>(`select key_account from payment_settings`))[0]!.key_account;
}

async function paidCheckout(payer: PaymentTenant, amount: string, paymentMethod: string) {
  const session = await checkout(payer, amount);
  for (const event of await stack.stripe.completeCheckout(session.id, { send: false, paymentMethod })) await stack.send(event);
  await eventsSettled(stack.db.pool);
  return session;
}

const blockedReason = async (payer: PaymentTenant) =>
  (await payer.tenant.get(`/v1/wallets/${payer.walletId}/auto-recharge`)).body.blocked_reason as string | null;

it("keeps each account's customers apart: another account's key makes a new customer; a rolled key of the first keeps its card", async () => {
  expect(await putKey(STRIPE_KEY)).toBe('acct_1First');
  const payer = await paymentTenant(stack);
  await stack.startWorkers(1);
  await paidCheckout(payer, '10.00', 'pm_card_visa');
  await autoRecharge(payer, { enabled: true, threshold: '5.00', target: '20.00' });
  expect(await blockedReason(payer)).toBeNull();
  const [first] = await q<{ customer_id: string }>(`select customer_id from stripe_customers where tenant_id = $1`, [payer.tenantId]);

  // Another account: its customers are not the first's; no card known there yet.
  expect(await putKey(OTHER_KEY)).toBe('acct_1Second');
  expect(await blockedReason(payer)).toBe('no_payment_method');
  const second = await paidCheckout(payer, '7.00', 'pm_card_mastercard');
  const sessionCustomer = stack.stripe.sessions.get(second.id)!.customer as string;
  expect(sessionCustomer).not.toBe(first!.customer_id);
  expect(await q(`select key_account, payment_method from stripe_customers where tenant_id = $1 order by key_account`, [payer.tenantId])).toEqual([
    { key_account: 'acct_1First', payment_method: 'pm_card_visa' },
    { key_account: 'acct_1Second', payment_method: 'pm_card_mastercard' },
  ]);
  expect((await payer.tenant.get(`/v1/wallets/${payer.walletId}`)).body.balance).toBe('17.000000');

  // A key rolled in the first account finds its customer and card again.
  expect(await putKey(ROLLED_KEY)).toBe('acct_1First');
  expect(await blockedReason(payer)).toBeNull();
  const third = await checkout(payer, '1.00');
  expect(stack.stripe.sessions.get(third.id)!.customer).toBe(first!.customer_id);
});

it('stands a fingerprint of the key in for an account Stripe does not name, and keeps what it learnt when the same key is put again', async () => {
  stack.stripe.failNext(1, /^\/v1\/account$/, 403);
  const fingerprint = await putKey(OTHER_KEY + 'x');
  expect(fingerprint).toMatch(/^key:[0-9a-f]{32}$/);
  const asked = () => stack.stripe.requests.filter((r) => r.path === '/v1/account').length;
  const before = asked();
  expect(await putKey(OTHER_KEY + 'x')).toBe(fingerprint);
  expect(asked()).toBe(before);
  expect(await putKey(STRIPE_KEY)).toBe('acct_1First');
});
