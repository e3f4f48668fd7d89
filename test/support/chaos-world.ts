import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Pool, Queryable } from '../../src/db/pool.js';
import { reconcile } from '../../src/reconcile/run.js';
import { Random, deliveriesOf, planJobs, type Delivery, type PlannedJob, type ScenarioKind, type SimulatedJob } from '../../src/simulator/index.js';
import { Client } from './client.js';
import { assertLedgerInvariants } from './invariants.js';
import { mapConcurrent } from './refusal.js';
import { waitUntil } from './server.js';

/**
 * The world a chaos scenario runs in, set up over the public API only (like
 * `tally demo`): a generic provider with its signing secret, a priced model, tenants
 * with credited wallets, and jobs planned by the simulator from a seed. Billing is
 * checked against an expectation computed here, independently of src/pricing.
 */

/** Odd unit prices, so that per-dimension half-up rounding matters. */
export const PRICES = { input_tokens: '2.500001', output_tokens: '7.123457' } as const;
export const LIMITS = { input_tokens: 20_000, output_tokens: 4_000 } as const;
export const CREDIT = '1000.00';

export function micros(decimal: string): bigint {
  const [whole, fraction = ''] = decimal.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
}

export function formatMicros(value: bigint): string {
  const sign = value < 0n ? '-' : '';
  const abs = value < 0n ? -value : value;
  return `${sign}${abs / 1_000_000n}.${(abs % 1_000_000n).toString().padStart(6, '0')}`;
}

/** CONTRACT "Money": per priced dimension units × unit price / 1,000,000, half-up to the micro; summed. */
export function priceOf(usage: Readonly<Record<string, number>>): bigint {
  let total = 0n;
  for (const [dimension, units] of Object.entries(usage)) {
    const unitPrice = (PRICES as Record<string, string>)[dimension];
    if (unitPrice === undefined) continue;
    total += (2n * BigInt(units) * micros(unitPrice) + 1_000_000n) / 2_000_000n;
  }
  return total;
}

export const RESERVATION = priceOf(LIMITS);

/** What a job of this scenario must have cost in the end: min(price(usage), reservation), or nothing. */
export function expectedCharge(job: PlannedJob): bigint {
  const usage = job.scenario.billedUsage;
  if (!usage) return 0n;
  const price = priceOf(usage);
  return price < RESERVATION ? price : RESERVATION;
}

export interface Tenant {
  id: string;
  apiKey: string;
  walletId: string;
  client: Client;
}

export interface ChaosWorld {
  admin: Client;
  provider: string;
  secret: string;
  model: string;
  tenants: Tenant[];
  /** each submitted job's tenant (whose key cancels it) */
  tenantOfJob: Map<string, Tenant>;
}

