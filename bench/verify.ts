import type pg from 'pg';
import { TALLY_BIN } from './app.js';
import { PROJECTION_DRIFT_SQL } from './projection-drift.js';
import { reconcileCheck } from './reconcile-check.js';
import type { LoadReport } from './load-protocol.js';
import { formatMicros, parseMicros } from './money.js';
import { apiCall, type World } from './world.js';

/**
 * The money after the run, checked against what the harness computed on its own
 * (CONTRACT.md's price rule, bench/money.ts): a fast wrong answer fails the benchmark.
 * Exactly once means one capture per job for exactly its price, nothing else; a job
 * whose hold grows (the growing scenario) has exactly the extensions the harness worked
 * out, and is captured from the grown hold.
 */

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface Verification {
  ok: boolean;
  checks: Check[];
}

const SAMPLE = 3;

function check(name: string, problems: string[], okDetail: string): Check {
  return { name, ok: problems.length === 0, detail: problems.length === 0 ? okDetail : `${problems.length} problem(s): ${problems.slice(0, SAMPLE).join('; ')}` };
}

export async function verifyMoney(pool: pg.Pool, databaseUrl: string, world: World, load: LoadReport): Promise<Verification> {
  const n = world.jobs.length;
  const checks: Check[] = [];
  const expectedOf = new Map(world.jobs.map((j) => [j.id, j]));

  // Every delivery answered 200: 2N distinct completions and every progress report
  // accepted, N duplicates absorbed.
  {
    const reports = world.jobs.reduce((sum, j) => sum + j.progress.length, 0);
    const sent = 3 * n + reports;
    const accepted = 2 * n + reports;
    const problems: string[] = [];
    if ((load.statuses['200'] ?? 0) !== sent) problems.push(`HTTP statuses ${JSON.stringify(load.statuses)}, expected ${sent}× 200`);
    if ((load.answers['accepted'] ?? 0) !== accepted || (load.answers['already_accepted'] ?? 0) !== n) {
      problems.push(`answers ${JSON.stringify(load.answers)}, expected ${accepted} accepted and ${n} already_accepted`);
    }
    problems.push(...load.unexpected);
    checks.push(
      check('every delivery accepted (200), duplicates absorbed', problems, `${sent} × 200: ${accepted} accepted, ${n} already_accepted`),
    );
  }

  // One settlement per job: a capture, for exactly the job's price.
  {
    const { rows } = await pool.query<{ job_id: string; charge_type: string; amount: bigint; n: number }>(
      `/* bench */ select job_id, min(charge_type) as charge_type, sum(amount)::bigint as amount, count(*)::int as n from settlements group by job_id`,
    );
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const r of rows) {
      seen.add(r.job_id);
      const job = expectedOf.get(r.job_id);
      if (!job) problems.push(`settlement for unknown job ${r.job_id}`);
      else if (r.n !== 1 || r.charge_type !== 'capture' || r.amount !== job.expected) {
        problems.push(`job ${r.job_id}: ${r.n} settlement(s), ${r.charge_type}, ${formatMicros(r.amount)} (expected 1 capture of ${formatMicros(job.expected)})`);
      }
    }
    for (const job of world.jobs) if (!seen.has(job.id)) problems.push(`job ${job.id} has no settlement`);
    checks.push(check('exactly one capture settlement per job, at its price', problems, `${rows.length} captures`));
  }

  // Jobs and holds: reserved the (grown) hold, captured the price, released the rest of the hold.
  {
    const { rows } = await pool.query<{
      id: string; state: string; reserved: bigint; captured: bigint | null; released: bigint | null; adjusted: bigint;
      amount: bigint | null; owed: bigint | null; posted: bigint | null; voided: bigint | null;
    }>(
      `/* bench */ select j.id, j.state, j.reserved, j.captured, j.released, j.adjusted, h.amount, h.owed, h.posted, h.voided
       from jobs j left join holds h on h.job_id = j.id`,
    );
    const problems: string[] = [];
    for (const r of rows) {
      const job = expectedOf.get(r.id);
      if (!job) {
        problems.push(`unexpected job ${r.id}`);
        continue;
      }
      const rest = job.reserved - job.expected;
      if (
        r.state !== 'captured' || r.reserved !== job.reserved || r.amount !== job.reserved || r.owed !== 0n ||
        r.captured !== job.expected || r.released !== rest || r.adjusted !== 0n || r.posted !== job.expected || r.voided !== rest
      ) {
        problems.push(
          `job ${r.id}: ${r.state}, reserved ${r.reserved} (hold ${r.amount}, owed ${r.owed}), captured ${r.captured}, released ${r.released}, hold posted ${r.posted} voided ${r.voided} (expected ${job.reserved}: ${job.expected} / ${rest})`,
        );
      }
    }
    if (rows.length !== n) problems.push(`${rows.length} jobs, expected ${n}`);
    const grown = world.jobs.filter((j) => j.extensions.length > 0).length;
    checks.push(
      check(
        grown > 0
          ? 'every job captured from its grown hold: reserved = first hold + extension, posted for the price, voided for the rest'
          : 'every job captured, its hold posted for the price and voided for the rest',
        problems,
        `${rows.length} jobs`,
      ),
    );
  }

  // Extensions: exactly those the harness worked out (none for a plain job), numbered 1, 2, …,
  // automatic, each for the price difference of the limits it grew, held by the grants.
  {
    const { rows } = await pool.query<{ job_id: string; version: number; amount: bigint; limits: Record<string, number>; source: string; debt: boolean; limits_now: Record<string, number> }>(
      `/* bench */ select x.job_id, x.version, x.amount, x.limits, x.source,
              exists (select 1 from jsonb_array_elements(x.allocation) a where a->>'grant_id' is null) as debt,
              j.limits as limits_now
       from job_extensions x join jobs j on j.id = x.job_id order by x.job_id, x.version`,
    );
    const byJob = new Map<string, typeof rows>();
    for (const r of rows) byJob.set(r.job_id, [...(byJob.get(r.job_id) ?? []), r]);
    const sameUsage = (a: Record<string, number>, b: Record<string, number>) =>
      Object.keys({ ...a, ...b }).every((k) => (a[k] ?? 0) === (b[k] ?? 0));
    const problems: string[] = [];
    for (const r of rows) if (!expectedOf.has(r.job_id)) problems.push(`extension ${r.version} of unknown job ${r.job_id}`);
    for (const job of world.jobs) {
      const found = byJob.get(job.id) ?? [];
      const shown = found.map((x) => `v${x.version} ${formatMicros(x.amount)} ${x.source} ${JSON.stringify(x.limits)}${x.debt ? ' (debt)' : ''}`);
      const ok =
        found.length === job.extensions.length &&
        found.every(
          (x, i) =>
            x.version === i + 1 &&
            x.amount === job.extensions[i] &&
            x.source === 'auto' &&
            !x.debt &&
            // one extension at most here: it grows the job to its final limits
            sameUsage(x.limits, job.limits) &&
            sameUsage(x.limits_now, job.limits),
        );
      if (!ok) {
        problems.push(
          `job ${job.id}: ${found.length} extension(s) [${shown.join('; ')}] (expected ${job.extensions.map((a, i) => `v${i + 1} ${formatMicros(a)} auto ${JSON.stringify(job.limits)}`).join('; ') || 'none'})`,
        );
      }
    }
    const expected = world.jobs.reduce((sum, j) => sum + j.extensions.length, 0);
    const amounts = [...new Set(world.jobs.flatMap((j) => j.extensions.map(formatMicros)))];
    checks.push(
      check(
        expected > 0 ? 'per job exactly its extensions (version 1, automatic, the price difference, held by grants)' : 'no hold extended',
        problems,
        expected > 0 ? `${rows.length} extensions, ${amounts.join(', ')} each` : '0 extensions',
      ),
    );
  }

  // Events: per job one completion applied, one no-op (the re-emission); each progress report
  // applied before the completion settled, a no-op after it; none left or dead.
  {
    const { rows } = await pool.query<{
      job_id: string; applied: number; no_effect: number; reports: number; reports_applied: number; reports_late: number; other: number;
    }>(
      `/* bench */ with c as (
         select job_id, min(seq) filter (where state = 'applied') as captured_at_seq
         from webhook_events where type = 'job.completed' group by job_id)
       select e.job_id,
              count(*) filter (where e.type = 'job.completed' and e.state = 'applied')::int as applied,
              count(*) filter (where e.type = 'job.completed' and e.state = 'no_effect')::int as no_effect,
              count(*) filter (where e.type = 'job.progress')::int as reports,
              count(*) filter (where e.type = 'job.progress' and e.state = 'applied' and e.seq < c.captured_at_seq)::int as reports_applied,
              count(*) filter (where e.type = 'job.progress' and e.state = 'no_effect' and e.seq > c.captured_at_seq)::int as reports_late,
              count(*) filter (where e.type not in ('job.completed', 'job.progress') or e.state not in ('applied', 'no_effect'))::int as other
       from webhook_events e left join c on c.job_id = e.job_id group by e.job_id`,
    );
    const problems = rows
      .filter((r) => {
        const job = expectedOf.get(r.job_id);
        const reports = job?.progress.length ?? 0;
        return r.applied !== 1 || r.no_effect !== 1 || r.reports !== reports || r.reports_applied + r.reports_late !== reports || r.other !== 0;
      })
      .map(
        (r) =>
          `job ${r.job_id}: completion ${r.applied} applied, ${r.no_effect} no_effect; ${r.reports} progress (${r.reports_applied} applied before it, ${r.reports_late} no-op after); ${r.other} other`,
      );
    if (rows.length !== n) problems.push(`events for ${rows.length} jobs, expected ${n}`);
    const reports = rows.reduce((sum, r) => sum + r.reports, 0);
    const extendedByReport = rows.filter((r) => r.reports_applied > 0).length;
    checks.push(
      reports > 0
        ? check(
            'per job: completion applied once, its re-emission a no-op; each progress report applied before it or a no-op after; nothing pending or dead',
            problems,
            `${2 * n + reports} events; ${extendedByReport} job(s) grew on a progress report, ${n - extendedByReport} on the completion`,
          )
        : check('per job: one event applied, its re-emission a no-op, nothing pending or dead', problems, `${2 * n} events`),
    );
  }

  // Wallets, through the API as each tenant sees them, and revenue accounts.
  {
    const charged = new Map<string, bigint>();
    for (const job of world.jobs) charged.set(job.walletId, (charged.get(job.walletId) ?? 0n) + job.expected);
    const problems: string[] = [];
    for (const tenant of world.tenants) {
      const wallet = await apiCall(world.baseUrl, tenant.apiKey)<{ balance: string; reserved: string; available: string }>('GET', `/v1/wallets/${tenant.walletId}`);
      const expected = world.credit - (charged.get(tenant.walletId) ?? 0n);
      if (parseMicros(wallet.balance) !== expected || parseMicros(wallet.reserved) !== 0n || parseMicros(wallet.available) !== expected) {
        problems.push(`wallet ${tenant.walletId}: balance ${wallet.balance}, reserved ${wallet.reserved}, available ${wallet.available} (expected ${formatMicros(expected)}, 0)`);
      }
    }
    const revenue = await pool.query<{ tenant_id: string; balance: bigint; pending: bigint }>(
      `/* bench */ select tenant_id, credits_posted - debits_posted as balance, credits_pending - debits_pending as pending from accounts where kind = 'revenue'`,
    );
    const walletOf = new Map(world.tenants.map((t) => [t.id, t.walletId]));
    for (const r of revenue.rows) {
      const expected = charged.get(walletOf.get(r.tenant_id) ?? '') ?? 0n;
      if (r.balance !== expected || r.pending !== 0n) problems.push(`revenue of tenant ${r.tenant_id}: ${formatMicros(r.balance)} (+${r.pending} pending), expected ${formatMicros(expected)}`);
    }
    const total = [...charged.values()].reduce((a, b) => a + b, 0n);
    checks.push(check('wallet balance = credits − Σ prices, to the micro; revenue = Σ prices', problems, `${world.tenants.length} wallet(s), ${formatMicros(total)} USD charged in all`));
  }

  // The projection equals the entries, recomputed from ledger_entries with the flags' meaning.
  {
    const { rows } = await pool.query<{ id: string }>(`/* bench */ ${PROJECTION_DRIFT_SQL}`);
    checks.push(check('account projections = sums of ledger entries', rows.map((r) => `account ${r.id} drifted`), 'every account'));
  }

  // Double entry: all balances of a currency sum to zero, posted and pending.
  {
    const { rows } = await pool.query<{ currency: string; posted: bigint; pending: bigint }>(
      `/* bench */ select currency, sum(credits_posted - debits_posted)::bigint as posted, sum(credits_pending - debits_pending)::bigint as pending
       from accounts group by currency`,
    );
    const problems = rows.filter((r) => r.posted !== 0n || r.pending !== 0n).map((r) => `${r.currency}: posted sum ${r.posted}, pending sum ${r.pending}`);
    checks.push(check('sum of all balances is zero', problems, rows.map((r) => r.currency).join(', ')));
  }

  // And Tally's own reconciliation agrees.
  checks.push(await reconcileCheck(TALLY_BIN, databaseUrl));

  return { ok: checks.every((c) => c.ok), checks };
}
