import { randomBytes, randomUUID } from 'node:crypto';
import { billableMicros, formatMicros, parseMicros, priceMicros, type Usage, type UnitPrices } from './money.js';
import { Random } from './random.js';

/** What the harness sets up over Tally's HTTP API, and what every job must cost. */
export const MODEL = 'bench/llm';
export const CURRENCY = 'USD';
export const PROVIDER = 'bench-provider';
// Prices that make rounding happen (0.37 micro per input token): "to the micro" is tested.
export const UNIT_PRICES: UnitPrices = { input_tokens: '0.37', output_tokens: '1.49' };
export const LIMITS: Usage = { input_tokens: 50_000, output_tokens: 10_000 };
/** Per wallet: far more than the holds of any run, so no job is refused for funds. */
export const CREDIT = '1000000.00';
/**
 * With --grants N > 1, each wallet's money is N grants instead of one credit: N − 1
 * promotional grants of GRANT_PART (priorities 10, 20, …; every other one expiring in 30
 * days), drawn first, and a credit of the rest — the same total. GRANT_PART is a few
 * hundred holds, so the hot wallet's holds keep crossing from one grant to the next.
 */
const GRANT_PART_MICROS = 10_000_000n;
const SETUP_CONCURRENCY = 32;

export interface Tenant {
  id: string;
  apiKey: string;
  walletId: string;
}

export interface BenchJob {
  id: string;
  tenantId: string;
  walletId: string;
  usage: Usage;
  /** micros the capture must charge */
  expected: bigint;
  reserved: bigint;
}

export interface World {
  baseUrl: string;
  adminToken: string;
  provider: string;
  secret: string;
  tenants: Tenant[];
  jobs: BenchJob[];
  credit: bigint;
}

export class ApiFailure extends Error {}

export function apiCall(baseUrl: string, token: string) {
  return async <T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status >= 300) throw new ApiFailure(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as T;
  };
}

/** Runs `task` over `items` with at most `limit` in flight. */
export async function inParallel<T>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      await task(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/**
 * A provider, a price, `tenants` tenants each with a wallet topped up, and `jobs` jobs
 * spread round-robin over the wallets (one tenant: every job on one hot wallet).
 */
export async function buildWorld(
  baseUrl: string,
  adminToken: string,
  options: { tenants: number; jobs: number; seed: number; grants?: number; onJob?: () => void },
): Promise<World> {
  const admin = apiCall(baseUrl, adminToken);
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  await admin('POST', '/v1/providers', { name: PROVIDER, kind: 'generic', secrets: [secret] });
  await admin('PUT', `/v1/prices/${encodeURIComponent(MODEL)}`, { currency: CURRENCY, unit_prices: UNIT_PRICES });

  const tenants: Tenant[] = new Array(options.tenants);
  await inParallel(
    Array.from({ length: options.tenants }, (_, i) => i),
    8,
    async (i) => {
      const tenant = await admin<{ id: string; api_key: string }>('POST', '/v1/tenants', { name: `bench-tenant-${i + 1}` });
      const wallet = await apiCall(baseUrl, tenant.api_key)<{ id: string }>('POST', '/v1/wallets', { currency: CURRENCY });
      await fundWallet(admin, wallet.id, i, options.grants ?? 1);
      tenants[i] = { id: tenant.id, apiKey: tenant.api_key, walletId: wallet.id };
    },
  );

  const random = new Random(options.seed);
  const reservation = priceMicros(LIMITS, UNIT_PRICES);
  const plans = Array.from({ length: options.jobs }, (_, i) => {
    const usage = Object.fromEntries(Object.entries(LIMITS).map(([dimension, max]) => [dimension, random.int(0, max)]));
    return { tenant: tenants[i % tenants.length]!, usage };
  });
  const jobs: BenchJob[] = new Array(options.jobs);
  await inParallel(plans, SETUP_CONCURRENCY, async ({ tenant, usage }, i) => {
    const job = await apiCall(baseUrl, tenant.apiKey)<{ id: string; reserved: string }>(
      'POST',
      '/v1/jobs',
      { wallet_id: tenant.walletId, model: MODEL, provider: PROVIDER, limits: LIMITS },
      { 'idempotency-key': randomUUID() },
    );
    const reserved = parseMicros(job.reserved);
    if (reserved !== reservation)
      throw new ApiFailure(`job ${job.id} reserved ${job.reserved}, expected the price of its limits (${reservation} micros)`);
    jobs[i] = {
      id: job.id,
      tenantId: tenant.id,
      walletId: tenant.walletId,
      usage,
      expected: billableMicros(usage, LIMITS, UNIT_PRICES),
      reserved,
    };
    options.onJob?.();
  });
  return { baseUrl, adminToken, provider: PROVIDER, secret, tenants, jobs, credit: parseMicros(CREDIT) };
}

async function fundWallet(admin: ReturnType<typeof apiCall>, walletId: string, i: number, grants: number): Promise<void> {
  const parts = BigInt(grants - 1);
  for (let g = 1n; g <= parts; g++) {
    const expiresAt = g % 2n === 0n ? new Date(Date.now() + 30 * 86_400_000).toISOString() : undefined;
    await admin(
      'POST',
      `/v1/wallets/${walletId}/grants`,
      {
        amount: formatMicros(GRANT_PART_MICROS),
        category: 'promotional',
        priority: Number(g * 10n) % 101,
        ...(expiresAt ? { expires_at: expiresAt } : {}),
        reference: 'bench grant',
      },
      { 'idempotency-key': `bench-grant-${i}-${g}` },
    );
  }
  const credit = parseMicros(CREDIT) - parts * GRANT_PART_MICROS;
  await admin(
    'POST',
    `/v1/wallets/${walletId}/credits`,
    { amount: formatMicros(credit), reference: 'bench top-up' },
    { 'idempotency-key': `bench-credit-${i}` },
  );
}
