import { randomBytes } from 'node:crypto';
import type { Pool } from '../../src/db/pool.js';
import { withTransaction } from '../../src/db/transaction.js';
import { newId } from '../../src/ids.js';
import { publishPriceVersion as publish, type PriceVersionRow } from '../../src/catalog/prices.js';
import { insertWallet as insert, type AccountRow } from '../../src/funds/accounts.js';
import { creditWallet as credit, type CreditResult } from '../../src/funds/credit.js';
import { submitJob as submit } from '../../src/jobs/submit.js';
import { insertProvider } from '../../src/catalog/providers.js';
import type { JobRow } from '../../src/jobs/rows.js';
import type { ProviderPolicyJson } from '../../src/lifecycle/index.js';

/**
 * Builders over the real functions: money only ever moves through creditWallet and
 * submitJob (reserveHold), each in its own withTransaction, exactly as the API does.
 * Only rows that carry no money (tenants, providers) are inserted with plain SQL.
 */

/**
 * The server secret of the tests that receive deliveries in process (no `tally serve`):
 * it seals the secrets insertProvider stores, and their lookups open them with it.
 */
export const TEST_SERVER_SECRET = Buffer.alloc(32, 0x5e);

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

export async function createTenant(pool: Pool, name = uniqueName('tenant')): Promise<string> {
  const id = newId();
  await pool.query('insert into tenants (id, name) values ($1, $2)', [id, name]);
  return id;
}

export interface ProviderFixture {
  name: string;
  policies: Partial<ProviderPolicyJson>;
}

/** A generic provider; `policies` as stored in providers.policies (snake_case). */
export async function ensureProvider(
  pool: Pool,
  options: { name?: string; policies?: Partial<ProviderPolicyJson> } = {},
): Promise<ProviderFixture> {
  const name = options.name ?? uniqueName('prov');
  const policies = options.policies ?? {};
  await pool.query(
    `insert into providers (name, kind, secrets, policies) values ($1, 'generic', $2, $3)
     on conflict on constraint providers_pkey do nothing`,
    [name, [`whsec_${randomBytes(24).toString('base64')}`], JSON.stringify(policies)],
  );
  return { name, policies };
}

export async function publishPriceVersion(
  pool: Pool,
  model: string,
  currency: string,
  unitPrices: Record<string, bigint>,
): Promise<PriceVersionRow> {
  return (await withTransaction(pool, (tx) => publish(tx, model, currency, unitPrices))).row;
}

export async function insertWallet(pool: Pool, tenantId: string, currency = 'USD'): Promise<AccountRow> {
  return withTransaction(pool, (tx) => insert(tx, tenantId, currency));
}

export async function creditWallet(
  pool: Pool,
  wallet: Pick<AccountRow, 'id' | 'tenant_id' | 'currency'>,
  amount: bigint,
  creditKey: string = newId(),
): Promise<CreditResult> {
  return withTransaction(pool, (tx) => credit(tx, { wallet, amount, creditKey }));
}

export interface SubmitOptions {
  tenantId: string;
  wallet: Pick<AccountRow, 'id' | 'currency'>;
  provider: ProviderFixture;
  model: string;
  limits: Record<string, number>;
}

export async function submitJob(pool: Pool, options: SubmitOptions): Promise<JobRow> {
  return withTransaction(pool, (tx) =>
    submit(tx, {
      tenantId: options.tenantId,
      wallet: options.wallet,
      provider: { name: options.provider.name, policies: options.provider.policies },
      model: options.model,
      limits: options.limits,
    }),
  );
}

/**
 * Prices used throughout: 2 micros per input token, 6 per output token (unit prices
 * are per 1,000,000 units). LIMITS reserve 1000·2 + 1000·6 = 8000 micros.
 */
export const UNIT_PRICES = { input_tokens: 2_000_000n, output_tokens: 6_000_000n } as const;
export const LIMITS = { input_tokens: 1000, output_tokens: 1000 } as const;
export const RESERVATION = 8_000n;

/** The price of usage at UNIT_PRICES, exact (no rounding with these prices). */
export function priceOf(usage: { input_tokens?: number; output_tokens?: number }): bigint {
  return BigInt(usage.input_tokens ?? 0) * 2n + BigInt(usage.output_tokens ?? 0) * 6n;
}

/** min(price, reservation): CONTRACT "Billing rules". */
export function billableOf(usage: { input_tokens?: number; output_tokens?: number }, reservation = RESERVATION): bigint {
  const price = priceOf(usage);
  return price > reservation ? reservation : price;
}

export interface World {
  tenantId: string;
  wallet: AccountRow;
  provider: ProviderFixture;
  model: string;
  price: PriceVersionRow;
}

