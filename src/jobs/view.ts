import type { Queryable } from '../db/pool.js';
import { listSettlements, type SettlementRow } from '../ledger/settlements.js';
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
    last_error: string | null;
    received_at: Date;
    processed_at: Date | null;
  }[];
  alerts: string[];
}

export async function loadJobDetails(db: Queryable, job: JobRow): Promise<JobDetails> {
  const [price, settlements, events, alerts] = await Promise.all([
    db.query<{ version: number }>('select version from price_versions where id = $1', [job.price_version_id]),
    listSettlements(db, job.id),
    db.query<JobDetails['events'][number]>(
      `select event_key, provider, type, state, reason, attempts, last_error, received_at, processed_at
       from webhook_events where job_id = $1 order by seq`,
      [job.id],
    ),
    db.query<{ class: string }>('select distinct class from alerts where job_id = $1 order by class', [job.id]),
  ]);
  return {
    job,
    priceVersion: price.rows[0]!.version,
    settlements,
    events: events.rows,
    alerts: alerts.rows.map((a) => a.class),
  };
}
