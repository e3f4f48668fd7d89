import type { Queryable } from '../db/pool.js';
import {
  walletTotals,
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
  /** by `${jobId}:${grantId}`: the share's 'reserve' entry, which its capture and return post or void */
  pendingEntries: Map<string, string | null>;
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
): Promise<LockedFunds | null> {
  const wallet = await tx.query<{ tenant_id: string; currency: string; debt: bigint }>({
    name: owner ? 'lock_wallet_owned' : 'lock_wallet',
    text: `select tenant_id, currency, debt from accounts
      where id = $1 and kind = 'wallet'${owner ? ' and tenant_id = $2 and currency = $3' : ''}
      for no key update`,
    values: owner ? [walletId, owner.tenantId, owner.currency] : [walletId],
  });
  const head = wallet.rows[0];
  if (!head) return null;
  const result = await tx.query<{ now: string; grants: GrantJson[]; shares: ShareJson[]; draws: DrawJson[] }>({
    name: 'load_wallet_funds',
    text: `with funded as (
        select grant_id from hold_shares where job_id = any($2::uuid[])
        union select grant_id from adjustment_draws where job_id = any($2::uuid[]) and grant_id is not null
        union select unnest($3::uuid[])
      )
      select ${MICROS('clock_timestamp()')} as now,
        coalesce((select ${GRANTS_JSON}
          from grants g where g.wallet_id = $1 and g.activated_at is not null
            and (g.remaining > 0 or g.held > 0 or g.id in (select grant_id from funded))), '[]') as grants,
        coalesce((select jsonb_agg(jsonb_build_object('job_id', s.job_id, 'grant_id', s.grant_id, 'held', s.held::text,
            'captured', s.captured::text, 'returned', s.returned::text, 'refunded', s.refunded::text, 'pending_entry_id', s.pending_entry_id)
            order by s.job_id, s.position)
          from hold_shares s where s.job_id = any($2::uuid[])), '[]') as shares,
        coalesce((select jsonb_agg(jsonb_build_object('job_id', d.job_id, 'version', d.version, 'grant_id', d.grant_id,
            'amount', d.amount::text, 'refunded', d.refunded::text) order by d.job_id, d.version, d.position)
          from adjustment_draws d where d.job_id = any($2::uuid[])), '[]') as draws`,
    values: [walletId, jobIds, grantIds],
  });
  const row = { ...head, ...result.rows[0]! };

  const grants = row.grants.map(grantOf);
  const jobs = new Map<string, JobFunding>();
  const pendingEntries = new Map<string, string | null>();
  const of = (jobId: string) => jobs.get(jobId) ?? jobs.set(jobId, { shares: [], draws: [], resolved: false }).get(jobId)!;
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
  for (const d of row.draws) {
    (of(d.job_id).draws as JobFunding['draws'][number][]).push({
      version: d.version,
      grantId: d.grant_id,
      amount: BigInt(d.amount),
      refunded: BigInt(d.refunded),
    });
  }
  for (const [jobId, job] of jobs) jobs.set(jobId, { ...job, resolved: isResolved(job.shares) });
  return {
    walletId,
    tenantId: row.tenant_id,
    currency: row.currency,
    now: BigInt(row.now),
    funds: { grants, debt: row.debt },
    jobs,
    pendingEntries,
  };
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

export interface NewShareEntry {
  jobId: string;
  grantId: string;
  pendingEntryId: string | null;
}

/**
 * Writes what the posting module returned, in one statement: each grant whose amounts
 * changed, each job's shares (new ones with their 'reserve' entries) and draws, the
 * wallet's debt. Only under the lock lockWalletFunds took.
 */
export async function writeWalletFunds(
  tx: Queryable,
  before: LockedFunds,
  after: WalletFunds,
  jobs: ReadonlyMap<string, JobFunding>,
  newShareEntries: readonly NewShareEntry[] = [],
): Promise<void> {
  const earlier = new Map(before.funds.grants.map((g) => [g.id, g]));
  const grants = after.grants.filter((g) => {
    const was = earlier.get(g.id);
    return (
      !was ||
      was.remaining !== g.remaining ||
      was.held !== g.held ||
      was.expiredAmount !== g.expiredAmount ||
      was.voidedAmount !== g.voidedAmount ||
      was.expiryPosted !== g.expiryPosted ||
      was.voided !== g.voided
    );
  });
  const pending = new Map(before.pendingEntries);
  for (const s of newShareEntries) pending.set(`${s.jobId}:${s.grantId}`, s.pendingEntryId);
  const shares: { jobId: string; position: number; share: Share }[] = [];
  const draws: { jobId: string; position: number; draw: JobFunding['draws'][number] }[] = [];
  for (const [jobId, job] of jobs) {
    const was = before.jobs.get(jobId);
    job.shares.forEach((share, position) => {
      const old = was?.shares[position];
      if (!old || old.captured !== share.captured || old.returned !== share.returned || old.refunded !== share.refunded)
        shares.push({ jobId, position, share });
    });
    const positions = new Map<number, number>();
    job.draws.forEach((draw, i) => {
      const position = positions.get(draw.version) ?? 0;
      positions.set(draw.version, position + 1);
      const old = was?.draws[i];
      if (!old || old.refunded !== draw.refunded) draws.push({ jobId, position, draw });
    });
  }
  if (grants.length === 0 && shares.length === 0 && draws.length === 0 && after.debt === before.funds.debt) return;
  await tx.query({
    name: 'write_wallet_funds',
    text: `with moved_grants as (
        update grants g set remaining = u.remaining, held = u.held, expired_amount = u.expired_amount, voided_amount = u.voided_amount,
               expiry_posted_at = case when u.expiry_posted then coalesce(g.expiry_posted_at, clock_timestamp()) end,
               voided_at = case when u.voided then coalesce(g.voided_at, clock_timestamp()) end
        from unnest($1::uuid[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::boolean[], $7::boolean[])
          as u(id, remaining, held, expired_amount, voided_amount, expiry_posted, voided)
        where g.id = u.id
        returning g.id
      ), shares as (
        insert into hold_shares (job_id, grant_id, tenant_id, position, held, captured, returned, refunded, pending_entry_id)
        select s.job_id, s.grant_id, $22, s.position, s.held, s.captured, s.returned, s.refunded, s.pending_entry_id
        from unnest($8::uuid[], $9::uuid[], $10::int[], $11::bigint[], $12::bigint[], $13::bigint[], $14::bigint[], $15::uuid[])
          as s(job_id, grant_id, position, held, captured, returned, refunded, pending_entry_id)
        on conflict on constraint hold_shares_pkey do update
          set captured = excluded.captured, returned = excluded.returned, refunded = excluded.refunded
        returning job_id
      ), draws as (
        insert into adjustment_draws (job_id, version, position, grant_id, tenant_id, amount, refunded)
        select d.job_id, d.version, d.position, d.grant_id, $22, d.amount, d.refunded
        from unnest($16::uuid[], $17::int[], $18::int[], $19::uuid[], $20::bigint[], $21::bigint[])
          as d(job_id, version, position, grant_id, amount, refunded)
        on conflict on constraint adjustment_draws_pkey do update set refunded = excluded.refunded
        returning job_id
      )
      update accounts set debt = $23 where id = $24 and debt <> $23`,
    values: [
      grants.map((g) => g.id),
      grants.map((g) => g.remaining.toString()),
      grants.map((g) => g.held.toString()),
      grants.map((g) => g.expiredAmount.toString()),
      grants.map((g) => g.voidedAmount.toString()),
      grants.map((g) => g.expiryPosted),
      grants.map((g) => g.voided),
      shares.map((s) => s.jobId),
      shares.map((s) => s.share.grantId),
      shares.map((s) => s.position),
      shares.map((s) => s.share.held.toString()),
      shares.map((s) => s.share.captured.toString()),
      shares.map((s) => s.share.returned.toString()),
      shares.map((s) => s.share.refunded.toString()),
      shares.map((s) => pending.get(`${s.jobId}:${s.share.grantId}`) ?? null),
      draws.map((d) => d.jobId),
      draws.map((d) => d.draw.version),
      draws.map((d) => d.position),
      draws.map((d) => d.draw.grantId),
      draws.map((d) => d.draw.amount.toString()),
      draws.map((d) => d.draw.refunded.toString()),
      before.tenantId,
      after.debt.toString(),
      before.walletId,
    ],
  });
}

export type { Micros };
