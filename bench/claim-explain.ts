import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type pg from 'pg';
import { ROOT } from './app.js';
import { benchPool, recreateDatabase } from './database.js';
import { exitReason, runTally, waitFor } from './processes.js';
import { note } from './progress.js';

/**
 * Issue 16.5: the claim's cost must not grow with the backlog. For each backlog size, a
 * fresh migrated database is seeded set-based with that many unsettled events, shaped
 * like a real queue, then Tally's own claim statement (src/queue/claim.ts, built into dist/queue/) is
 * run under EXPLAIN (ANALYZE, BUFFERS) — as a custom plan and as the generic plan a
 * prepared statement (node-pg's named `claim_events`) switches to after five runs — inside
 * a transaction that is rolled back, so every run sees the same queue. At the largest
 * backlog, the worker's loop: consecutive claims, each batch marked settled at once.
 *
 * The seed, per 20 jobs of two events each (26 unsettled events):
 *   14  seq 1 applied, seq 2 pending and due             → seq 2 claimable
 *    3  both pending and due                             → seq 1 claimable, seq 2 held back
 *    1  seq 1 pending in backoff (10 min), seq 2 due     → neither claimable (seq 2 held back)
 *    1  seq 1 applied, seq 2 pending in backoff (10 min) → not yet due
 *    1  seq 1 processing, lease ran out; seq 2 pending   → seq 1 taken over, seq 2 held back
 * and the oldest IN_FLIGHT jobs' seq 1 is processing under a running lease (a live
 * worker's batches, at the head of the queue), their seq 2 held back. Receipt times
 * spread over the last hour, in job order with jitter; the shapes mixed evenly through it.
 */

export interface ClaimExplainConfig {
  adminUrl: string;
  workDir: string;
  /** the largest backlog; measured at 1/100, 1/10 and all of it */
  backlog: number;
  batch: number;
  claims: number;
}

export interface ClaimPlanFigures {
  /** PostgreSQL's Execution Time, ms (median of the runs) */
  executionMs: number;
  planningMs: number;
  sharedHit: number;
  sharedRead: number;
  rowsClaimed: number;
  plan: string[];
}

export interface ClaimBacklogResult {
  backlog: number;
  events: number;
  seedSeconds: number;
  custom: ClaimPlanFigures;
  generic: ClaimPlanFigures;
}

export interface ClaimLoopResult {
  claims: number;
  batch: number;
  claimed: number;
  /** client-side, per claim statement (round trip included) */
  claimMs: { mean: number; p50: number; p99: number; max: number };
  /** the claim's EXPLAIN after the loop: the dead versions it left behind included */
  afterCustom: ClaimPlanFigures;
  afterGeneric: ClaimPlanFigures;
}

export interface ClaimExplainResult {
  batch: number;
  backlogs: ClaimBacklogResult[];
  loop: ClaimLoopResult;
}

/** What bench uses of dist/queue/claim.js. */
interface ClaimModule {
  claimReadyStatement(limit: number): string;
  claimEvents(db: pg.Pool, limit: number, leaseSeconds: number): Promise<{ provider: string; event_key: string; fencing_token: bigint }[]>;
}

const LEASE_SECONDS = 60;
const RUNS = 5;
const TENANTS = 100;
/** claims held by live workers: a few workers' batches, however deep the backlog */
const IN_FLIGHT = 128;

async function loadClaim(): Promise<ClaimModule> {
  return (await import(pathToFileURL(join(ROOT, 'dist', 'queue', 'claim.js')).href)) as ClaimModule;
}

async function migrated(config: ClaimExplainConfig): Promise<string> {
  const url = await recreateDatabase(config.adminUrl, 'tally_bench_claim');
  const migrate = runTally('migrate', ['migrate'], { DATABASE_URL: url, LOG_LEVEL: 'warn' }, join(config.workDir, 'claim-explain-migrate.log'));
  await waitFor('tally migrate', async () => migrate.child.exitCode !== null || migrate.child.signalCode !== null, 120_000);
  if (migrate.child.exitCode !== 0) throw new Error(`tally migrate failed: ${exitReason(migrate) ?? migrate.tail()}`);
  await migrate.stop();
  return url;
}

