import type { Queryable } from '../db/pool.js';
import { ForeignKeyViolation, mapDatabaseError } from '../db/errors.js';
import { ProviderJobRefTaken } from './errors.js';
import { WalletNotFound } from '../funds/index.js';
import type { JobRow } from './locked-job.js';

/**
 * The jobs table's writes outside settlement (src/db/table-owners.ts: the ledger owns the
 * job row, the first lock of every settlement; writeJobs in locked-job.ts writes what
 * decide() says). Intake's numbering of events (jobs.event_seq) stays in its one
 * statement, queue/enqueue.ts.
 */

export interface NewJob {
  id: string;
  tenantId: string;
  walletId: string;
  provider: string;
  providerJobRef: string | null;
  model: string;
  currency: string;
  priceVersionId: string;
  limits: Record<string, unknown>;
  /** the reservation: the price of the limits at the pinned version */
  reserved: bigint;
  /** the hold's lifetime from now, by the database's clock */
  holdTtlSeconds: number;
  metadata: Record<string, string>;
  /** the tenant's rule for automatic extensions (CONTRACT.md "Long-running jobs"), or null */
  autoExtend: { step: Record<string, number>; max_limits: Record<string, number> } | null;
}

/** A submitted job, state reserved; its hold is reserved next in the same transaction (jobs/submit.ts). */
export async function insertJob(tx: Queryable, job: NewJob): Promise<JobRow> {
  if (job.providerJobRef !== null) await refuseRefOfAnotherTenant(tx, job.provider, job.providerJobRef, job.tenantId);
  const inserted = await tx
    .query<JobRow>(
      // auto_extend only when there is one: a job without it is the row of every schema since 0001
      `insert into jobs (id, tenant_id, wallet_id, provider, provider_job_ref, model, currency, price_version_id,
                       limits, state, reserved, hold_expires_at, metadata${job.autoExtend === null ? '' : ', auto_extend'})
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'reserved', $10, now() + make_interval(secs => $11), $12${job.autoExtend === null ? '' : ', $13'})
     returning *`,
      [
        job.id,
        job.tenantId,
        job.walletId,
        job.provider,
        job.providerJobRef,
        job.model,
        job.currency,
        job.priceVersionId,
        JSON.stringify(job.limits),
        job.reserved.toString(),
        job.holdTtlSeconds,
        JSON.stringify(job.metadata),
        ...(job.autoExtend === null ? [] : [JSON.stringify(job.autoExtend)]),
      ],
    )
    .catch((error: unknown) => {
      // The wallet is the job's tenant's or the key (wallet_id, tenant_id) refuses it: the
      // reservation's own answer for a wallet that is not the tenant's.
      const mapped = mapDatabaseError(error);
      if (mapped instanceof ForeignKeyViolation && mapped.constraint === 'jobs_wallet_fkey') throw new WalletNotFound(job.walletId);
      throw error;
    });
  return inserted.rows[0]!;
}

/**
 * Sets the provider's id for the job, once: null when the job already has another one.
 * Setting the same value again answers the row. A value another job of the provider has
 * fails on jobs_provider_job_ref_key (the tenant's own job) or with ProviderJobRefTaken
 * (another tenant's): the caller names both. In the caller's transaction (the guard's lock).
 */
export async function setProviderJobRef(
  tx: Queryable,
  job: { id: string; tenantId: string; provider: string },
  ref: string,
): Promise<JobRow | null> {
  await refuseRefOfAnotherTenant(tx, job.provider, ref, job.tenantId);
  const updated = await tx.query<JobRow>(
    `update jobs set provider_job_ref = $2, updated_at = now()
     where tenant_id = $3 and id = $1 and (provider_job_ref is null or provider_job_ref = $2) returning *`,
    [job.id, ref, job.tenantId],
  );
  return updated.rows[0] ?? null;
}

/**
 * A provider's job ref names one job: intake finds a job by it without knowing the
 * tenant. jobs_provider_job_ref_key includes tenant_id (so Citus can enforce it, inside a
 * tenant's shard: migrations/0023), so across tenants the writers keep it: under a lock on
 * the (provider, ref) pair, taken before the read so two tenants setting one ref at once
 * queue and the second sees the first's commit, a ref another tenant's job of the provider
 * has is refused. The read spans tenants by design (docs/operations/scaling.md).
 */
async function refuseRefOfAnotherTenant(tx: Queryable, provider: string, ref: string, tenantId: string): Promise<void> {
  await tx.query({
    name: 'lock_provider_job_ref',
    text: `select pg_advisory_xact_lock(hashtextextended('provider_job_ref:' || $1 || ':' || $2, 0))`,
    values: [provider, ref],
  });
  const taken = await tx.query({
    name: 'provider_job_ref_of_another_tenant',
    text: 'select 1 from jobs where provider = $1 and provider_job_ref = $2 and tenant_id <> $3 limit 1',
    values: [provider, ref, tenantId],
  });
  if ((taken.rowCount ?? 0) > 0) throw new ProviderJobRefTaken(provider);
}

/**
 * A usage fetch that will never finish (its event was discarded): a job it left
 * usage_pending goes back where the fetch found it — to cancel_requested when the tenant
 * cancelled meanwhile — as a fetched mismatch does (lifecycle onUsageMismatch). Otherwise it
 * would show usage_pending for good, and the cancel grace would pass it by. In the
 * discard's transaction; true when the job moved.
 */
export async function resumeAbandonedFetch(tx: Queryable, jobId: string): Promise<boolean> {
  const result = await tx.query(
    `update jobs
     set state = case when cancel_requested_at is not null and resume_state in ('reserved', 'running')
                      then 'cancel_requested' else resume_state end,
         resume_state = null, updated_at = now()
     where id = $1 and state = 'usage_pending'`,
    [jobId],
  );
  return result.rowCount === 1;
}
