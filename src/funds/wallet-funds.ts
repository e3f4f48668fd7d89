import type { Queryable } from '../db/pool.js';
import { planted } from '../plants.js';
import {
  walletTotals,
  type ExtensionPiece,
  type Grant,
  type Instant,
  type JobFunding,
  type Micros,
  type Share,
  type WalletFunds,
  type WalletTotals,
} from './posting/index.js';

/**
 * A wallet's grants, debt and the funding of some of its jobs, read under the wallet
 * row's lock, and written back after the posting module moved them. Every writer of a
 * wallet's money takes this lock first (docs/ARCHITECTURE.md, "Lock order": jobs, then
 * wallets, then the tenant's system accounts), so what is read here stays true until COMMIT.
 */
export interface LockedFunds {
  walletId: string;
  tenantId: string;
  currency: string;
  /** the database's clock at the lock, in microseconds: what "expired" means for this posting */
  now: Instant;
  funds: WalletFunds;
  /** by job id: shares in allocation order, draws in the order taken */
  jobs: Map<string, JobFunding>;
  /** by `${jobId}:${grantId}` (`${jobId}:debt`: the part held against the debt): the 'reserve' entry its capture and return post or void */
  pendingEntries: Map<string, string | null>;
  /** the plant recharge_outside_wallet_lock only (src/plants.ts): whether a recharge was in flight before the lock was taken */
  plantedRechargeInFlight?: boolean;
}

interface GrantJson {
  id: string;
  category: Grant['category'];
  priority: number;
  effective_at: string;
  expires_at: string | null;
  created_at: string;
  remaining: string;
  held: string;
  voided: boolean;
  disputed: boolean;
  expiry_posted: boolean;
  expired_amount: string;
  voided_amount: string;
}
interface ShareJson {
  job_id: string;
  grant_id: string;
  held: string;
  captured: string;
  returned: string;
  refunded: string;
  pending_entry_id: string | null;
}
interface ExtensionJson {
  job_id: string;
  version: number;
  allocation: { grant_id: string | null; amount: string; entry_id: string }[];
}
interface DrawJson {
  job_id: string;
  version: number;
  grant_id: string | null;
  amount: string;
  refunded: string;
}

const MICROS = (column: string) => `(extract(epoch from ${column}) * 1000000)::bigint::text`;

/** The grants `g` of a wallet as a JSON array (GrantJson), in the draw-down order. */
const GRANTS_JSON = `jsonb_agg(jsonb_build_object(
            'id', g.id, 'category', g.category, 'priority', g.priority,
            'effective_at', ${MICROS('g.effective_at')}, 'expires_at', ${MICROS('g.expires_at')}, 'created_at', ${MICROS('g.created_at')},
            'remaining', g.remaining::text, 'held', g.held::text, 'voided', g.voided_at is not null, 'disputed', g.disputed,
            'expiry_posted', g.expiry_posted_at is not null, 'expired_amount', g.expired_amount::text, 'voided_amount', g.voided_amount::text)
            order by g.priority, g.expires_at nulls last, g.category desc, g.effective_at, g.created_at, g.id)`;

function grantOf(g: GrantJson): Grant {
  return {
    id: g.id,
    category: g.category,
    priority: g.priority,
    effectiveAt: BigInt(g.effective_at),
    expiresAt: g.expires_at === null ? null : BigInt(g.expires_at),
    createdAt: BigInt(g.created_at),
    remaining: BigInt(g.remaining),
    held: BigInt(g.held),
    voided: g.voided,
    disputed: g.disputed,
    expiryPosted: g.expiry_posted,
    expiredAmount: BigInt(g.expired_amount),
    voidedAmount: BigInt(g.voided_amount),
  };
}

/**
 * Locks the wallet row (FOR NO KEY UPDATE, the lock its projection's UPDATE takes anyway),
 * then reads the grants that hold money or fund the given jobs, the jobs' shares and
 * draws, and the clock. Two statements, not one: under READ COMMITTED a statement's
 * snapshot is taken before it waits for a lock, so grants read in the locking statement
 * would miss what the previous holder of the lock committed. Amounts travel as text
 * inside the JSON (exact bigints). With `owner`, only the tenant's wallet in that
 * currency is found; null when there is none.
 */
export async function lockWalletFunds(
  tx: Queryable,
  walletId: string,
  jobIds: readonly string[] = [],
  owner?: { tenantId: string; currency: string },
  /** grants to read whatever they hold (a void or an expiry of a depleted grant) */
  grantIds: readonly string[] = [],
  /** the jobs of `jobIds` whose hold has extensions (their pieces are read; no other job has any) */
  extendedJobIds: readonly string[] = [],
): Promise<LockedFunds | null> {
  return (await lockAndLoad(tx, [walletId], jobIds, grantIds, owner, undefined, extendedJobIds)).get(walletId) ?? null;
}

