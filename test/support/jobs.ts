import { expect } from 'vitest';
import type { Queryable } from '../../src/db/pool.js';
import type { JobRow } from '../../src/jobs/rows.js';
import { loadJobDetails, type JobDetails } from '../../src/jobs/view.js';
import { deliver, signDelivery } from './client.js';
import { waitUntil } from './server.js';
import type { World } from './world.js';

/** What GET /v1/jobs/{id} answers, as far as these tests read it. */
export interface JobViewBody {
  id: string;
  state: string;
  reserved: string;
  captured: string;
  released: string;
  adjusted: string;
  price_version: number;
  settlements: { key: string; charge_type: string; version: number; amount: string; reason?: string; pricing?: any }[];
  events: { event_key: string; type: string; state: string; reason: string | null; attempts: number; last_error: string | null }[];
  alerts: string[];
  alert_details: { class: string; source: string; detail: Record<string, unknown>; created_at: string }[];
}

const UNSETTLED = ['pending', 'processing'];

/**
 * The job view's deliveries of a job, read from the database as GET /v1/jobs/{id} reads
 * them: every webhook delivery that named it, oldest first (accepted ones are its events,
 * the rest its delivery attempts). `eventKey` keeps one event's deliveries.
 */
export async function jobDeliveries(db: Queryable, jobId: string, eventKey?: string): Promise<JobDetails['deliveries']> {
  const job = (await db.query<JobRow>('select * from jobs where id = $1', [jobId])).rows[0]!;
  const { deliveries } = await loadJobDetails(db, job);
  return eventKey === undefined ? deliveries : deliveries.filter((d) => d.event_key === eventKey);
}

export async function jobView(world: World, jobId: string): Promise<JobViewBody> {
  const answer = await world.tenant.get<JobViewBody>(`/v1/jobs/${jobId}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

/**
 * Waits until the job has reached `state` and every accepted event of it is settled
 * (or dead), with at least `events` events — then returns the view.
 */
export async function settledJob(world: World, jobId: string, state: string, options: { events?: number; timeoutMs?: number } = {}): Promise<JobViewBody> {
  let view: JobViewBody | undefined;
  try {
    await waitUntil(async () => {
      view = await jobView(world, jobId);
      return view.state === state && view.events.length >= (options.events ?? 0) && view.events.every((e) => !UNSETTLED.includes(e.state));
    }, options.timeoutMs ?? 20_000);
  } catch (error) {
    throw new Error(`job ${jobId} did not settle as ${state}: ${JSON.stringify(view)}`, { cause: error });
  }
  return view!;
}

export async function walletOf(world: World): Promise<{ balance: string; reserved: string; available: string }> {
  const answer = await world.tenant.get(`/v1/wallets/${world.walletId}`);
  expect(answer.status).toBe(200);
  return answer.body;
}

/** Wallet entries of one job, oldest first, as [entry_type, amount]. */
export async function entriesOf(world: World, jobId: string): Promise<[string, string][]> {
  const answer = await world.tenant.get(`/v1/wallets/${world.walletId}/entries?limit=100`);
  expect(answer.status).toBe(200);
  return answer.body.data
    .filter((e: any) => e.job_id === jobId)
    .reverse()
    .map((e: any) => [e.entry_type, e.amount]);
}

/** A generic-provider webhook for the world's job; `id` is the event key. */
export function providerEvent(world: World, jobId: string, type: string, data: Record<string, unknown> = {}, timestamp = new Date()) {
  return {
    type,
    timestamp: timestamp.toISOString(),
    data: { job_id: jobId, tenant_id: world.tenantId, model: world.model, currency: 'USD', ...data },
  };
}

/** Delivers a signed event and expects it accepted (or, for a repeat, already accepted). */
export async function send(baseUrl: string, world: World, body: unknown, id: string, expected: 'accepted' | 'already_accepted' = 'accepted'): Promise<void> {
  const answer = await deliver(baseUrl, world.provider, signDelivery(body, { id }));
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.body).toEqual({ status: expected, event_key: id });
}

/** The settlements table itself, not the API's view of it. */
export async function settlementRows(db: Queryable, jobId: string): Promise<{ charge_type: string; version: number; amount: bigint }[]> {
  const result = await db.query<{ charge_type: string; version: number; amount: bigint }>(
    'select charge_type, version, amount from settlements where job_id = $1 order by created_at, id',
    [jobId],
  );
  return result.rows;
}

/** Ledger entries of one job, by settlement key and entry type. */
export async function entryRows(db: Queryable, jobId: string): Promise<{ settlement_key: string; entry_type: string; amount: bigint }[]> {
  const result = await db.query<{ settlement_key: string; entry_type: string; amount: bigint }>(
    'select settlement_key, entry_type, amount from ledger_entries where job_id = $1 order by id',
    [jobId],
  );
  return result.rows;
}

/**
 * Whole-database money invariants every test ends with: each currency sums to zero,
 * projections equal entries, and no hold is both captured and released.
 */
export async function expectLedgerConsistent(db: Queryable): Promise<void> {
  const sums = await db.query(
    `select currency, sum(credits_posted - debits_posted)::text as posted, sum(debits_pending - credits_pending)::text as pending
     from accounts group by currency having sum(credits_posted - debits_posted) <> 0 or sum(debits_pending - credits_pending) <> 0`,
  );
  expect(sums.rows, 'currency sums').toEqual([]);
  const drift = await db.query(
    `with moves as (
       select debit_account_id as account,
              case flags when 'pending' then amount when 'posted' then 0 else -amount end as dp,
              case when flags in ('posted', 'post_pending') then amount else 0 end as dpo, 0::bigint as cp, 0::bigint as cpo
       from ledger_entries
       union all
       select credit_account_id, 0, 0,
              case flags when 'pending' then amount when 'posted' then 0 else -amount end,
              case when flags in ('posted', 'post_pending') then amount else 0 end
       from ledger_entries)
     select a.id from accounts a
     left join (select account, sum(dp) dp, sum(dpo) dpo, sum(cp) cp, sum(cpo) cpo from moves group by account) s on s.account = a.id
     where (a.debits_pending, a.debits_posted, a.credits_pending, a.credits_posted)
           is distinct from (coalesce(s.dp, 0), coalesce(s.dpo, 0), coalesce(s.cp, 0), coalesce(s.cpo, 0))`,
  );
  expect(drift.rows, 'projection drift').toEqual([]);
  const both = await db.query(
    `select job_id from settlements where charge_type in ('capture', 'release') group by job_id having count(*) > 1`,
  );
  expect(both.rows, 'holds resolved twice').toEqual([]);
}
