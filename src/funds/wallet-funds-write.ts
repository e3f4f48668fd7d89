import type { Queryable } from '../db/pool.js';
import { tenantRuns } from '../db/tenant-groups.js';
import type { JobFunding, Share, WalletFunds } from './posting/index.js';
import type { LockedFunds } from './wallet-funds.js';

export interface NewShareEntry {
  jobId: string;
  grantId: string;
  pendingEntryId: string | null;
}

/** What the posting module returned for one locked wallet. */
export interface FundsWrite {
  before: LockedFunds;
  after: WalletFunds;
  /** the wallet's jobs the postings moved, by id */
  jobs: ReadonlyMap<string, JobFunding>;
  newShareEntries?: readonly NewShareEntry[];
}

/**
 * Writes what the posting module returned, in one statement for any number of wallets:
 * each grant whose amounts changed, each job's shares (new ones with their 'reserve'
 * entries) and draws, each wallet's debt. Only under the locks lockWalletFunds or
 * lockWalletsFunds took.
 */
export async function writeWalletsFunds(tx: Queryable, writes: readonly FundsWrite[]): Promise<void> {
  for (const run of tenantRuns(writes, (w) => w.before.tenantId)) await writeTenantFunds(tx, run.tenantId!, run.items);
}

async function writeTenantFunds(tx: Queryable, tenantId: string, writes: readonly FundsWrite[]): Promise<void> {
  const grants: { id: string; grant: WalletFunds['grants'][number] }[] = [];
  const shares: { jobId: string; tenantId: string; position: number; share: Share; pendingEntryId: string | null }[] = [];
  const draws: { jobId: string; tenantId: string; position: number; draw: JobFunding['draws'][number] }[] = [];
  const debts: { walletId: string; debt: bigint }[] = [];
  for (const { before, after, jobs, newShareEntries = [] } of writes) {
    const earlier = new Map(before.funds.grants.map((g) => [g.id, g]));
    for (const g of after.grants) {
      const was = earlier.get(g.id);
      const moved =
        !was ||
        was.remaining !== g.remaining ||
        was.held !== g.held ||
        was.expiredAmount !== g.expiredAmount ||
        was.voidedAmount !== g.voidedAmount ||
        was.expiryPosted !== g.expiryPosted ||
        was.voided !== g.voided;
      if (moved) grants.push({ id: g.id, grant: g });
    }
    const pending = new Map(before.pendingEntries);
    // an extension's reserve on a grant the job already had a share of: the share keeps its first
    for (const s of newShareEntries) if (!pending.has(`${s.jobId}:${s.grantId}`)) pending.set(`${s.jobId}:${s.grantId}`, s.pendingEntryId);
    for (const [jobId, job] of jobs) {
      const was = before.jobs.get(jobId);
      job.shares.forEach((share, position) => {
        const old = was?.shares[position];
        if (!old || old.held !== share.held || old.captured !== share.captured || old.returned !== share.returned || old.refunded !== share.refunded) {
          shares.push({
            jobId,
            tenantId: before.tenantId,
            position,
            share,
            pendingEntryId: pending.get(`${jobId}:${share.grantId}`) ?? null,
          });
        }
      });
      const positions = new Map<number, number>();
      job.draws.forEach((draw, i) => {
        const position = positions.get(draw.version) ?? 0;
        positions.set(draw.version, position + 1);
        const old = was?.draws[i];
        if (!old || old.refunded !== draw.refunded) draws.push({ jobId, tenantId: before.tenantId, position, draw });
      });
    }
    if (after.debt !== before.funds.debt) debts.push({ walletId: before.walletId, debt: after.debt });
  }
  if (grants.length === 0 && shares.length === 0 && draws.length === 0 && debts.length === 0) return;
  await tx.query({
    name: 'write_wallets_funds',
    text: `with moved_grants as (
        update grants g set remaining = u.remaining, held = u.held, expired_amount = u.expired_amount, voided_amount = u.voided_amount,
               expiry_posted_at = case when u.expiry_posted then coalesce(g.expiry_posted_at, clock_timestamp()) end,
               voided_at = case when u.voided then coalesce(g.voided_at, clock_timestamp()) end
        from unnest($1::uuid[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::boolean[], $7::boolean[])
          as u(id, remaining, held, expired_amount, voided_amount, expiry_posted, voided)
        where g.tenant_id = $26 and g.id = u.id
        returning g.id
      ), shares as (
        insert into hold_shares (job_id, grant_id, tenant_id, position, held, captured, returned, refunded, pending_entry_id)
        select s.job_id, s.grant_id, s.tenant_id, s.position, s.held, s.captured, s.returned, s.refunded, s.pending_entry_id
        from unnest($8::uuid[], $9::uuid[], $10::int[], $11::bigint[], $12::bigint[], $13::bigint[], $14::bigint[], $15::uuid[], $16::uuid[])
          as s(job_id, grant_id, position, held, captured, returned, refunded, pending_entry_id, tenant_id)
        on conflict on constraint hold_shares_pkey do update
          set held = excluded.held, captured = excluded.captured, returned = excluded.returned, refunded = excluded.refunded
        returning job_id
      ), draws as (
        insert into adjustment_draws (job_id, version, position, grant_id, tenant_id, amount, refunded)
        select d.job_id, d.version, d.position, d.grant_id, d.tenant_id, d.amount, d.refunded
        from unnest($17::uuid[], $18::int[], $19::int[], $20::uuid[], $21::bigint[], $22::bigint[], $23::uuid[])
          as d(job_id, version, position, grant_id, amount, refunded, tenant_id)
        on conflict on constraint adjustment_draws_pkey do update set refunded = excluded.refunded
        returning job_id
      )
      update accounts a set debt = u.debt from unnest($24::uuid[], $25::bigint[]) as u(id, debt) where a.tenant_id = $26 and a.id = u.id`,
    values: [
      grants.map((g) => g.id),
      grants.map((g) => g.grant.remaining.toString()),
      grants.map((g) => g.grant.held.toString()),
      grants.map((g) => g.grant.expiredAmount.toString()),
      grants.map((g) => g.grant.voidedAmount.toString()),
      grants.map((g) => g.grant.expiryPosted),
      grants.map((g) => g.grant.voided),
      shares.map((s) => s.jobId),
      shares.map((s) => s.share.grantId),
      shares.map((s) => s.position),
      shares.map((s) => s.share.held.toString()),
      shares.map((s) => s.share.captured.toString()),
      shares.map((s) => s.share.returned.toString()),
      shares.map((s) => s.share.refunded.toString()),
      shares.map((s) => s.pendingEntryId),
      shares.map((s) => s.tenantId),
      draws.map((d) => d.jobId),
      draws.map((d) => d.draw.version),
      draws.map((d) => d.position),
      draws.map((d) => d.draw.grantId),
      draws.map((d) => d.draw.amount.toString()),
      draws.map((d) => d.draw.refunded.toString()),
      draws.map((d) => d.tenantId),
      debts.map((d) => d.walletId),
      debts.map((d) => d.debt.toString()),
      tenantId,
    ],
  });
}
