import type { Queryable } from '../db/pool.js';
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
export async function lockJob(tx: Queryable, jobId: string): Promise<LockedJob | null> {
  const result = await tx.query<LockedJobRow>({
    name: 'lock_job',
    text: `${LOCKED_JOB_SELECT} where j.id = $1 for update of j`,
    values: [jobId],
  });
  const found = result.rows[0];
  return found ? lockedJobOf(found) : null;
}

/**
 * Locks several jobs in one statement, in id order — the one order every batch takes
 * them in, so two batches never wait on each other in a cycle.
 */
export async function lockJobs(tx: Queryable, jobIds: string[]): Promise<Map<string, LockedJob>> {
  const result = await tx.query<LockedJobRow>({
    name: 'lock_jobs',
    text: `${LOCKED_JOB_SELECT} where j.id = any($1::uuid[]) order by j.id for update of j`,
    values: [[...new Set(jobIds)].sort()],
  });
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
 * Writes what decide() said about the job itself: state, totals, correction, resume state
 * and the tenant's cancel. Nothing is written when the decision changes none of them.
 */
export async function writeJob(tx: Queryable, job: LockedJob, decision: Decision): Promise<void> {
  const row = job.row;
  const { totals } = decision;
  const unchanged =
    decision.nextState === row.state &&
    totals.captured === row.captured &&
    totals.released === row.released &&
    totals.adjusted === row.adjusted &&
    decision.highestCorrection === row.highest_correction &&
    decision.resumeState === row.resume_state &&
    !(decision.recordsCancel && row.cancel_requested_at === null);
  if (unchanged) return;
  await tx.query({
    name: 'write_job',
    text: `update jobs set state = $2, captured = $3, released = $4, adjusted = $5, highest_correction = $6, resume_state = $7,
            cancel_requested_at = case when $8 then coalesce(cancel_requested_at, now()) else cancel_requested_at end,
            updated_at = now()
     where id = $1`,
    values: [
      row.id,
      decision.nextState,
      totals.captured?.toString() ?? null,
      totals.released?.toString() ?? null,
      totals.adjusted.toString(),
      decision.highestCorrection,
      decision.resumeState,
      decision.recordsCancel,
    ],
  });
}