/** Jobs 1..jobs with two events each, set-based; returns the number of unsettled events. */
async function seed(pool: pg.Pool, jobs: number): Promise<number> {
  await pool.query(`insert into providers (name, kind, secrets) values ('bench', 'generic', '{whsec_YmVuY2g=}')`);
  await pool.query(
    `insert into price_versions (id, model, currency, version, unit_prices)
     values (md5('claim:price')::uuid, 'bench-model', 'USD', 1, '{"input_tokens": "1.000000"}')`,
  );
  await pool.query(
    `insert into tenants (id, name) select md5('claim:tenant:' || t)::uuid, 'claim bench ' || t from generate_series(1, $1) t`,
    [TENANTS],
  );
  await pool.query(
    `insert into accounts (id, tenant_id, currency, kind)
     select md5('claim:' || k || ':' || t)::uuid, md5('claim:tenant:' || t)::uuid, 'USD', k
     from generate_series(1, $1) t, unnest(array['wallet', 'funding', 'revenue']) k`,
    [TENANTS],
  );
  await pool.query(
    `insert into jobs (id, tenant_id, wallet_id, provider, provider_job_ref, model, currency, price_version_id, limits, state, reserved, event_seq, hold_expires_at, created_at)
     select md5('claim:job:' || j)::uuid, md5('claim:tenant:' || (j % $2 + 1))::uuid, md5('claim:wallet:' || (j % $2 + 1))::uuid,
            'bench', 'job-' || j, 'bench-model', 'USD', md5('claim:price')::uuid, '{"max_input_tokens": 1000}', 'running', 1000, 2,
            now() + interval '1 day', now() - interval '1 hour'
     from generate_series(1, $1) j`,
    [jobs, TENANTS],
  );
  // (j % 20) picks the shape (see the header); received_at walks the last hour in job order.
  await pool.query(
    `with shaped as (
       select j, s, j % 20 as k,
              now() - interval '1 hour' + (j + random() * 5) * (interval '3590 seconds' / $1) + (s - 1) * interval '1 millisecond' as received
       from generate_series(1, $1) j, generate_series(1, 2) s
     ), states as (
       select *,
              case when s = 1 and j <= $3 then 'processing'
                   when s = 1 and (k < 14 or k = 18) then 'applied'
                   when s = 1 and k = 19 then 'processing'
                   else 'pending' end as state,
              (s = 1 and k = 17 and j > $3) or (s = 2 and k = 18) as backoff
       from shaped
     )
     insert into webhook_events (provider, event_key, tenant_id, job_id, seq, type, payload_hash, payload, event,
                                 state, reason, attempts, run_after, lease_until, fencing_token, received_at, processed_at)
     select 'bench', 'job-' || j || ':' || s, md5('claim:tenant:' || (j % $2 + 1))::uuid, md5('claim:job:' || j)::uuid, s,
            case s when 1 then 'job.running' else 'job.completed' end,
            sha256(convert_to('job-' || j || ':' || s, 'UTF8')), convert_to('{"id":"job-' || j || '"}', 'UTF8'),
            jsonb_build_object('type', case s when 1 then 'job.running' else 'job.completed' end),
            state,
            case when state = 'applied' then 'applied' end,
            case when state = 'processing' or backoff then 1 else 0 end,
            case when backoff then now() + interval '10 minutes' else received end,
            case when state = 'processing' then (case when j <= $3 then now() + interval '1 minute' else now() - interval '1 minute' end) end,
            case when state = 'processing' then nextval('fencing_tokens') else 0 end,
            received,
            case when state = 'applied' then received + interval '50 milliseconds' end
     from states`,
    [jobs, TENANTS, IN_FLIGHT],
  );
  await pool.query('vacuum analyze webhook_events');
  await pool.query('analyze jobs');
  const { rows } = await pool.query<{ n: string }>(`select count(*)::text as n from webhook_events where state in ('pending', 'processing')`);
  return Number(rows[0]!.n);
}

