import { expect } from 'vitest';
import { checkout, eventsSettled, grantRow, type PaymentTenant, type PaymentsStack } from './payments.js';
import { createWorld } from './world.js';

/**
 * A tenant with a provider, a price (a job of 10,000 + 5,000 tokens reserves 0.02) and a
 * checkout paid by card with every event Stripe sends (so its card is known), the
 * payments workers stopped again: ready for auto-recharge.
 */
export async function payingWorld(stack: PaymentsStack, amount = '10.00') {
  const world = await createWorld(stack.admin, { credit: '0' });
  const payer: PaymentTenant = { tenantId: world.tenantId, tenant: world.tenant, walletId: world.walletId };
  await stack.startWorkers(1);
  const session = await checkout(payer, amount);
  for (const event of await stack.stripe.completeCheckout(session.id, { send: false })) await stack.send(event);
  await eventsSettled(stack.db.pool);
  expect((await grantRow(stack.db.pool, session.grant_id)).status).toBe('active');
  await stack.stopWorkers();
  return { world, payer, session };
}

/** PUT the wallet's auto-recharge as its tenant; 200 expected. */
export async function autoRecharge(payer: PaymentTenant, body: Record<string, unknown>) {
  const answer = await payer.tenant.request('PUT', `/v1/wallets/${payer.walletId}/auto-recharge`, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}
