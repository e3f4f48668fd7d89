import type pg from 'pg';

/** What the harness reads from the scenario's database while and after it runs. */

export interface Progress {
  terminal: number;
  openEvents: number;
}

export async function readProgress(pool: pg.Pool): Promise<Progress> {
  const { rows } = await pool.query<{ terminal: number; open_events: number }>(
    `/* bench */ select (select count(*)::int from jobs where state in ('captured', 'released')) as terminal,
            (select count(*)::int from webhook_events where state in ('pending', 'processing')) as open_events`,
  );
  return { terminal: rows[0]!.terminal, openEvents: rows[0]!.open_events };
}

export interface SettleTimes {
  /** seconds from the first delivery received to the last capture committed */
  settleSeconds: number;
  /** … to the last event processed (the duplicate re-emissions are no-ops but still work) */
  drainSeconds: number;
  /** the same two, from the first event processed (settlement alone, when it started after intake) */
  settleFromFirstProcessed: number;
  drainFromFirstProcessed: number;
  /** receipt → processed, of the events that applied a settlement (not a progress report's), ms */
  latencyMs: { p50: number; p95: number; p99: number; max: number };
  events: number;
}

/**
 * Times from the database's own clock (received_at, processed_at are now() of the
 * intake and settle transactions), so no clock of another process enters.
 */
export async function readSettleTimes(pool: pg.Pool): Promise<SettleTimes> {
  const { rows } = await pool.query<{
    settle: number; drain: number; settle_processing: number; drain_processing: number; p50: number; p95: number; p99: number; max: number; events: number;
  }>(
    `/* bench */ with bounds as (
       -- the first delivery: an accepted one is its event row (migration 0026), the others attempts
       select least(min(received_at), (select min(received_at) from delivery_attempts)) as first_delivery,
              max(processed_at) filter (where state = 'applied' and type not in ('job.started', 'job.progress')) as last_settlement,
              min(processed_at) as first_processed,
              max(processed_at) as last_event
       from webhook_events),
     latency as (
       -- a progress report is applied too (growing), but settles no money
       select extract(epoch from processed_at - received_at) * 1000 as ms
       from webhook_events where state = 'applied' and type not in ('job.started', 'job.progress'))
     select extract(epoch from b.last_settlement - b.first_delivery)::float8 as settle,
            extract(epoch from b.last_event - b.first_delivery)::float8 as drain,
            extract(epoch from b.last_settlement - b.first_processed)::float8 as settle_processing,
            extract(epoch from b.last_event - b.first_processed)::float8 as drain_processing,
            (select percentile_cont(0.5) within group (order by ms) from latency)::float8 as p50,
            (select percentile_cont(0.95) within group (order by ms) from latency)::float8 as p95,
            (select percentile_cont(0.99) within group (order by ms) from latency)::float8 as p99,
            (select max(ms) from latency)::float8 as max,
            (select count(*)::int from webhook_events) as events
     from bounds b`,
  );
  const r = rows[0]!;
  return {
    settleSeconds: r.settle,
    drainSeconds: r.drain,
    settleFromFirstProcessed: r.settle_processing,
    drainFromFirstProcessed: r.drain_processing,
    latencyMs: { p50: r.p50, p95: r.p95, p99: r.p99, max: r.max },
    events: r.events,
  };
}

/**
 * The worker's claim, copied from src/worker/queue.ts (claimEvents) with its
 * parameters inlined (limit 1, 60 s lease): EXPLAIN ANALYZE runs it for real, so it
 * runs inside a transaction that is rolled back — the claimed row is never taken.
 */
const CLAIM_QUERY = `with ready as (
       select e.provider, e.event_key
       from webhook_events e
       where e.state in ('pending', 'processing')
         and e.run_after <= now()
         and (e.lease_until is null or e.lease_until < now())
         and not exists (
           select 1 from webhook_events earlier
           where earlier.job_id = e.job_id and earlier.seq < e.seq and earlier.state in ('pending', 'processing'))
       order by e.run_after, e.seq
       limit 1
       for update of e skip locked
     )
     update webhook_events w
     set state = 'processing', lease_until = now() + make_interval(secs => 60), fencing_token = nextval('fencing_tokens'),
         attempts = w.attempts + 1
     from ready
     where w.provider = ready.provider and w.event_key = ready.event_key
     returning w.provider, w.event_key, w.tenant_id, w.job_id, w.seq, w.type, w.event, w.usage, w.attempts, w.fencing_token`;

export interface ClaimPlan {
  backlog: number;
  executionMs: number;
  plan: string;
}

export async function explainClaim(pool: pg.Pool): Promise<ClaimPlan | null> {
  const client = await pool.connect();
  try {
    const backlog = (await readProgress(pool)).openEvents;
    if (backlog === 0) return null;
    await client.query('begin');
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`/* bench */ explain (analyze, buffers) ${CLAIM_QUERY}`);
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    const executionMs = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN);
    return { backlog, executionMs, plan };
  } catch {
    return null;
  } finally {
    await client.query('rollback').catch(() => {});
    client.release();
  }
}
