import type { Queryable } from '../db/pool.js';
import { tenantRuns } from '../db/tenant-groups.js';
import type { Decision, JobState, JobView, ProviderPolicy } from '../lifecycle/index.js';
import { parsePolicy } from '../lifecycle/index.js';
import { priceBookOf, type PriceVersionRow } from '../catalog/prices.js';

export interface JobRow {
  id: string;
  tenant_id: string;
  wallet_id: string;
  provider: string;
  provider_job_ref: string | null;
  model: string;
  currency: string;
  price_version_id: string;
  limits: Record<string, number>;
  /** the client's own labels, never interpreted */
  metadata: Record<string, string>;
  state: JobState;
  reserved: bigint;
  captured: bigint | null;
  released: bigint | null;
  adjusted: bigint;
  highest_correction: number;
  event_seq: bigint;
  cancel_requested_at: Date | null;
  /** while usage_pending: the state the usage fetch interrupted */
  resume_state: JobState | null;
  hold_expires_at: Date;
  created_at: Date;
  updated_at: Date;
}

export interface LockedJob {
  row: JobRow;
  view: JobView;
  policy: ProviderPolicy;
}

const LOCKED_JOB_SELECT = `
  select j.*, to_jsonb(p) as price, pr.policies
  from jobs j
  join price_versions p on p.id = j.price_version_id
  join providers pr on pr.name = j.provider`;

type LockedJobRow = JobRow & { price: PriceVersionRow; policies: unknown };

/**
 * SELECT … FOR UPDATE on the job row: the first lock of every settlement, so that
 * "charged so far" cannot change between decide() and the writes.
 */
export async function lockJob(tx: Queryable, jobId: string, tenantId?: string): Promise<LockedJob | null> {
  const result = await tx.query<LockedJobRow>(
    tenantId === undefined
      ? { name: 'lock_job', text: `${LOCKED_JOB_SELECT} where j.id = $1 for update of j`, values: [jobId] }
      : {
          name: 'lock_tenant_job',
          text: `${LOCKED_JOB_SELECT} where j.tenant_id = $2 and j.id = $1 for update of j`,
          values: [jobId, tenantId],
        },
  );
  const found = result.rows[0];
  return found ? lockedJobOf(found) : null;
}

/**
 * Locks several jobs in one statement, in id order — the one order every batch takes
 * them in, so two batches never wait on each other in a cycle.
 */
export async function lockJobs(tx: Queryable, jobIds: string[], tenantId?: string): Promise<Map<string, LockedJob>> {
  const ids = [...new Set(jobIds)].sort();
  const result = await tx.query<LockedJobRow>(
    tenantId === undefined
      ? { name: 'lock_jobs', text: `${LOCKED_JOB_SELECT} where j.id = any($1::uuid[]) order by j.id for update of j`, values: [ids] }
      : {
          name: 'lock_tenant_jobs',
          text: `${LOCKED_JOB_SELECT} where j.tenant_id = $2 and j.id = any($1::uuid[]) order by j.id for update of j`,
          values: [ids, tenantId],
        },
  );
  return new Map(result.rows.map((row) => [row.id, lockedJobOf(row)]));
}

function lockedJobOf(found: LockedJobRow): LockedJob {
  const { price, policies, ...row } = found;
  return {
    row,
    view: {
      id: row.id,
      tenantId: row.tenant_id,
      state: row.state,
      reserved: row.reserved,
      captured: row.captured,
      released: row.released,
      adjusted: row.adjusted,
      highestCorrection: row.highest_correction,
      priceBook: priceBookOf(price),
      resumeState: row.resume_state,
      cancelRequested: row.cancel_requested_at !== null,
    },
    policy: parsePolicy(policies),
  };
}

/**
 * Writes what decide() said about each job itself — state, totals, correction, resume
 * state and the tenant's cancel — in one statement. A decision that changes none of them
 * writes nothing for its job.
 */
export async function writeJobs(tx: Queryable, decided: readonly { job: LockedJob; decision: Decision }[]): Promise<void> {
  const changed = decided.filter(({ job: { row }, decision }) => {
    const { totals } = decision;
    return !(
      decision.nextState === row.state &&
      totals.captured === row.captured &&
      totals.released === row.released &&
      totals.adjusted === row.adjusted &&
      decision.highestCorrection === row.highest_correction &&
      decision.resumeState === row.resume_state &&
      !(decision.recordsCancel && row.cancel_requested_at === null)
    );
  });
  for (const run of tenantRuns(changed, (c) => c.job.row.tenant_id)) await writeTenantJobs(tx, run.tenantId!, run.items);
}

async function writeTenantJobs(tx: Queryable, tenantId: string, changed: readonly { job: LockedJob; decision: Decision }[]): Promise<void> {
  await tx.query({
    name: 'write_jobs',
    text: `update jobs j set state = c.state, captured = c.captured, released = c.released, adjusted = c.adjusted,
            highest_correction = c.highest_correction, resume_state = c.resume_state,
            cancel_requested_at = case when c.records_cancel then coalesce(j.cancel_requested_at, now()) else j.cancel_requested_at end,
            updated_at = now()
     from unnest($1::uuid[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::int[], $7::text[], $8::bool[])
       as c(id, state, captured, released, adjusted, highest_correction, resume_state, records_cancel)
     where j.tenant_id = $9 and j.id = c.id`,
    values: [
      changed.map((c) => c.job.row.id),
      changed.map((c) => c.decision.nextState),
      changed.map((c) => c.decision.totals.captured?.toString() ?? null),
      changed.map((c) => c.decision.totals.released?.toString() ?? null),
      changed.map((c) => c.decision.totals.adjusted.toString()),
      changed.map((c) => c.decision.highestCorrection),
      changed.map((c) => c.decision.resumeState),
      changed.map((c) => c.decision.recordsCancel),
      tenantId,
    ],
  });
}
