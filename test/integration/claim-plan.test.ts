import { describe, expect, it } from 'vitest';
import { claimEvents, claimReadyStatement } from '../../src/queue/index.js';
import { freshDatabase } from '../support/database.js';
import { createWorld, submitWorldJob } from '../support/fixtures.js';

/**
 * The claim's cost must not grow with the backlog (bench/RESULTS.md, "The claim at a
 * backlog of 100,000"). What made it grow was a plan: one that sorted every ready event,
 * or reached the rows to update through a scan of the whole table. This test checks the
 * plan's shape, as PostgreSQL would run it both prepared (generic) and planned for the
 * call (custom), over a backlog of thousands of events: times are for the benchmark.
 */
const db = await freshDatabase({ max: 4 });

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

async function seedBacklog(jobs: number): Promise<void> {
  const world = await createWorld(db.pool, { funds: 10_000_000n });
  const template = await submitWorldJob(db.pool, world);
  // Copies of one job, each with two pending events (the second held back by the first),
  // in set-based SQL: the claim reads neither money nor holds.
  await db.pool.query(
    `with copies as (
       insert into jobs (id, tenant_id, wallet_id, provider, model, currency, price_version_id, limits, state, reserved, hold_expires_at, event_seq)
       select gen_random_uuid(), tenant_id, wallet_id, provider, model, currency, price_version_id, limits, state, reserved, hold_expires_at, 2
       from jobs, generate_series(1, $2) where id = $1
       returning id, tenant_id, provider
     )
     insert into webhook_events (provider, event_key, tenant_id, job_id, seq, type, payload_hash, payload, event, run_after)
     select c.provider, 'evt_' || c.id || '_' || s, c.tenant_id, c.id, s, 'job.completed', sha256('x'), 'x', '{"type": "job.completed"}',
            now() - interval '1 minute'
     from copies c, generate_series(1, 2) as s`,
    [template.id, jobs],
  );
  await db.pool.query('analyze jobs, webhook_events');
}

async function planOf(generic: boolean): Promise<PlanNode[]> {
  const client = await db.pool.connect();
  try {
    await client.query(`prepare claim_plan(float8) as ${claimReadyStatement(32)}`);
    await client.query(`set plan_cache_mode = ${generic ? 'force_generic_plan' : 'force_custom_plan'}`);
    const result = await client.query('explain (format json) execute claim_plan(60)');
    const [doc] = (result.rows[0] as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'];
    return nodesOf(doc.Plan);
  } finally {
    await client.query('deallocate all').catch(() => {});
    client.release(true);
  }
}

describe('the claim at a backlog', () => {
  it('walks the ready index and stops at its limit, and updates its rows by primary key, in a generic plan and in a custom one', async () => {
    await seedBacklog(4_000);
    for (const generic of [true, false]) {
      const nodes = await planOf(generic);
      const label = generic ? 'generic plan' : 'custom plan';
      const onEvents = nodes.filter((n) => n['Relation Name'] === 'webhook_events' && n['Node Type'] !== 'ModifyTable');
      expect(onEvents.length, label).toBeGreaterThan(0);
      // No sequential or bitmap scan of the events: each would read the whole backlog.
      expect(onEvents.filter((n) => !n['Node Type'].startsWith('Index')).map((n) => n['Node Type']), label).toEqual([]);
      expect(onEvents.map((n) => n['Index Name']), label).toContain('webhook_events_claim_order_idx');
      // One tenant's batch walks webhook_events_tenant_claim_idx (migrations/0022) or, when
      // the planner sees one tenant holding the backlog (as here), the claim order index
      // with the tenant as a filter: either stops at the limit, with no sort (below).
      expect(onEvents.map((n) => n['Index Name']), label).toContain('webhook_events_pkey');
      // The limit sits over the ordered walk: no node sorts every ready event first.
      expect(nodes.some((n) => n['Node Type'] === 'Limit'), label).toBe(true);
      expect(nodes.filter((n) => n['Node Type'] === 'Sort' || n['Node Type'] === 'Incremental Sort').length, `${label}: a sort`).toBe(0);
    }
  });

  it('takes the first event of each job and leaves the second behind it', async () => {
    const claimed = await claimEvents(db.pool, 32, 60);
    expect(claimed).toHaveLength(32);
    expect(new Set(claimed.map((c) => c.job_id)).size).toBe(32);
    expect(claimed.every((c) => c.seq === 1n)).toBe(true);
  });
});
