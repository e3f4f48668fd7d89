import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Pool } from '../../src/db/pool.js';
import { ADMIN_TOKEN } from '../support/server.js';
import { TEST_SECRET } from '../support/client.js';
import { call, type FuzzAnswer, type Transport } from './transport.js';

/**
 * The world the fuzzer aims at, built over the public API: real ids, a funded wallet, a
 * provider whose secret we know and jobs its webhooks can name, so mutated requests get
 * past authentication and lookups into the deep code (pricing, reservation, intake).
 */
export interface FuzzWorld {
  adminToken: string;
  tenantId: string;
  apiKey: string;
  otherTenantId: string;
  otherApiKey: string;
  walletId: string;
  otherWalletId: string;
  /** generic provider whose webhooks are fuzzed; never PATCHed (its secret must stay known) */
  provider: string;
  secret: string;
  /** a provider the PATCH route may change */
  patchProvider: string;
  /** 1.00 / 2.00 per million input / output tokens */
  cheapModel: string;
  /** the largest unit price there is: reservations for large limits go beyond any amount */
  dearModel: string;
  /** models PUT may publish new versions of */
  putModels: string[];
  /** a reserved job with a provider_job_ref */
  jobId: string;
  jobRef: string;
  /** a job without a ref, for PATCH */
  bareJobId: string;
  /** another tenant's job */
  otherJobId: string;
  /** an event the seed dead-lettered, for retry and discard */
  deadEventKey: string;
  acceptedEventKey: string;
}

export const MAX_UNIT_PRICE = '1000000000000';

function expectStatus(answer: FuzzAnswer, status: number, what: string): any {
  if (answer.status !== status) throw new Error(`seeding ${what}: expected ${status}, got ${answer.status} ${answer.text}`);
  return answer.json;
}

export function signWebhook(secret: string, id: string, timestamp: Date, body: string): string {
  return new Webhook(secret).sign(id, timestamp, body);
}

export async function seedWorld(transport: Transport, pool: Pool): Promise<FuzzWorld> {
  const admin = ADMIN_TOKEN;
  const suffix = randomUUID().slice(0, 6);
  const tenant = expectStatus(await call(transport, 'POST', '/v1/tenants', admin, { name: `fuzz-${suffix}` }), 201, 'tenant');
  const other = expectStatus(await call(transport, 'POST', '/v1/tenants', admin, { name: `fuzz-other-${suffix}` }), 201, 'other tenant');
  const provider = `fuzz-gen-${suffix}`;
  expectStatus(
    await call(transport, 'POST', '/v1/providers', admin, { name: provider, kind: 'generic', secrets: [TEST_SECRET] }),
    201,
    'provider',
  );
  const patchProvider = `fuzz-patch-${suffix}`;
  expectStatus(
    await call(transport, 'POST', '/v1/providers', admin, {
      name: patchProvider,
      kind: 'generic',
      secrets: [TEST_SECRET],
      policies: { failed_with_usage: 'capture' },
    }),
    201,
    'patch provider',
  );
  const cheapModel = `fuzz/cheap-${suffix}`;
  const dearModel = `fuzz-dear-${suffix}`;
  const putModels = [`fuzz-put-${suffix}`, `fuzz/put/${suffix}`];
  const prices: [string, Record<string, string>][] = [
    [cheapModel, { input_tokens: '1.00', output_tokens: '2.00' }],
    [dearModel, { input_tokens: MAX_UNIT_PRICE, output_tokens: MAX_UNIT_PRICE }],
    ...putModels.map((m) => [m, { input_tokens: '0.5' }] as [string, Record<string, string>]),
  ];
  for (const [model, unitPrices] of prices) {
    expectStatus(
      await call(transport, 'PUT', `/v1/prices/${encodeURIComponent(model)}`, admin, { currency: 'USD', unit_prices: unitPrices }),
      201,
      `price ${model}`,
    );
  }
  const wallet = expectStatus(await call(transport, 'POST', '/v1/wallets', tenant.api_key, { currency: 'USD' }), 201, 'wallet');
  const otherWallet = expectStatus(await call(transport, 'POST', '/v1/wallets', other.api_key, { currency: 'USD' }), 201, 'other wallet');
  for (const [id, amount] of [
    [wallet.id, '100000.00'],
    [otherWallet.id, '10.00'],
  ]) {
    expectStatus(
      await call(transport, 'POST', `/v1/wallets/${id}/credits`, admin, { amount }, { 'idempotency-key': randomUUID() }),
      201,
      'credit',
    );
  }
  const jobRef = `pj-fuzz-${suffix}`;
  const submit = async (apiKey: string, walletId: string, extra: Record<string, unknown> = {}) =>
    expectStatus(
      await call(
        transport,
        'POST',
        '/v1/jobs',
        apiKey,
        { wallet_id: walletId, model: cheapModel, provider, limits: { input_tokens: 1000, output_tokens: 1000 }, ...extra },
        { 'idempotency-key': randomUUID() },
      ),
      201,
      'job',
    ).id as string;
  const jobId = await submit(tenant.api_key, wallet.id, { provider_job_ref: jobRef });
  const bareJobId = await submit(tenant.api_key, wallet.id);
  const deadJobId = await submit(tenant.api_key, wallet.id);
  const otherJobId = await submit(other.api_key, otherWallet.id);

  // Two accepted events (no worker runs in the fuzzed app); one of them dead-lettered.
  const deliver = async (jobIdToName: string) => {
    const id = `msg_seed_${randomUUID()}`;
    const body = JSON.stringify({ type: 'job.started', data: { job_id: jobIdToName } });
    const now = new Date();
    const answer = await transport({
      method: 'POST',
      url: `/v1/webhooks/${provider}`,
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': signWebhook(TEST_SECRET, id, now, body),
      },
      body,
    });
    expectStatus(answer, 200, 'webhook');
    return id;
  };
  const acceptedEventKey = await deliver(jobId);
  const deadEventKey = await deliver(deadJobId);
  await pool.query(
    `update webhook_events set state = 'dead', attempts = 5, last_error = 'seeded dead letter' where provider = $1 and event_key = $2`,
    [provider, deadEventKey],
  );
  return {
    adminToken: admin,
    tenantId: tenant.id,
    apiKey: tenant.api_key,
    otherTenantId: other.id,
    otherApiKey: other.api_key,
    walletId: wallet.id,
    otherWalletId: otherWallet.id,
    provider,
    secret: TEST_SECRET,
    patchProvider,
    cheapModel,
    dearModel,
    putModels,
    jobId,
    jobRef,
    bareJobId,
    otherJobId,
    deadEventKey,
    acceptedEventKey,
  };
}