/** A provider, a priced model and `tenants` credited wallets. */
export async function createChaosWorld(baseUrl: string, options: { tenants?: number; cancelGraceSeconds?: number } = {}): Promise<ChaosWorld> {
  const admin = new Client(baseUrl);
  const suffix = randomBytes(4).toString('hex');
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const provider = `chaos-${suffix}`;
  // A long cancel grace: a cancelled job's completion always arrives within it.
  const created = await admin.post('/v1/providers', {
    name: provider,
    kind: 'generic',
    secrets: [secret],
    policies: { cancel_grace_seconds: options.cancelGraceSeconds ?? 600 },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const model = `chaos/model-${suffix}`;
  const price = await admin.request('PUT', `/v1/prices/${encodeURIComponent(model)}`, { currency: 'USD', unit_prices: PRICES });
  expect(price.status, JSON.stringify(price.body)).toBe(201);
  const tenants: Tenant[] = [];
  for (let i = 0; i < (options.tenants ?? 5); i++) {
    const tenant = await admin.post('/v1/tenants', { name: `chaos-tenant-${suffix}-${i}` });
    expect(tenant.status).toBe(201);
    const client = admin.as(tenant.body.api_key);
    const wallet = await client.post('/v1/wallets', { currency: 'USD' });
    expect(wallet.status).toBe(201);
    const credit = await admin.post(`/v1/wallets/${wallet.body.id}/credits`, { amount: CREDIT }, { 'idempotency-key': `chaos-credit-${suffix}-${i}` });
    expect(credit.status).toBe(201);
    tenants.push({ id: tenant.body.id, apiKey: tenant.body.api_key, walletId: wallet.body.id, client });
  }
  return { admin, provider, secret, model, tenants, tenantOfJob: new Map() };
}

/** Submits `count` jobs with LIMITS, round-robin over the tenants. */
export async function submitJobs(world: ChaosWorld, count: number, concurrency = 8): Promise<SimulatedJob[]> {
  return mapConcurrent(Array.from({ length: count }, (_, i) => i), concurrency, async (index) => {
    const tenant = world.tenants[index % world.tenants.length]!;
    const answer = await tenant.client.post(
      '/v1/jobs',
      { wallet_id: tenant.walletId, model: world.model, provider: world.provider, limits: LIMITS },
      { 'idempotency-key': randomUUID() },
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body.reserved).toBe(formatMicros(RESERVATION));
    world.tenantOfJob.set(answer.body.id, tenant);
    return { id: answer.body.id as string, tenantId: tenant.id, model: world.model, currency: 'USD' };
  });
}

/** Jobs submitted and given a scenario each, reproducibly from the seed. */
export async function plannedJobs(world: ChaosWorld, count: number, seed: number, kinds?: readonly ScenarioKind[]): Promise<PlannedJob[]> {
  return planJobs(await submitJobs(world, count), LIMITS, seed, kinds);
}

/** The simulator's chaos turned off: one delivery per event, at once. */
export const NO_CHAOS = { maxDuplicates: 0, reemitProbability: 0, forgeProbability: 0, maxDelayMs: 0 } as const;

/**
 * One job the provider completes with random usage (within LIMITS), and that
 * completion's signed delivery — the unit of the single-event scenarios.
 */
export async function completedJob(world: ChaosWorld, random: Random): Promise<{ job: PlannedJob; delivery: Delivery }> {
  const [submitted] = await submitJobs(world, 1);
  const usage = { input_tokens: random.int(0, LIMITS.input_tokens), output_tokens: random.int(0, LIMITS.output_tokens) };
  const event = { type: 'job.completed', usage } as const;
  const job: PlannedJob = { ...submitted!, scenario: { kind: 'completed', phases: [[event]], billedUsage: usage, apiCancel: false } };
  const [delivery] = deliveriesOf(job, event, world.secret, random, NO_CHAOS);
  return { job, delivery: delivery! };
}

/** The same completion again under a new webhook-id: a provider's re-emission. */
export function reemission(world: ChaosWorld, job: PlannedJob, random: Random): Delivery {
  return deliveriesOf(job, job.scenario.phases[0]![0]!, world.secret, random, NO_CHAOS)[0]!;
}

export interface StoredEvent {
  state: string;
  attempts: number;
  lease_until: Date | null;
  processed_at: Date | null;
  settlement_key: string | null;
  reason: string | null;
}

/** The stored webhook event of a delivery: its state, claims and outcome. */
export async function storedEvent(db: Queryable, provider: string, delivery: Delivery): Promise<StoredEvent | undefined> {
  const result = await db.query<StoredEvent>(
    'select state, attempts, lease_until, processed_at, settlement_key, reason from webhook_events where provider = $1 and event_key = $2',
    [provider, delivery.eventId],
  );
  return result.rows[0];
}

/** What a job has had done to it financially: its state, its settlements, its entries beyond the reservation. */
export async function effectsOf(db: Queryable, jobId: string) {
  const job = await db.query<{ state: string }>('select state from jobs where id = $1', [jobId]);
  const settlements = await db.query<{ settlement_key: string; charge_type: string }>(
    'select settlement_key, charge_type from settlements where job_id = $1 order by created_at',
    [jobId],
  );
  const entries = await db.query<{ entry_type: string }>(`select entry_type from ledger_entries where job_id = $1 and entry_type <> 'reserve' order by entry_type`, [jobId]);
  return { state: job.rows[0]!.state, settlements: settlements.rows, entries: entries.rows.map((r) => r.entry_type) };
}

/**
 * The tenant's cancel for scenarios where it races the provider's completion. Retried
 * while the API answers 503 (the database is down in some scenarios); 409 job_terminal
 * means the completion settled first, which is one of the two allowed orders.
 */
export function cancelJob(world: ChaosWorld): (jobId: string) => Promise<void> {
  return async (jobId) => {
    const tenant = world.tenantOfJob.get(jobId)!;
    for (;;) {
      const answer = await tenant.client.post(`/v1/jobs/${jobId}/cancel`).catch(() => ({ status: 0, body: null }));
      if (answer.status === 202 || answer.status === 409) return;
      if (answer.status !== 503 && answer.status !== 0) throw new Error(`cancel ${jobId}: ${answer.status} ${JSON.stringify(answer.body)}`);
      // A client retrying a refused call backs off; this is that client, not synchronisation.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
}

/** Every job terminal and every accepted event of them settled (not pending nor claimed). */
export async function waitForSettled(db: Queryable, jobIds: readonly string[], timeoutMs = 120_000): Promise<void> {
  let last: unknown;
  try {
    await waitUntil(async () => {
      const { rows } = await db.query<{ open_jobs: number; open_events: number }>(
        `select (select count(*)::int from jobs where id = any($1::uuid[]) and state not in ('captured', 'released')) as open_jobs,
                (select count(*)::int from webhook_events where job_id = any($1::uuid[]) and state in ('pending', 'processing')) as open_events`,
        [jobIds],
      );
      last = rows[0];
      return rows[0]!.open_jobs === 0 && rows[0]!.open_events === 0;
    }, timeoutMs, 100);
  } catch (error) {
    throw new Error(`jobs did not settle: ${JSON.stringify(last)}`, { cause: error });
  }
}

export interface BillingCheck {
  jobs: number;
  expected: bigint;
  billed: bigint;
  /** Σ max(0, expected − billed) per job */
  lost: bigint;
  /** Σ max(0, billed − expected) per job */
  duplicated: bigint;
  wrong: string[];
}

/**
 * Each job against its scenario: resolved once (one capture or one release), in the
 * expected state, charged capture + adjustments = min(price(billed usage), reservation).
 */
export async function checkBilling(db: Queryable, planned: readonly PlannedJob[]): Promise<BillingCheck> {
  const { rows } = await db.query<{ id: string; state: string; reserved: bigint; charged: bigint; resolutions: number; captures: number; releases: number }>(
    `select j.id, j.state, j.reserved, coalesce(j.captured, 0) + j.adjusted as charged,
            (select count(*)::int from settlements s where s.job_id = j.id and s.charge_type in ('capture', 'release')) as resolutions,
            (select count(*)::int from ledger_entries e where e.job_id = j.id and e.entry_type = 'capture') as captures,
            (select count(*)::int from ledger_entries e where e.job_id = j.id and e.entry_type = 'release') as releases
     from jobs j where j.id = any($1::uuid[])`,
    [planned.map((j) => j.id)],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const check: BillingCheck = { jobs: planned.length, expected: 0n, billed: 0n, lost: 0n, duplicated: 0n, wrong: [] };
  for (const job of planned) {
    const row = byId.get(job.id);
    const expected = expectedCharge(job);
    const expectedState = job.scenario.billedUsage ? 'captured' : 'released';
    check.expected += expected;
    if (!row) {
      check.lost += expected;
      check.wrong.push(`${job.id} (${job.scenario.kind}): missing`);
      continue;
    }
    check.billed += row.charged;
    if (row.charged < expected) check.lost += expected - row.charged;
    if (row.charged > expected) check.duplicated += row.charged - expected;
    const entriesOk = expectedState === 'captured' ? row.captures === (expected > 0n ? 1 : 0) && row.releases === 0 : row.captures === 0 && row.releases === 1;
    if (row.charged !== expected || row.state !== expectedState || row.resolutions !== 1 || row.reserved !== RESERVATION || !entriesOk) {
      check.wrong.push(
        `${job.id} (${job.scenario.kind}): ${row.state}, charged ${formatMicros(row.charged)} with ${row.resolutions} resolution(s), ` +
          `${row.captures} capture / ${row.releases} release entries; expected ${expectedState}, ${formatMicros(expected)}`,
      );
    }
  }
  return check;
}

/**
 * Everything a scenario ends with: each job billed exactly once as its scenario says,
 * every wallet at credit − what its jobs cost with nothing reserved (through the API),
 * the ledger invariants (currency sums zero, projection = entries, …), no dead event,
 * and a clean reconciliation run. Returns the billing figures for the summary line.
 */
export async function expectExactlyOnce(pool: Pool, world: ChaosWorld, planned: readonly PlannedJob[]): Promise<BillingCheck> {
  const billing = await checkBilling(pool, planned);
  expect(billing.wrong, 'jobs billed other than exactly once as expected').toEqual([]);
  expect({ lost: billing.lost, duplicated: billing.duplicated }).toEqual({ lost: 0n, duplicated: 0n });

  const costByTenant = new Map<string, bigint>();
  for (const job of planned) costByTenant.set(job.tenantId, (costByTenant.get(job.tenantId) ?? 0n) + expectedCharge(job));
  for (const tenant of world.tenants) {
    const wallet = await tenant.client.get(`/v1/wallets/${tenant.walletId}`);
    expect(wallet.status).toBe(200);
    const cost = costByTenant.get(tenant.id) ?? 0n;
    expect(wallet.body, `wallet of ${tenant.id}`).toMatchObject({
      balance: formatMicros(micros(CREDIT) - cost),
      reserved: formatMicros(0n),
      available: formatMicros(micros(CREDIT) - cost),
    });
  }

  await assertLedgerInvariants(pool);
  const dead = await pool.query('select provider, event_key, last_error from webhook_events where state = $1', ['dead']);
  expect(dead.rows, 'dead-lettered events').toEqual([]);
  await expectCleanReconciliation(pool);
  return billing;
}

export async function expectCleanReconciliation(pool: Pool): Promise<void> {
  const run = await reconcile(pool);
  expect(run.exceptions.map((e) => ({ class: e.class, objects: e.objects, detail: e.detail })), 'reconciliation exceptions').toEqual([]);
  expect(run.clean).toBe(true);
}

/** The one-line figures of a scenario, for the closing note. */
export function printSummary(scenario: string, figures: Record<string, string | number | bigint>): void {
  const text = Object.entries(figures)
    .map(([name, value]) => `${name}=${typeof value === 'bigint' ? formatMicros(value) : value}`)
    .join(' ');
  console.log(`[chaos summary] ${scenario}: ${text}`);
}

/** A seed from the environment (to replay a run) or fresh; printed in the test name. */
export function chaosSeed(): number {
  return Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 1_000_000));
}
