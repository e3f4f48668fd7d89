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
/**
 * The `growing` scenario's rule (CONTRACT.md "Long-running jobs: hold extensions"): each
 * job may grow by steps of 10,000 output tokens up to 40,000. Its three progress reports
 * stay within 10,000 output tokens (so far + step ≤ 20,000: one step) and its completion
 * is above 10,000 and at most 20,000 (one step too), so whichever settles first — a
 * report or the completion — every job ends with exactly one extension, to 20,000 output
 * tokens (grownLimits below works it out and checks it).
 */
export const AUTO_EXTEND = { step: { output_tokens: 10_000 }, max_limits: { output_tokens: 40_000 } } as const;
export const PROGRESS_REPORTS = 3;
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
  /** cumulative usage of each job.progress report, sent before the completion (growing; else empty) */
  progress: Usage[];
  /** the job's limits once settled: LIMITS, or as its extension grew them */
  limits: Usage;
  /** micros the capture must charge */
  expected: bigint;
  /** micros of the job's hold once settled: the first hold plus its extensions */
  reserved: bigint;
  /** micros of each extension, in version order (1, 2, …) */
  extensions: bigint[];
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
  options: { tenants: number; jobs: number; seed: number; grants?: number; growing?: boolean; onJob?: () => void },
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
    const tenant = tenants[i % tenants.length]!;
    if (options.growing) return { tenant, ...growingUsage(random) };
    const usage = Object.fromEntries(Object.entries(LIMITS).map(([dimension, max]) => [dimension, random.int(0, max)]));
    return { tenant, usage, progress: [] as Usage[] };
  });
  const jobs: BenchJob[] = new Array(options.jobs);
  await inParallel(plans, SETUP_CONCURRENCY, async ({ tenant, usage, progress }, i) => {
    const job = await apiCall(baseUrl, tenant.apiKey)<{ id: string; reserved: string }>(
      'POST',
      '/v1/jobs',
      {
        wallet_id: tenant.walletId,
        model: MODEL,
        provider: PROVIDER,
        limits: LIMITS,
        ...(options.growing ? { auto_extend: AUTO_EXTEND } : {}),
      },
      { 'idempotency-key': randomUUID() },
    );
    const reserved = parseMicros(job.reserved);
    if (reserved !== reservation)
      throw new ApiFailure(`job ${job.id} reserved ${job.reserved}, expected the price of its limits (${reservation} micros)`);
    const limits = options.growing ? grownLimits(usage, progress) : LIMITS;
    const held = priceMicros(limits, UNIT_PRICES);
    jobs[i] = {
      id: job.id,
      tenantId: tenant.id,
      walletId: tenant.walletId,
      usage,
      progress,
      limits,
      expected: billableMicros(usage, limits, UNIT_PRICES),
      reserved: held,
      extensions: held === reservation ? [] : [held - reservation],
    };
    options.onJob?.();
  });
  return { baseUrl, adminToken, provider: PROVIDER, secret, tenants, jobs, credit: parseMicros(CREDIT) };
}

/**
 * A growing job's usage: input within LIMITS, output in (10,000, 20,000]; and its
 * PROGRESS_REPORTS reports, cumulative, output strictly increasing in [1, 10,000] (the
 * prompt's input counted from the first).
 */
function growingUsage(random: Random): { usage: Usage; progress: Usage[] } {
  const step = AUTO_EXTEND.step.output_tokens;
  const input = random.int(0, LIMITS.input_tokens!);
  const output = random.int(LIMITS.output_tokens! + 1, LIMITS.output_tokens! + step);
  const outputs: number[] = [];
  for (let k = 0; k < PROGRESS_REPORTS; k++) {
    const after = outputs[k - 1] ?? 0;
    // leave room for the reports still to come
    outputs.push(random.int(after + 1, LIMITS.output_tokens! - (PROGRESS_REPORTS - 1 - k)));
  }
  return {
    usage: { input_tokens: input, output_tokens: output },
    progress: outputs.map((o) => ({ input_tokens: input, output_tokens: o })),
  };
}

/**
 * One automatic step as the contract words it: when `limit` is below `target`, it becomes
 * max(limit, min(max, the smallest limit + k × step ≥ target)).
 */
function stepUp(limit: number, step: number, max: number, target: number): number {
  if (limit >= target) return limit;
  const k = Math.ceil((target - limit) / step);
  return Math.max(limit, Math.min(max, limit + k * step));
}

/**
 * The limits a growing job ends with, worked out both ways its events may settle — its
 * reports first (each at usage so far + step), or its completion first (at its usage,
 * the reports after it have no effect) — and required to agree, with one step: that is
 * what makes every job's expected hold the same whatever order the worker settles in.
 */
function grownLimits(usage: Usage, progress: Usage[]): Usage {
  const dimension = 'output_tokens';
  const step = AUTO_EXTEND.step[dimension];
  const max = AUTO_EXTEND.max_limits[dimension];
  let byReports = LIMITS[dimension]!;
  let soFar = 0;
  for (const report of progress) {
    soFar = Math.max(soFar, report[dimension]!);
    byReports = stepUp(byReports, step, max, soFar + step);
  }
  byReports = stepUp(byReports, step, max, usage[dimension]!);
  const byCompletion = stepUp(LIMITS[dimension]!, step, max, usage[dimension]!);
  if (byReports !== byCompletion || byReports !== LIMITS[dimension]! + step || usage[dimension]! > byReports)
    throw new Error(`growing job's usage ${JSON.stringify({ usage, progress })} does not give exactly one step whatever the order`);
  return { ...LIMITS, [dimension]: byReports };
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
