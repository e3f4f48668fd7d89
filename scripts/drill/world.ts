import { randomBytes } from 'node:crypto';
import type { Usage } from './app.js';
import { client, expectCreated, type Call } from './client.js';
import type { UnitPrices } from './money.js';

/**
 * What the drill sets up over Tally's HTTP API before the load, as an operator would: a
 * generic provider with its webhook signing secret, a priced model, and tenants each
 * with a USD wallet credited once.
 */

/** Odd unit prices, so that per-dimension half-up rounding matters to the micro. */
export const UNIT_PRICES: UnitPrices = { input_tokens: '2.500001', output_tokens: '7.123457' };
export const LIMITS: Usage = { input_tokens: 20_000, output_tokens: 4_000 };
export const FIRST_CREDIT = '1000.00';
export const CURRENCY = 'USD';

export interface Tenant {
  id: string;
  apiKey: string;
  walletId: string;
  call: Call;
}

export interface World {
  baseUrl: string;
  admin: Call;
  provider: string;
  secret: string;
  model: string;
  tenants: Tenant[];
}

export async function createWorld(baseUrl: string, adminToken: string, tenants: number): Promise<World> {
  const admin = client(baseUrl, adminToken);
  const suffix = randomBytes(4).toString('hex');
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const provider = `drill-${suffix}`;
  // A long cancel grace: a tenant's cancel racing the completion is decided by the
  // completion, which always arrives within it.
  expectCreated(
    'create provider',
    await admin('POST', '/v1/providers', { name: provider, kind: 'generic', secrets: [secret], policies: { cancel_grace_seconds: 600 } }),
  );
  const model = `drill/model-${suffix}`;
  expectCreated(
    'publish price',
    await admin('PUT', `/v1/prices/${encodeURIComponent(model)}`, { currency: CURRENCY, unit_prices: UNIT_PRICES }),
  );
  const created: Tenant[] = [];
  for (let i = 0; i < tenants; i++) {
    const tenant = expectCreated('create tenant', await admin('POST', '/v1/tenants', { name: `drill-tenant-${suffix}-${i}` }));
    const call = client(baseUrl, tenant.api_key);
    const wallet = expectCreated('open wallet', await call('POST', '/v1/wallets', { currency: CURRENCY }));
    expectCreated(
      'first credit',
      await admin(
        'POST',
        `/v1/wallets/${wallet.id}/credits`,
        { amount: FIRST_CREDIT },
        { 'idempotency-key': `drill-first-${suffix}-${i}` },
      ),
    );
    created.push({ id: tenant.id, apiKey: tenant.api_key, walletId: wallet.id, call });
  }
  return { baseUrl, admin, provider, secret, model, tenants: created };
}
