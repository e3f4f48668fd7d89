import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readPaymentSettings } from '../../src/funds/payments/settings.js';
import { requeueDeadStripeEvent } from '../../src/funds/payments/stripe-events.js';
import { stripeClient } from '../../src/funds/payments/stripe-client.js';
import { syncStripeEvents } from '../../src/funds/payments/sync.js';
import { sealSecretsAtStart } from '../../src/cli/seal-at-start.js';
import { stripeEvent, type StripeEvent } from '../../src/simulator/stripe/index.js';
import { STRIPE_KEY, STRIPE_SECRET, eventState, eventsSettled, paymentTenant, paymentsStack, walletMoney } from '../support/payments.js';

/**
 * Issue 33, items 7, 8 and 9 (Stripe's side), on real PostgreSQL with the real app, the
 * local Stripe and payments workers running:
 * 7. a signed event of a Connect account (top-level `account`) naming a victim's wallet is
 *    refused (400 connect_account_refused), stored as refused and never applied — through
 *    the webhook and through `tally payments sync`; an `account` configured (an
 *    extension) is accepted, no other;
 * 8. a Stripe-Signature with two `t=` is checked on the `t` Stripe's SDK verifies;
 * 9. the webhook secrets are sealed at rest; one stored in the clear (before 0027) still
 *    verifies, and is sealed at start.
 */
const stack = await paymentsStack();
await stack.startWorkers(2);
const pool = stack.db.pool;

const quiet = { info: () => {}, warn: () => {} };
const newId = (prefix: string) => `${prefix}_${randomUUID().replaceAll('-', '')}`;

/** A payment naming only a wallet: applied, it creates a paid grant of amount_received (CONTRACT.md). */
function walletPayment(walletId: string, cents: number, account?: string): StripeEvent & { account?: string } {
  const pi = newId('pi');
  const event = stripeEvent(
    'payment_intent.succeeded',
    { id: pi, object: 'payment_intent', amount: cents, amount_received: cents, currency: 'usd', metadata: { tally_wallet_id: walletId } },
    newId('evt'),
  );
  return account === undefined ? event : { ...event, account };
}

async function putSettings(extra: Record<string, unknown> = {}, secrets = [STRIPE_SECRET]) {
  return stack.admin.request('PUT', '/v1/payment-settings/stripe', {
    api_key: STRIPE_KEY,
    webhook_secrets: secrets,
    base_url: stack.stripe.url,
    ...extra,
  });
}

const storedSecrets = async () =>
  (await pool.query<{ webhook_secrets: string[] }>(`select webhook_secrets from payment_settings where processor = 'stripe'`)).rows[0]!
    .webhook_secrets;

describe('Connect events (item 7)', () => {
  it("refuses a signed event naming another account and a victim's wallet: 400 connect_account_refused, stored as refused, never applied", async () => {
    const victim = await paymentTenant(stack);
    const forged = walletPayment(victim.walletId, 5000, 'acct_1Attacker');
    const answer = await stack.send(forged);
    expect(answer.status, JSON.stringify(answer.body)).toBe(400);
    expect(answer.body.error.code).toBe('connect_account_refused');
    expect(answer.body.error.message).toContain('acct_1Attacker');
    const again = await stack.send(forged);
    expect([again.status, again.body.error.code]).toEqual([400, 'connect_account_refused']);

    // The workers settle a later event of the platform; the refused one is never claimed.
    const later = walletPayment(victim.walletId, 100);
    expect((await stack.send(later)).status).toBe(200);
    await eventsSettled(pool);
    expect(await eventState(pool, later.id)).toMatchObject({ state: 'applied' });
    expect(await eventState(pool, forged.id)).toMatchObject({ state: 'refused', reason: 'connect_account_refused' });
    expect((await walletMoney(pool, victim.walletId)).balance).toBe(1_000_000n); // the 1.00 of `later`, not the 50.00
    const payment = await pool.query('select 1 from stripe_payments where payment_intent = $1', [forged.data.object.id]);
    expect(payment.rowCount).toBe(0);
    // and an operator's retry does not re-queue it: only dead events are
    expect(await requeueDeadStripeEvent(pool, forged.id)).toBe(false);
  });

  it('accepts the configured account (an extension of PUT /v1/payment-settings/stripe) and no other; without it, none', async () => {
    const payer = await paymentTenant(stack);
    const configured = await putSettings({ account: 'acct_1Operator' });
    expect(configured.status, JSON.stringify(configured.body)).toBe(200);
    expect(configured.body.account).toBe('acct_1Operator');
    expect((await stack.admin.get('/v1/payment-settings/stripe')).body.account).toBe('acct_1Operator');

    const own = walletPayment(payer.walletId, 200, 'acct_1Operator');
    const platform = walletPayment(payer.walletId, 300);
    const other = walletPayment(payer.walletId, 400, 'acct_1Other');
    expect((await stack.send(own)).status).toBe(200);
    expect((await stack.send(platform)).status).toBe(200);
    const refused = await stack.send(other);
    expect([refused.status, refused.body.error.code]).toEqual([400, 'connect_account_refused']);
    expect(refused.body.error.message).toContain('only acct_1Operator is configured');
    await eventsSettled(pool);
    expect((await walletMoney(pool, payer.walletId)).balance).toBe(5_000_000n);

    // A PUT without `account` configures none again (every field of a PUT is replaced).
    const reset = await putSettings();
    expect([reset.status, reset.body.account]).toEqual([200, null]);
    const now = await stack.send(walletPayment(payer.walletId, 500, 'acct_1Operator'));
    expect([now.status, now.body.error.code]).toEqual([400, 'connect_account_refused']);
  });

  it('refuses a malformed account with 400 in the error shape, changing nothing', async () => {
    const answer = await putSettings({ account: 'not-an-account' });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('account') });
    expect((await stack.admin.get('/v1/payment-settings/stripe')).body.account).toBeNull();
  });

  it('tally payments sync refuses the same events: a Connect event listed by the Events API is stored as refused', async () => {
    const victim = await paymentTenant(stack);
    const since = Math.floor(Date.now() / 1000);
    const forged = walletPayment(victim.walletId, 5000, 'acct_1Attacker');
    const fine = walletPayment(victim.walletId, 100);
    stack.stripe.events.push(forged, fine);
    const settings = (await readPaymentSettings(pool))!;
    const report = await syncStripeEvents(pool, stripeClient({ apiKey: STRIPE_KEY, baseUrl: stack.stripe.url }), settings, since);
    expect(report.refused).toBeGreaterThanOrEqual(1);
    await eventsSettled(pool);
    expect(await eventState(pool, forged.id)).toMatchObject({ state: 'refused', reason: 'connect_account_refused' });
    expect(await eventState(pool, fine.id)).toMatchObject({ state: 'applied' });
    expect((await walletMoney(pool, victim.walletId)).balance).toBe(1_000_000n);
  });
});

