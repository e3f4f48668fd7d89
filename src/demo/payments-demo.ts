import { randomBytes, randomUUID } from 'node:crypto';
import type { Pool } from '../db/pool.js';
import { sleep } from '../backoff.js';
import { formatAmount } from '../money/index.js';
import { reconcile } from '../reconcile/run.js';
import { LocalStripe, sendStripeEvent } from '../simulator/stripe/index.js';
import { PaymentsWorker } from '../worker/payments-worker.js';

/**
 * The payments part of `tally demo` (docs/payments.md): against the local Stripe, a
 * Checkout top-up (its events delivered twice each, signed) and an auto-recharge decided
 * by the reservation that takes the wallet below its threshold and charged by the
 * payments worker with the grant's Idempotency-Key. Prints what happened and whether it
 * is exact: one grant per payment, one payment intent per recharge, reconciliation clean.
 */
export interface PaymentsDemoContext {
  pool: Pool;
  baseUrl: string;
  adminToken: string;
  serverSecret: Buffer;
  /** a provider and model with a price in USD, for the jobs whose reservations trigger the recharge */
  provider: string;
  model: string;
}

const LIMITS = { input_tokens: 1_000_000, output_tokens: 200_000 };

export async function runPaymentsDemo(context: PaymentsDemoContext): Promise<boolean> {
  const { pool, baseUrl, adminToken } = context;
  const webhookSecret = `whsec_${randomBytes(24).toString('base64')}`;
  const stripe = await LocalStripe.start({ deliverTo: { url: baseUrl, secret: webhookSecret } });
  const worker = new PaymentsWorker(() => pool, {
    serverSecret: context.serverSecret,
    leaseSeconds: 30,
    pollIntervalMs: 100,
    log: { info: () => {}, warn: () => {} },
  });
  worker.start();
  const call = async (method: string, path: string, body: unknown, token = adminToken, key?: string) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await response.json()) as any;
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };
  const line = (label: string, value: string | number) => console.log(`  ${label.padEnd(44)} ${value}`);
  try {
    console.log('\nPayments (a local Stripe, signed events, the payments worker)');
    await call('PUT', '/v1/payment-settings/stripe', {
      api_key: 'sk_test_tally_demo',
      webhook_secrets: [webhookSecret],
      base_url: stripe.url,
    });
    const tenant = await call('POST', '/v1/tenants', { name: 'demo-card-payer' });
    const wallet = await call('POST', '/v1/wallets', { currency: 'USD' }, tenant.api_key);

    // A Checkout top-up: grant awaiting payment, session, the customer pays, Stripe's events (each twice).
    const session = await call(
      'POST',
      `/v1/wallets/${wallet.id}/checkout-sessions`,
      { amount: '20.00', success_url: 'https://example.com/paid', cancel_url: 'https://example.com/canceled' },
      tenant.api_key,
      randomUUID(),
    );
    line('checkout session', `${session.id} for grant ${session.grant_id}`);
    const events = await stripe.completeCheckout(session.id, { send: false });
    for (const event of [...events, ...events]) await sendStripeEvent(baseUrl, event, webhookSecret);
    await until(async () => (await grantState(pool, session.grant_id)) === 'active');
    line('events delivered (each twice)', `${events.length * 2}: ${events.map((e) => e.type).join(', ')}`);
    line('wallet after the checkout', `${(await call('GET', `/v1/wallets/${wallet.id}`, undefined, tenant.api_key)).available} USD`);

    // Auto-recharge: below 15.00, back up to 50.00; a job reserving 6.00 takes it to 14.00.
    await call('PUT', `/v1/wallets/${wallet.id}/auto-recharge`, { enabled: true, threshold: '15.00', target: '50.00' }, tenant.api_key);
    const job = await call(
      'POST',
      '/v1/jobs',
      { wallet_id: wallet.id, model: context.model, provider: context.provider, limits: LIMITS },
      tenant.api_key,
      randomUUID(),
    );
    line('a job reserves', `${job.reserved} USD: available falls below 15.00`);
    const recharge = await pool.query<{ id: string; amount: bigint }>(
      `select id, amount from grants where wallet_id = $1 and source = 'auto_recharge'`,
      [wallet.id],
    );
    line('recharge decided in that transaction', `${formatAmount(recharge.rows[0]!.amount)} USD (grant ${recharge.rows[0]!.id})`);
    await until(async () => (await grantState(pool, recharge.rows[0]!.id)) === 'active');
    const after = await call('GET', `/v1/wallets/${wallet.id}`, undefined, tenant.api_key);
    line('wallet after the recharge', `${after.available} USD available (${after.reserved} reserved)`);

    await until(
      async () => (await pool.query(`select 1 from stripe_events where state in ('pending', 'processing') limit 1`)).rowCount === 0,
    );
    const grants = await pool.query<{ n: number }>(
      `select count(*)::int as n from grants where wallet_id = $1 and activated_at is not null`,
      [wallet.id],
    );
    const intents = stripe.paymentIntentCount((pi) => (pi.metadata as Record<string, string>).tally_wallet_id === wallet.id);
    line('grants paid (one per payment)', grants.rows[0]!.n);
    line('payment intents at Stripe', intents);
    const run = await reconcile(pool);
    line('reconciliation', run.clean ? 'clean' : `${run.exceptions.length} exceptions`);
    const exact = grants.rows[0]!.n === 2 && intents === 2 && run.clean && after.available === '50.000000';
    console.log(exact ? 'Payments are exact: one grant per payment, one charge per recharge.' : 'Payments are NOT exact.');
    return exact;
  } finally {
    await worker.stop();
    await stripe.close();
  }
}

async function grantState(pool: Pool, grantId: string): Promise<string> {
  const result = await pool.query<{ state: string }>(
    `select case when activated_at is not null then 'active' when canceled_at is not null then 'canceled' else 'awaiting_payment' end as state from grants where id = $1`,
    [grantId],
  );
  return result.rows[0]?.state ?? 'missing';
}

async function until(condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('the payments demo waited too long for the worker');
    await sleep(100);
  }
}