/** A tenant with a USD wallet credited `funds`, a provider and a priced model. */
export async function createWorld(
  pool: Pool,
  options: { funds?: bigint; policies?: Partial<ProviderPolicyJson> } = {},
): Promise<World> {
  const tenantId = await createTenant(pool);
  const wallet = await insertWallet(pool, tenantId, 'USD');
  if ((options.funds ?? 0n) > 0n) await creditWallet(pool, wallet, options.funds!);
  const provider = await ensureProvider(pool, options.policies ? { policies: options.policies } : {});
  const model = uniqueName('model');
  const price = await publishPriceVersion(pool, model, 'USD', { ...UNIT_PRICES });
  return { tenantId, wallet, provider, model, price };
}

/** A job of `world` with LIMITS (reserving RESERVATION). */
export async function submitWorldJob(pool: Pool, world: World, limits: Record<string, number> = { ...LIMITS }): Promise<JobRow> {
  return submitJob(pool, { tenantId: world.tenantId, wallet: world.wallet, provider: world.provider, model: world.model, limits });
}

export async function walletRow(pool: Pool, walletId: string): Promise<AccountRow> {
  const result = await pool.query<AccountRow>('select * from accounts where id = $1', [walletId]);
  return result.rows[0]!;
}

export async function jobRow(pool: Pool, jobId: string): Promise<JobRow> {
  const result = await pool.query<JobRow>('select * from jobs where id = $1', [jobId]);
  return result.rows[0]!;
}

export interface ClaimedEvent {
  provider: string;
  eventKey: string;
  fencingToken: bigint;
}

/**
 * A webhook event as a worker holds it after claiming: state 'processing' under a
 * fencing token. Plain SQL: an event row carries no money, and intake is not under
 * test here.
 */
export async function insertClaimedEvent(
  pool: Pool,
  job: Pick<JobRow, 'id' | 'tenant_id' | 'provider'>,
  options: { type?: string; fencingToken?: bigint; eventKey?: string } = {},
): Promise<ClaimedEvent> {
  const eventKey = options.eventKey ?? uniqueName('evt');
  const fencingToken = options.fencingToken ?? 1n;
  const type = options.type ?? 'job.completed';
  const payload = Buffer.from(JSON.stringify({ type, data: { job_id: job.id } }));
  await withTransaction(pool, async (tx) => {
    const seq = await tx.query<{ event_seq: bigint }>('update jobs set event_seq = event_seq + 1 where id = $1 returning event_seq', [job.id]);
    await tx.query(
      `insert into webhook_events (provider, event_key, tenant_id, job_id, seq, type, payload_hash, payload, event, state, attempts, lease_until, fencing_token)
       values ($1, $2, $3, $4, $5, $6, sha256($7), $7, $8, 'processing', 1, now() + interval '1 minute', $9)`,
      [job.provider, eventKey, job.tenant_id, job.id, seq.rows[0]!.event_seq.toString(), type, payload, JSON.stringify({ type }), fencingToken.toString()],
    );
  });
  return { provider: job.provider, eventKey, fencingToken };
}

export async function eventRow(pool: Pool, event: Pick<ClaimedEvent, 'provider' | 'eventKey'>) {
  const result = await pool.query<{ state: string; reason: string | null; settlement_key: string | null; fencing_token: bigint }>(
    'select state, reason, settlement_key, fencing_token from webhook_events where provider = $1 and event_key = $2',
    [event.provider, event.eventKey],
  );
  return result.rows[0]!;
}

export interface OpenaiWorld {
  provider: string;
  tenantId: string;
  wallet: AccountRow;
  model: string;
}

/** A tenant with a funded USD wallet, an OpenAI provider whose API answers at `baseUrl`, and a priced model. */
export async function createOpenaiWorld(
  pool: Pool,
  settings: { secret: string; apiKey: string; baseUrl: string },
  unitPrices: Record<string, bigint>,
): Promise<OpenaiWorld> {
  const provider = uniqueName('openai');
  await withTransaction(pool, (tx) => insertProvider(tx, provider, 'openai', { secrets: [settings.secret], api_key: settings.apiKey, base_url: settings.baseUrl }, TEST_SERVER_SECRET));
  const tenantId = await createTenant(pool);
  const wallet = await insertWallet(pool, tenantId, 'USD');
  await creditWallet(pool, wallet, 1_000_000_000n);
  const model = uniqueName('gpt');
  await publishPriceVersion(pool, model, 'USD', unitPrices);
  return { provider, tenantId, wallet, model };
}

/** A job of `world` for a new OpenAI response id, and the API path its usage is fetched from. */
export async function submitOpenaiJob(pool: Pool, world: OpenaiWorld, limits: Record<string, number>) {
  const ref = `resp_${randomBytes(16).toString('hex')}`;
  const job = await withTransaction(pool, (tx) =>
    submit(tx, { tenantId: world.tenantId, wallet: world.wallet, provider: { name: world.provider, policies: {} }, model: world.model, providerJobRef: ref, limits }),
  );
  return { job, ref, path: `/v1/responses/${ref}` };
}