/**
 * lockWalletFunds for the wallets of a batch: their rows locked in one statement, in id
 * order (the one lock order), and their funds read in one more — two round trips for the
 * batch, not two per wallet. By wallet id; a wallet that does not exist is absent.
 */
export async function lockWalletsFunds(
  tx: Queryable,
  walletIds: readonly string[],
  jobIds: readonly string[],
  tenantId?: string,
  /** the jobs of `jobIds` whose hold has extensions (their pieces are read; no other job has any) */
  extendedJobIds: readonly string[] = [],
): Promise<Map<string, LockedFunds>> {
  return lockAndLoad(tx, walletIds, jobIds, [], undefined, tenantId, extendedJobIds);
}

async function lockAndLoad(
  tx: Queryable,
  walletIds: readonly string[],
  jobIds: readonly string[],
  grantIds: readonly string[],
  owner?: { tenantId: string; currency: string },
  tenantId?: string,
  extendedJobIds: readonly string[] = [],
): Promise<Map<string, LockedFunds>> {
  const plantedInFlight = planted('recharge_outside_wallet_lock') ? await rechargesInFlight(tx, walletIds) : null;
  // ORDER BY runs before FOR NO KEY UPDATE takes the locks: they are taken in id order.
  const wallets = await tx.query<{ id: string; tenant_id: string; currency: string; debt: bigint }>({
    name: owner ? 'lock_wallet_owned' : tenantId ? 'lock_tenant_wallets' : 'lock_wallets',
    text: `select id, tenant_id, currency, debt from accounts
      where id = any($1::uuid[]) and kind = 'wallet'${owner ? ' and tenant_id = $2 and currency = $3' : tenantId ? ' and tenant_id = $2' : ''}
      order by id for no key update`,
    values: owner ? [walletIds, owner.tenantId, owner.currency] : tenantId ? [walletIds, tenantId] : [walletIds],
  });
  if (wallets.rows.length === 0) return new Map();
  // The wallets' one tenant (always, in a settlement batch): the read names it.
  const tenants = new Set(wallets.rows.map((w) => w.tenant_id));
  const tenant = tenants.size === 1 ? [...tenants][0]! : null;
  const pin = (alias: string) => (tenant === null ? '' : `${alias}tenant_id = $4 and `);
  const extended = extendedJobIds.length > 0;
  const result = await tx.query<{
    now: string;
    grants: { wallet_id: string; grants: GrantJson[] }[];
    shares: ShareJson[];
    extensions: ExtensionJson[];
    draws: DrawJson[];
  }>({
    name: `${tenant === null ? 'load_wallets_funds' : 'load_tenant_wallets_funds'}${extended ? '_extended' : ''}`,
    text: `with funded as (
        select hs.grant_id from hold_shares hs where ${pin('hs.')}hs.job_id = any($2::uuid[])
        union select ad.grant_id from adjustment_draws ad where ${pin('ad.')}ad.job_id = any($2::uuid[]) and ad.grant_id is not null
        union select unnest($3::uuid[])
      )
      select ${MICROS('clock_timestamp()')} as now,
        coalesce((select jsonb_agg(jsonb_build_object('wallet_id', w.id, 'grants', coalesce((select ${GRANTS_JSON}
            from grants g where ${pin('g.')}g.wallet_id = w.id and g.activated_at is not null
              and (g.remaining > 0 or g.held > 0 or g.id in (select grant_id from funded))), '[]')))
          from unnest($1::uuid[]) as w(id)), '[]') as grants,
        coalesce((select jsonb_agg(jsonb_build_object('job_id', s.job_id, 'grant_id', s.grant_id, 'held', s.held::text,
            'captured', s.captured::text, 'returned', s.returned::text, 'refunded', s.refunded::text, 'pending_entry_id', s.pending_entry_id)
            order by s.job_id, s.position)
          from hold_shares s where ${pin('s.')}s.job_id = any($2::uuid[])), '[]') as shares,
        ${
          // read only for holds that have extensions: a plain job's settlement reads no more than before
          extended
            ? `coalesce((select jsonb_agg(jsonb_build_object('job_id', x.job_id, 'version', x.version, 'allocation', x.allocation)
            order by x.job_id, x.version)
          from job_extensions x where ${pin('x.')}x.job_id = any($${tenant === null ? 4 : 5}::uuid[])), '[]')`
            : `'[]'::jsonb`
        } as extensions,
        coalesce((select jsonb_agg(jsonb_build_object('job_id', d.job_id, 'version', d.version, 'grant_id', d.grant_id,
            'amount', d.amount::text, 'refunded', d.refunded::text) order by d.job_id, d.version, d.position)
          from adjustment_draws d where ${pin('d.')}d.job_id = any($2::uuid[])), '[]') as draws`,
    values: [wallets.rows.map((w) => w.id), jobIds, grantIds, ...(tenant === null ? [] : [tenant]), ...(extended ? [extendedJobIds] : [])],
  });
  const row = result.rows[0]!;
  const jobs = new Map<string, JobFunding>();
  const pendingEntries = new Map<string, string | null>();
  const of = (jobId: string) => jobs.get(jobId) ?? jobs.set(jobId, { shares: [], pieces: [], draws: [], resolved: false }).get(jobId)!;
  for (const s of row.shares) {
    const job = of(s.job_id);
    (job.shares as Share[]).push({
      grantId: s.grant_id,
      held: BigInt(s.held),
      captured: BigInt(s.captured),
      returned: BigInt(s.returned),
      refunded: BigInt(s.refunded),
    });
    pendingEntries.set(`${s.job_id}:${s.grant_id}`, s.pending_entry_id);
  }
  for (const x of row.extensions) {
    const pieces = of(x.job_id).pieces as ExtensionPiece[];
    for (const a of x.allocation) {
      pieces.push({ version: x.version, grantId: a.grant_id, amount: BigInt(a.amount) });
      // held against the debt (a terminal event's extension): its capture posts this entry
      if (a.grant_id === null) pendingEntries.set(`${x.job_id}:debt`, a.entry_id);
    }
  }
  for (const d of row.draws) {
    (of(d.job_id).draws as JobFunding['draws'][number][]).push({
      version: d.version,
      grantId: d.grant_id,
      amount: BigInt(d.amount),
      refunded: BigInt(d.refunded),
    });
  }
  for (const [jobId, job] of jobs) jobs.set(jobId, { ...job, resolved: isResolved(job.shares) });
  const grantsOf = new Map(row.grants.map((w) => [w.wallet_id, w.grants.map(grantOf)]));
  return new Map(
    wallets.rows.map((w) => [
      w.id,
      {
        walletId: w.id,
        tenantId: w.tenant_id,
        currency: w.currency,
        now: BigInt(row.now),
        funds: { grants: grantsOf.get(w.id) ?? [], debt: w.debt },
        // every job asked for: a writer keeps only its own wallet's (writeWalletsFunds compares by job)
        jobs,
        pendingEntries,
        ...(plantedInFlight === null ? {} : { plantedRechargeInFlight: plantedInFlight.has(w.id) }),
      },
    ]),
  );
}

