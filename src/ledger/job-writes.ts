import type { Queryable } from '../db/pool.js';
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
}

/** A submitted job, state reserved; its hold is reserved next in the same transaction (jobs/submit.ts). */
export async function insertJob(tx: Queryable, job: NewJob): Promise<JobRow> {
  const inserted = await tx.query<JobRow>(
    `insert into jobs (id, tenant_id, wallet_id, provider, provider_job_ref, model, currency, price_version_id,
                       limits, state, reserved, hold_expires_at, metadata)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'reserved', $10, now() + make_interval(secs => $11), $12)
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
    ],
  );
  return inserted.rows[0]!;
}

/**
 * Sets the provider's id for the job, once: null when the job already has another one.
 * Setting the same value again answers the row. A value another job of the provider has
 * fails on jobs_provider_job_ref_key (the caller names it).
 */
export async function setProviderJobRef(db: Queryable, jobId: string, ref: string): Promise<JobRow | null> {
  const updated = await db.query<JobRow>(
    `update jobs set provider_job_ref = $2, updated_at = now()
     where id = $1 and (provider_job_ref is null or provider_job_ref = $2) returning *`,
    [jobId, ref],
  );
  return updated.rows[0] ?? null;
}
