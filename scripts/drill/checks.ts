import type pg from 'pg';
import type { PlannedJob } from './app.js';
import type { SteadyLoad } from './load.js';
import { expectedChargeMicros, formatMicros } from './money.js';
import { LIMITS, UNIT_PRICES } from './world.js';

/**
 * What was acknowledged, looked for on the new primary: every job, delivery and top-up
 * there, and each applied exactly once. Counted, not just asserted, so the summary can
 * say "lost 0, doubled 0" from numbers.
 */

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface LossAndDoubling {
  lost: { jobs: number; deliveries: number; credits: number; micros: bigint };
  doubled: { ledgerKeys: number; resolutions: number; credits: number; micros: bigint };
}

const SAMPLE = 3;

export function check(name: string, problems: string[], okDetail: string): Check {
  return {
    name,
    ok: problems.length === 0,
    detail: problems.length === 0 ? okDetail : `${problems.length} problem(s): ${problems.slice(0, SAMPLE).join('; ')}`,
  };
}

export async function lostAndDoubled(
  db: pg.Pool,
  provider: string,
  load: SteadyLoad,
): Promise<{ checks: Check[]; figures: LossAndDoubling }> {
  const jobIds = load.jobs.map((j) => j.id);
  const present = new Set(
    (await db.query<{ id: string }>('select id from jobs where id = any($1::uuid[])', [jobIds])).rows.map((r) => r.id),
  );

  const events = await db.query<{ event_key: string; state: string }>(
    'select event_key, state from webhook_events where provider = $1 and event_key = any($2::text[])',
    [provider, [...load.deliveries.keys()]],
  );
  const stateOf = new Map(events.rows.map((r) => [r.event_key, r.state]));
  const missingDeliveries = [...load.deliveries.keys()].filter((key) => !stateOf.has(key));
  const unsettled = [...stateOf]
    .filter(([, state]) => !['applied', 'no_effect', 'stale'].includes(state))
    .map(([key, state]) => `${key} ${state}`);

  const credits = await db.query<{ reference: string; n: number }>(
    "select reference, count(*)::int as n from ledger_entries where entry_type = 'credit' and reference = any($1::text[]) group by reference",
    [load.credits.map((c) => c.reference)],
  );
  const creditCount = new Map(credits.rows.map((r) => [r.reference, r.n]));
  const missingCredits = load.credits.filter((c) => !creditCount.has(c.reference)).map((c) => c.reference);
  const creditsTwice = credits.rows.filter((r) => r.n > 1).map((r) => `${r.reference} ×${r.n}`);

  const keysTwice = await db.query<{ key: string }>(
    "select settlement_key || ' ' || entry_type as key from ledger_entries group by settlement_key, entry_type having count(*) > 1",
  );
  const resolvedTwice = await db.query<{ job_id: string }>(
    "select job_id from settlements where charge_type in ('capture', 'release') group by job_id having count(*) > 1",
  );
  const billing = await billingOf(db, load.jobs);

  const checks = [
    check(
      'every acknowledged job submission is on the new primary',
      jobIds.filter((id) => !present.has(id)),
      `${jobIds.length} jobs`,
    ),
    check(
      'every acknowledged delivery is stored and settled (applied, no effect, or stale)',
      [...missingDeliveries.map((key) => `${key} missing`), ...unsettled],
      `${load.deliveries.size} deliveries`,
    ),
    check(
      'every acknowledged top-up entered exactly once',
      [...missingCredits.map((r) => `${r} missing`), ...creditsTwice],
      `${load.credits.length} top-ups`,
    ),
    check(
      'one ledger entry per (settlement key, entry type)',
      keysTwice.rows.map((r) => r.key),
      'no key twice',
    ),
    check(
      'every job resolved once: one capture or one release',
      resolvedTwice.rows.map((r) => r.job_id),
      'no job twice',
    ),
    check(
      'every job billed exactly as its scenario says',
      billing.wrong,
      `${load.jobs.length} jobs, ${formatMicros(billing.expected)} USD billed`,
    ),
  ];
  const figures: LossAndDoubling = {
    lost: {
      jobs: jobIds.length - present.size,
      deliveries: missingDeliveries.length,
      credits: missingCredits.length,
      micros: billing.lost,
    },
    doubled: {
      ledgerKeys: keysTwice.rows.length,
      resolutions: resolvedTwice.rows.length,
      credits: creditsTwice.length,
      micros: billing.duplicated,
    },
  };
  return { checks, figures };
}

/** What a job of its scenario must cost, with the drill's own arithmetic. */
export function expectedCharge(job: PlannedJob): bigint {
  return expectedChargeMicros(job.scenario.billedUsage, LIMITS, UNIT_PRICES);
}

/** Each job against its scenario: resolved once, in the right state, charged capture + adjustments = its price. */
async function billingOf(db: pg.Pool, jobs: readonly PlannedJob[]) {
  const { rows } = await db.query<{ id: string; state: string; charged: bigint; resolutions: number }>(
    `select j.id, j.state, coalesce(j.captured, 0) + j.adjusted as charged,
            (select count(*)::int from settlements s where s.job_id = j.id and s.charge_type in ('capture', 'release')) as resolutions
     from jobs j where j.id = any($1::uuid[])`,
    [jobs.map((j) => j.id)],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const result = { expected: 0n, lost: 0n, duplicated: 0n, wrong: [] as string[] };
  for (const job of jobs) {
    const expected = expectedCharge(job);
    const expectedState = job.scenario.billedUsage ? 'captured' : 'released';
    result.expected += expected;
    const row = byId.get(job.id);
    if (!row) {
      result.lost += expected;
      continue; // counted as a lost job already
    }
    if (row.charged < expected) result.lost += expected - row.charged;
    if (row.charged > expected) result.duplicated += row.charged - expected;
    if (row.charged !== expected || row.state !== expectedState || row.resolutions !== 1) {
      result.wrong.push(
        `${job.id} (${job.scenario.kind}): ${row.state}, charged ${formatMicros(row.charged)}, ${row.resolutions} resolution(s); expected ${expectedState}, ${formatMicros(expected)}`,
      );
    }
  }
  return result;
}
