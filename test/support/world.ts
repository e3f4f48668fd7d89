import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { Client, TEST_SECRET } from './client.js';

/** Sets up, over the public API only, what most end-to-end tests need. */
export async function createWorld(admin: Client, options: { credit?: string; policies?: Record<string, unknown>; prices?: Record<string, string>; model?: string } = {}) {
  const suffix = randomUUID().slice(0, 8);
  const tenant = await admin.post('/v1/tenants', { name: `tenant-${suffix}` });
  expect(tenant.status).toBe(201);
  const provider = `gen-${suffix}`;
  const p = await admin.post('/v1/providers', { name: provider, kind: 'generic', secrets: [TEST_SECRET], ...(options.policies ? { policies: options.policies } : {}) });
  expect(p.status).toBe(201);
  const model = options.model ?? `model-${suffix}`;
  const price = await admin.request('PUT', `/v1/prices/${encodeURIComponent(model)}`, {
    currency: 'USD',
    unit_prices: options.prices ?? { input_tokens: '1.00', output_tokens: '2.00' },
  });
  expect(price.status).toBe(201);
  const tenantClient = admin.as(tenant.body.api_key);
  const wallet = await tenantClient.post('/v1/wallets', { currency: 'USD' });
  expect(wallet.status).toBe(201);
  if (options.credit !== '0') {
    const credit = await admin.post(`/v1/wallets/${wallet.body.id}/credits`, { amount: options.credit ?? '1000.00' }, { 'idempotency-key': `credit-${suffix}` });
    expect(credit.status).toBe(201);
  }
  return { tenantId: tenant.body.id as string, apiKey: tenant.body.api_key as string, tenant: tenantClient, provider, model, walletId: wallet.body.id as string };
}

export type World = Awaited<ReturnType<typeof createWorld>>;

export async function submitJob(world: World, limits: Record<string, number> = { input_tokens: 10_000, output_tokens: 5_000 }, extra: Record<string, unknown> = {}) {
  const job = await world.tenant.post(
    '/v1/jobs',
    { wallet_id: world.walletId, model: world.model, provider: world.provider, limits, ...extra },
    { 'idempotency-key': randomUUID() },
  );
  expect(job.status, JSON.stringify(job.body)).toBe(201);
  return job.body as { id: string; reserved: string; state: string; price_version: number };
}

export function completion(world: World, jobId: string, usage: Record<string, number>, type = 'job.completed', extraData: Record<string, unknown> = {}) {
  return {
    type,
    timestamp: new Date().toISOString(),
    data: { job_id: jobId, tenant_id: world.tenantId, model: world.model, currency: 'USD', usage, ...extraData },
  };
}