interface ExplainNode {
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  'Actual Rows': number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the claim, RUNS times, each in a transaction rolled back:
 * the claimed rows stay as they were. `generic`: the plan a prepared statement settles on.
 */
async function explainClaim(pool: pg.Pool, sql: string, batch: number, generic: boolean): Promise<ClaimPlanFigures> {
  const client = await pool.connect();
  try {
    await client.query(`prepare bench_claim(float8) as ${sql}`);
    await client.query(`set plan_cache_mode = ${generic ? 'force_generic_plan' : 'force_custom_plan'}`);
    const explain = (format: 'json' | 'text') =>
      client.query(`explain (analyze, buffers, format ${format}) execute bench_claim(${LEASE_SECONDS})`);
    const runs: { executionMs: number; planningMs: number; top: ExplainNode }[] = [];
    for (let i = 0; i <= RUNS; i++) {
      await client.query('begin');
      const result = await explain('json');
      await client.query('rollback');
      const doc = (result.rows[0] as Record<string, unknown>)['QUERY PLAN'] as [{ Plan: ExplainNode; 'Execution Time': number; 'Planning Time': number }];
      // the first run warms the cache and is not counted
      if (i > 0) runs.push({ executionMs: doc[0]['Execution Time'], planningMs: doc[0]['Planning Time'], top: doc[0].Plan });
    }
    await client.query('begin');
    const text = await explain('text');
    await client.query('rollback');
    const middle = runs.find((r) => r.executionMs === median(runs.map((x) => x.executionMs)))!;
    return {
      executionMs: middle.executionMs,
      planningMs: middle.planningMs,
      sharedHit: middle.top['Shared Hit Blocks'],
      sharedRead: middle.top['Shared Read Blocks'],
      rowsClaimed: middle.top['Actual Rows'],
      plan: text.rows.map((r: Record<string, string>) => r['QUERY PLAN']!),
    };
  } finally {
    await client.query('deallocate bench_claim').catch(() => {});
    await client.query('reset plan_cache_mode').catch(() => {});
    client.release();
  }
}

/** The worker's loop at a deep backlog: claim a batch, mark it settled in one statement, again. */
async function claimLoop(pool: pg.Pool, claim: ClaimModule, config: ClaimExplainConfig): Promise<ClaimLoopResult> {
  const times: number[] = [];
  let claimed = 0;
  for (let i = 0; i < config.claims; i++) {
    const began = performance.now();
    const rows = await claim.claimEvents(pool, config.batch, LEASE_SECONDS);
    times.push(performance.now() - began);
    claimed += rows.length;
    await pool.query(
      `update webhook_events w
       set state = 'applied', reason = 'applied', processed_at = now(), lease_until = null
       from unnest($1::text[], $2::text[], $3::bigint[]) c(provider, event_key, fencing_token)
       where w.provider = c.provider and w.event_key = c.event_key and w.fencing_token = c.fencing_token and w.state = 'processing'`,
      [rows.map((r) => r.provider), rows.map((r) => r.event_key), rows.map((r) => r.fencing_token.toString())],
    );
  }
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  return {
    claims: config.claims,
    batch: config.batch,
    claimed,
    claimMs: { mean: times.reduce((a, b) => a + b, 0) / times.length, p50: at(50), p99: at(99), max: sorted.at(-1)! },
    afterCustom: await explainClaim(pool, claim.claimReadyStatement(config.batch), config.batch, false),
    afterGeneric: await explainClaim(pool, claim.claimReadyStatement(config.batch), config.batch, true),
  };
}

export async function measureClaimExplain(config: ClaimExplainConfig): Promise<ClaimExplainResult> {
  const claim = await loadClaim();
  const sizes = [...new Set([Math.round(config.backlog / 100), Math.round(config.backlog / 10), config.backlog])].filter((n) => n >= 25);
  const backlogs: ClaimBacklogResult[] = [];
  let loop: ClaimLoopResult | null = null;
  for (const size of sizes) {
    const url = await migrated(config);
    const pool = benchPool(url, 2);
    try {
      const jobs = Math.round((size * 20) / 26);
      note(`[claim] seeding ${jobs.toLocaleString('en-US')} jobs, ${(jobs * 2).toLocaleString('en-US')} events (a backlog of about ${size.toLocaleString('en-US')})…`);
      const started = performance.now();
      const unsettled = await seed(pool, jobs);
      const seedSeconds = (performance.now() - started) / 1000;
      const custom = await explainClaim(pool, claim.claimReadyStatement(config.batch), config.batch, false);
      const generic = await explainClaim(pool, claim.claimReadyStatement(config.batch), config.batch, true);
      backlogs.push({ backlog: unsettled, events: jobs * 2, seedSeconds, custom, generic });
      note(`[claim] backlog ${unsettled.toLocaleString('en-US')}: custom ${custom.executionMs.toFixed(3)} ms, generic ${generic.executionMs.toFixed(3)} ms`);
      if (size === config.backlog) {
        note(`[claim] ${config.claims} claims of ${config.batch}, each batch marked settled…`);
        loop = await claimLoop(pool, claim, config);
      }
    } finally {
      await pool.end();
    }
  }
  return { batch: config.batch, backlogs, loop: loop! };
}

function figures(f: ClaimPlanFigures): string {
  return `${f.executionMs.toFixed(3).padStart(8)} ms  hit ${String(f.sharedHit).padStart(6)}  read ${String(f.sharedRead).padStart(5)}  rows ${f.rowsClaimed}`;
}

export function formatClaimExplain(r: ClaimExplainResult): string {
  const last = r.backlogs.at(-1)!;
  return [
    `The claim (${r.batch} events) under EXPLAIN (ANALYZE, BUFFERS), median of ${RUNS} runs, each rolled back:`,
    ...r.backlogs.flatMap((b) => [
      `  backlog ${b.backlog.toLocaleString('en-US').padStart(8)} (${b.events.toLocaleString('en-US')} events, seeded in ${b.seedSeconds.toFixed(1)} s)`,
      `    custom plan   ${figures(b.custom)}`,
      `    generic plan  ${figures(b.generic)}`,
    ]),
    `  ${r.loop.claims} consecutive claims of ${r.loop.batch} at ${last.backlog.toLocaleString('en-US')}, each batch marked settled: ${r.loop.claimed} claimed;` +
      ` per claim mean ${r.loop.claimMs.mean.toFixed(2)} ms, p50 ${r.loop.claimMs.p50.toFixed(2)} ms, p99 ${r.loop.claimMs.p99.toFixed(2)} ms, max ${r.loop.claimMs.max.toFixed(2)} ms (client side)`,
    `    after them, custom plan   ${figures(r.loop.afterCustom)}`,
    `    after them, generic plan  ${figures(r.loop.afterGeneric)}`,
    `  The custom plan at ${last.backlog.toLocaleString('en-US')}:`,
    ...last.custom.plan.map((line) => `    ${line}`),
    `  The generic plan at ${last.backlog.toLocaleString('en-US')}:`,
    ...last.generic.plan.map((line) => `    ${line}`),
  ].join('\n');
}
