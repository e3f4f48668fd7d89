import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, expect } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.js';
import type { Pool } from '../../src/db/pool.js';
import { PaymentsWorker } from '../../src/worker/payments-worker.js';
import { destinationPolicy } from '../../src/outbound/destinations.js';
import { LocalStripe, sendStripeEvent, type LocalStripeOptions, type StripeEvent } from '../../src/simulator/stripe/index.js';
import { Client } from './client.js';
import { freshDatabase, type TestDatabase } from './database.js';
import { ADMIN_TOKEN, waitUntil } from './server.js';

export const STRIPE_SECRET = 'whsec_dGFsbHktdGVzdC1zdHJpcGUtc2VjcmV0';
export const STRIPE_KEY = 'sk_test_tally_local_0123456789';

const quiet = { info: () => {}, warn: () => {} };

/**
 * A payments test's world, in process: the real app on a port of its own over a fresh
 * database, the local Stripe, and payments workers started on demand. Stopped after the file.
 */
export interface PaymentsStack {
  db: TestDatabase;
  app: FastifyInstance;
  url: string;
  admin: Client;
  stripe: LocalStripe;
  serverSecret: Buffer;
  startWorkers(count?: number, options?: { leaseSeconds?: number }): Promise<PaymentsWorker[]>;
  stopWorkers(): Promise<void>;
  send(
    event: StripeEvent | string,
    options?: { timestamp?: number; signature?: string; secret?: string },
  ): Promise<{ status: number; body: any }>;
}

export async function paymentsStack(options: { poolMax?: number; stripe?: LocalStripeOptions } = {}): Promise<PaymentsStack> {
  const db = await freshDatabase({ max: options.poolMax ?? 40 });
  const serverSecret = randomBytes(32);
  const app = await buildApp({
    pool: db.pool,
    logLevel: 'silent',
    serverSecret,
    checkResponses: true,
    settings: { adminToken: ADMIN_TOKEN, destinations: destinationPolicy({ TALLY_OUTBOUND_ALLOW: '127.0.0.1' }) },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const stripe = await LocalStripe.start(options.stripe);
  const admin = new Client(url);
  const settings = await admin.request('PUT', '/v1/payment-settings/stripe', {
    api_key: STRIPE_KEY,
    webhook_secrets: [STRIPE_SECRET],
    base_url: stripe.url,
  });
  expect(settings.status, JSON.stringify(settings.body)).toBe(200);
  let workers: PaymentsWorker[] = [];
  const stack: PaymentsStack = {
    db,
    app,
    url,
    admin,
    stripe,
    serverSecret,
    async startWorkers(count = 1, workerOptions = {}) {
      const started = Array.from(
        { length: count },
        () =>
          new PaymentsWorker(() => db.pool, {
            serverSecret,
            leaseSeconds: workerOptions.leaseSeconds ?? 30,
            pollIntervalMs: 50,
            log: quiet,
          }),
      );
      for (const w of started) w.start();
      workers.push(...started);
      return started;
    },
    async stopWorkers() {
      await Promise.all(workers.map((w) => w.stop()));
      workers = [];
    },
    send(event, sendOptions = {}) {
      return sendStripeEvent(url, event, sendOptions.secret ?? STRIPE_SECRET, sendOptions);
    },
  };
  afterAll(async () => {
    await stack.stopWorkers();
    await stripe.close();
    await app.close();
  });
  return stack;
}

export interface PaymentTenant {
  tenantId: string;
  tenant: Client;
  walletId: string;
}

export async function paymentTenant(stack: PaymentsStack, currency = 'USD'): Promise<PaymentTenant> {
  const tenant = await stack.admin.post('/v1/tenants', { name: `payer-${randomUUID().slice(0, 8)}` });
  expect(tenant.status).toBe(201);
  const client = stack.admin.as(tenant.body.api_key);
  const wallet = await client.post('/v1/wallets', { currency });
  expect(wallet.status).toBe(201);
  return { tenantId: tenant.body.id, tenant: client, walletId: wallet.body.id };
}

/** A Checkout top-up through the API: the session's id and url, and its grant. */
export async function checkout(payer: PaymentTenant, amount: string, key = randomUUID()) {
  const answer = await payer.tenant.post(
    `/v1/wallets/${payer.walletId}/checkout-sessions`,
    { amount, success_url: 'https://example.com/ok', cancel_url: 'https://example.com/cancel' },
    { 'idempotency-key': key },
  );
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body as { id: string; url: string; grant_id: string };
}

export async function grantRow(pool: Pool, grantId: string) {
  const result = await pool.query<{
    status: string;
    activated_at: Date | null;
    canceled_at: Date | null;
    disputed: boolean;
    remaining: bigint;
    amount: bigint;
    source: string;
    payment: any;
  }>(
    `select activated_at, canceled_at, disputed, remaining, amount, source, payment,
            case when canceled_at is not null and activated_at is null then 'canceled' when activated_at is null then 'awaiting_payment'
                 when disputed then 'disputed' else 'active' end as status
     from grants where id = $1`,
    [grantId],
  );
  return result.rows[0]!;
}

export async function walletMoney(pool: Pool, walletId: string) {
  const result = await pool.query<{ balance: bigint; debt: bigint }>(
    `select credits_posted - debits_posted as balance, debt from accounts where id = $1`,
    [walletId],
  );
  return result.rows[0]!;
}

/** Waits until every Stripe event received is settled (applied, no_effect, refused or dead). */
export async function eventsSettled(pool: Pool, timeoutMs = 30_000): Promise<void> {
  await waitUntil(async () => {
    const open = await pool.query(`select 1 from stripe_events where state in ('pending', 'processing') limit 1`);
    return open.rowCount === 0;
  }, timeoutMs);
}

export async function eventState(pool: Pool, id: string) {
  const result = await pool.query<{ state: string; reason: string | null; conflicts: number }>(
    'select state, reason, conflicts from stripe_events where id = $1',
    [id],
  );
  return result.rows[0] ?? null;
}

/** Shuffles in place (Fisher–Yates) with Math.random: any order. */
export function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}
