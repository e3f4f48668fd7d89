import type { Queryable } from '../db/pool.js';
import { tenantRuns } from '../db/tenant-groups.js';
import type { Decision, ExhaustedReason, Growth, JobState, JobView, ProviderPolicy } from '../lifecycle/index.js';
import { formatAmount } from '../money/index.js';
import { enqueueMessages, type NewMessage } from '../outbound/enqueue.js';
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
  /** {step, max_limits} (CONTRACT.md "Long-running jobs"), or null */
  auto_extend: { step: Record<string, number>; max_limits: Record<string, number> } | null;
  usage_so_far: Record<string, number> | null;
  extension_count: number;
  /** {reason, reserved, usage_price, at}, amounts as decimal strings of micro-units */
  hold_exhausted: { reason: ExhaustedReason; reserved: string; usage_price: string; at: string } | null;
  exhausted_announced: bigint | null;
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
      limits: row.limits,
      autoExtend: row.auto_extend ? { step: row.auto_extend.step, maxLimits: row.auto_extend.max_limits } : null,
      usageSoFar: row.usage_so_far,
      extensionCount: row.extension_count,
      holdExhausted: row.hold_exhausted
        ? { reason: row.hold_exhausted.reason, reserved: BigInt(row.hold_exhausted.reserved), usagePrice: BigInt(row.hold_exhausted.usage_price) }
        : null,
      exhaustedAnnounced: row.exhausted_announced,
    },
    policy: parsePolicy(policies),
  };
}

/**
 * Writes what decide() said about each job itself — state, totals, correction, resume
 * state and the tenant's cancel — in one statement; then, only for the jobs whose hold
 * grew or whose usage was reported (growthChanged), their growth in one more, and
 * job.hold_exhausted where a decision announces it. A decision that changes none of them
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
  const growing = decided.filter(({ job, decision }) => growthChanged(job, decision.growth));
  for (const run of tenantRuns(growing, (c) => c.job.row.tenant_id)) await writeTenantGrowth(tx, run.tenantId!, run.items);
  await enqueueMessages(tx, growing.flatMap(({ job, decision }) => exhaustedMessages(job, decision.growth)));
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

/** Whether a decision (or a tenant's extension) changes the job's growth: its hold, limits, usage so far, exhausted state or expiry. */
export function growthChanged(job: LockedJob, growth: Growth): boolean {
  const { view } = job;
  return (
    growth.reserved !== job.row.reserved ||
    growth.extensionCount !== (job.row.extension_count ?? 0) ||
    growth.usageSoFar !== (view.usageSoFar ?? null) ||
    growth.limits !== view.limits ||
    growth.holdExhausted !== (view.holdExhausted ?? null) ||
    growth.announceExhausted ||
    growth.movesExpiry
  );
}

/**
 * The growth of each job: limits, reservation, usage so far, extension count, exhausted
 * state (a new finding stamped now(); the row's own kept with its instant), the
 * `reserved` last announced, and the hold's expiry moved to now + hold_ttl_seconds
 * (never earlier) on the job and its open hold.
 */
export async function writeTenantGrowth(tx: Queryable, tenantId: string, jobs: readonly { job: LockedJob; decision: { growth: Growth } }[]): Promise<void> {
  const exhausted = ({ decision: { growth }, job: { view } }: (typeof jobs)[number]) => {
    const e = growth.holdExhausted;
    if (e === null) return null;
    const same = view.holdExhausted === e;
    return JSON.stringify({ reason: e.reason, reserved: e.reserved.toString(), usage_price: e.usagePrice.toString(), ...(same ? { keep: true } : {}) });
  };
  await tx.query({
    name: 'write_job_growth',
    text: `with written as (
        update jobs j set limits = c.limits, reserved = c.reserved, usage_so_far = c.usage_so_far, extension_count = c.extension_count,
            hold_exhausted = case when c.exhausted is null then null
                                  when c.exhausted ? 'keep' then j.hold_exhausted
                                  else c.exhausted || jsonb_build_object('at', now()) end,
            exhausted_announced = case when c.announce then c.reserved else j.exhausted_announced end,
            hold_expires_at = case when c.ttl is null then j.hold_expires_at
                                   else greatest(j.hold_expires_at, now() + c.ttl * interval '1 second') end,
            updated_at = now()
        from unnest($1::uuid[], $2::jsonb[], $3::bigint[], $4::jsonb[], $5::int[], $6::jsonb[], $7::bool[], $8::int[])
          as c(id, limits, reserved, usage_so_far, extension_count, exhausted, announce, ttl)
        where j.tenant_id = $9 and j.id = c.id
        returning j.id, j.hold_expires_at
      )
      update holds h set expires_at = w.hold_expires_at
      from written w where h.tenant_id = $9 and h.job_id = w.id and h.resolved_by is null and h.expires_at <> w.hold_expires_at`,
    values: [
      jobs.map((c) => c.job.row.id),
      jobs.map((c) => JSON.stringify(c.decision.growth.limits)),
      jobs.map((c) => c.decision.growth.reserved.toString()),
      jobs.map((c) => (c.decision.growth.usageSoFar === null ? null : JSON.stringify(c.decision.growth.usageSoFar))),
      jobs.map((c) => c.decision.growth.extensionCount),
      jobs.map(exhausted),
      jobs.map((c) => c.decision.growth.announceExhausted),
      jobs.map((c) => (c.decision.growth.movesExpiry ? c.job.policy.holdTtlSeconds : null)),
      tenantId,
    ],
  });
}

/** job.hold_exhausted, when the growth announces it. */
export function exhaustedMessages(job: LockedJob, growth: Growth): NewMessage[] {
  const e = growth.holdExhausted;
  if (!growth.announceExhausted || e === null) return [];
  return [
    {
      tenantId: job.row.tenant_id,
      type: 'job.hold_exhausted',
      data: { job_id: job.row.id, reason: e.reason, reserved: formatAmount(e.reserved), usage_price: formatAmount(e.usagePrice) },
    },
  ];
}

/** One job's growth outside a settlement (a tenant's extension): writeTenantGrowth and its message. */
export async function writeGrowth(tx: Queryable, job: LockedJob, growth: Growth): Promise<void> {
  if (!growthChanged(job, growth)) return;
  await writeTenantGrowth(tx, job.row.tenant_id, [{ job, decision: { growth } }]);
  await enqueueMessages(tx, exhaustedMessages(job, growth));
}
