import type { Queryable } from '../db/pool.js';
import { readJobFunding, type FundingShare } from '../funds/index.js';
import { listSettlements, type SettlementRow } from '../ledger/index.js';
import type { JobRow } from './rows.js';

/** Read model of one job for the API: never shares code with the settlement writes. */
export interface JobDetails {
  job: JobRow;
  priceVersion: number;
  settlements: SettlementRow[];
  events: {
    event_key: string;
    provider: string;
    type: string;
    state: string;
    reason: string | null;
    attempts: number;
    /** operators only: the raw error text, which may name private URLs */
    last_error: string | null;
    /** the stable code of last_error, for tenants */
    error_code: ErrorCode | null;
    received_at: Date;
    processed_at: Date | null;
    /** operators only: who set a dead event aside, when and why */
    discarded_by: string | null;
    discarded_at: Date | null;
    discard_note: string | null;
  }[];
  alerts: string[];
  /** each alert raised for the job, oldest first, with the detail it stored (ledger/alert-details.ts) */
  alertDetails: { class: string; source: string; detail: Record<string, unknown> | null; created_at: Date }[];
  /** every webhook delivery that named the job, duplicates included, oldest first */
  deliveries: { provider: string; event_key: string; outcome: string; received_at: Date }[];
  /** the job's money per grant: the hold's shares in allocation order, then grants only adjustments reached */
  funding: FundingShare[];
  /** the adjustments' part no grant covered (debt), net of refunds */
  fundingDebt: bigint;
  /** the hold's extensions, oldest first */
  extensions: { version: number; settlement_key: string; amount: bigint; limits: Record<string, number>; source: 'api' | 'auto'; created_at: Date }[];
}

/** Why an event's last try failed, as a tenant may see it. */
export type ErrorCode = 'usage_fetch_failed' | 'settlement_failed';

export async function loadJobDetails(db: Queryable, job: JobRow): Promise<JobDetails> {
  // One after another: callers pass one transaction's connection (a repeatable-read
  // snapshot), which runs one query at a time anyway; issuing them at once only made
  // node-postgres queue them, with a deprecation warning.
  const price = await db.query<{ version: number }>('select version from price_versions where id = $1', [job.price_version_id]);
  const settlements = await listSettlements(db, job.id);
  const events = await db.query<JobDetails['events'][number]>(
    `select event_key, provider, type, state, reason, attempts, last_error, received_at, processed_at,
            discarded_by, discarded_at, discard_note,
            case when last_error is null then null
                 when (event->>'fetch_usage')::boolean and usage_fetched_at is null then 'usage_fetch_failed'
                 else 'settlement_failed' end as error_code
     from webhook_events where job_id = $1 order by seq`,
    [job.id],
  );
  const alerts = await db.query<JobDetails['alertDetails'][number]>(
    'select class, source, detail, created_at from alerts where job_id = $1 order by created_at, id',
    [job.id],
  );
  // An accepted delivery is recorded by its event row alone (migration 0026); repeats,
  // conflicts and mismatches by their attempt rows. Oldest first; at one instant (a group
  // commit's statement shares now()) the accepted events first — an attempt repeating an
  // event never precedes it — in their sequence, then the attempts by id (UUIDv7: the
  // order intake made them). Every key is unique within its kind, so the order is total.
  const deliveries = await db.query<JobDetails['deliveries'][number]>(
    `select provider, event_key, outcome, received_at from (
       select provider, event_key, 'accepted' as outcome, received_at, 0 as kind, seq, null::uuid as id
       from webhook_events where job_id = $1
       union all
       select provider, event_key, outcome, received_at, 1, null, id
       from delivery_attempts where job_id = $1
     ) d
     order by received_at, kind, seq, id`,
    [job.id],
  );
  const funding = await readJobFunding(db, job.id);
  // a job's extensions are numbered 1…extension_count: none to read for a hold that never grew
  const extensions =
    (job.extension_count ?? 0) > 0
      ? await db.query<JobDetails['extensions'][number]>(
          'select version, settlement_key, amount, limits, source, created_at from job_extensions where tenant_id = $2 and job_id = $1 order by version',
          [job.id, job.tenant_id],
        )
      : { rows: [] };
  return {
    job,
    priceVersion: price.rows[0]!.version,
    settlements,
    events: events.rows,
    alerts: [...new Set(alerts.rows.map((a) => a.class))].sort(),
    alertDetails: alerts.rows,
    deliveries: deliveries.rows,
    funding: funding.shares,
    fundingDebt: funding.debt,
    extensions: extensions.rows,
  };
}