/** The plant recharge_outside_wallet_lock: which wallets have a recharge in flight, read before their lock (so, stale). */
async function rechargesInFlight(tx: Queryable, walletIds: readonly string[]): Promise<Set<string>> {
  const result = await tx.query<{ wallet_id: string }>(
    `select distinct wallet_id from grants where wallet_id = any($1::uuid[]) and source = 'auto_recharge'
       and activated_at is null and canceled_at is null and voided_at is null`,
    [walletIds],
  );
  return new Set(result.rows.map((r) => r.wallet_id));
}

/** A wallet's money as the posting module sees it, read at the database's instant `now`. */
export interface WalletFundsAt {
  /** the database's clock when read, in microseconds: what "expired" means for the totals */
  now: Instant;
  funds: WalletFunds;
}

/**
 * The read side of lockWalletFunds, for the views: the grants and debt of each wallet as
 * a posting with no job would see them (activated grants holding money), without a
 * lock, in one statement. Hand them to walletTotals: the one place that adds money up.
 * By wallet id; a wallet that does not exist is absent. For a view that shows the
 * wallet's row beside them, read both in one snapshot (a repeatable-read transaction).
 */
export async function readWalletFunds(db: Queryable, walletIds: readonly string[]): Promise<Map<string, WalletFundsAt>> {
  if (walletIds.length === 0) return new Map();
  const result = await db.query<{ id: string; debt: bigint; now: string; grants: GrantJson[] }>({
    name: 'read_wallet_funds',
    text: `with clock as (select ${MICROS('clock_timestamp()')} as now)
      select a.id, a.debt, clock.now,
        coalesce((select ${GRANTS_JSON}
          from grants g where g.wallet_id = a.id and g.activated_at is not null and (g.remaining > 0 or g.held > 0)), '[]') as grants
      from accounts a, clock where a.id = any($1::uuid[]) and a.kind = 'wallet'`,
    values: [walletIds],
  });
  return new Map(result.rows.map((row) => [row.id, { now: BigInt(row.now), funds: { grants: row.grants.map(grantOf), debt: row.debt } }]));
}

/** Each wallet's totals now (walletTotals over readWalletFunds): what its view shows. */
export async function readWalletTotals(db: Queryable, walletIds: readonly string[]): Promise<Map<string, WalletTotals>> {
  const read = await readWalletFunds(db, walletIds);
  return new Map([...read].map(([id, { now, funds }]) => [id, walletTotals(funds, now)]));
}

/** A hold is resolved once its shares have been captured or returned (a hold of nothing never needs to be). */
function isResolved(shares: readonly Share[]): boolean {
  return shares.some((s) => s.held > 0n) && shares.every((s) => s.captured + s.returned === s.held);
}

export type { Micros };