describe('Stripe-Signature with several t= (item 8)', () => {
  const sign = (payload: string, timestamp: number, secret = STRIPE_SECRET) =>
    createHmac('sha256', secret).update(`${timestamp}.${payload}`).digest('hex');

  it('refuses a signature over a far-future t hidden behind a current one: 401 invalid_signature, nothing stored', async () => {
    const payer = await paymentTenant(stack);
    const event = walletPayment(payer.walletId, 100);
    const payload = JSON.stringify(event);
    const now = Math.floor(Date.now() / 1000);
    const future = now + 30 * 24 * 3600; // replayable for a month past the tolerance
    const answer = await stack.send(payload, { signature: `t=${now},t=${future},v1=${sign(payload, future)}` });
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe('invalid_signature');
    expect(await eventState(pool, event.id)).toBeNull();
  });

  it('reads the last t= as Stripe does: a current t after a stale one verifies', async () => {
    const payer = await paymentTenant(stack);
    const event = walletPayment(payer.walletId, 100);
    const payload = JSON.stringify(event);
    const now = Math.floor(Date.now() / 1000);
    const answer = await stack.send(payload, { signature: `t=${now + 10_000},t=${now},v1=${sign(payload, now)}` });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    await eventsSettled(pool);
  });
});

describe('Stripe webhook secrets at rest (item 9)', () => {
  it('stores each secret sealed, never as it is; rotation keeps both verifying', async () => {
    const second = `whsec_${randomBytes(24).toString('base64')}`;
    expect((await putSettings({}, [STRIPE_SECRET, second])).status).toBe(200);
    const stored = await storedSecrets();
    expect(stored).toHaveLength(2);
    for (const value of stored) expect(value.startsWith('sealed:v1:')).toBe(true);
    expect(JSON.stringify(stored)).not.toContain(STRIPE_SECRET.slice('whsec_'.length));
    expect(JSON.stringify(stored)).not.toContain(second.slice('whsec_'.length));
    const payer = await paymentTenant(stack);
    expect((await stack.send(walletPayment(payer.walletId, 100), { secret: second })).status).toBe(200);
    expect((await stack.send(walletPayment(payer.walletId, 100))).status).toBe(200);
    expect((await putSettings()).status).toBe(200);
    const dropped = await stack.send(walletPayment(payer.walletId, 100), { secret: second });
    expect([dropped.status, dropped.body.error.code]).toEqual([401, 'invalid_signature']);
    await eventsSettled(pool);
  });

  it('verifies with a secret stored in the clear before 0027, and seals it at start without another secret sealing anything', async () => {
    const old = `whsec_${randomBytes(24).toString('base64')}`;
    await pool.query(`update payment_settings set webhook_secrets = $1 where processor = 'stripe'`, [[old]]);
    const payer = await paymentTenant(stack);
    expect((await stack.send(walletPayment(payer.walletId, 100), { secret: old })).status).toBe(200);

    // A process with another server secret opens nothing sealed here: it seals nothing.
    const warnings: string[] = [];
    await sealSecretsAtStart(pool, randomBytes(32), { info: () => {}, warn: (_o, msg) => warnings.push(msg ?? '') });
    expect(await storedSecrets()).toEqual([old]);
    expect(warnings.join()).toMatch(/another server secret/);

    await sealSecretsAtStart(pool, stack.serverSecret, quiet);
    const [sealed] = await storedSecrets();
    expect(sealed!.startsWith('sealed:v1:')).toBe(true);
    expect(sealed).not.toContain(old.slice('whsec_'.length));
    expect((await stack.send(walletPayment(payer.walletId, 100), { secret: old })).status).toBe(200);
    await sealSecretsAtStart(pool, stack.serverSecret, quiet);
    expect(await storedSecrets()).toEqual([sealed]); // sealed once: nothing left in the clear
    await eventsSettled(pool);
    expect((await putSettings()).status).toBe(200);
  });
});
