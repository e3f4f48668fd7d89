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
 * Exactly once means one capture per job for exactly its price, nothing else.
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

  // Every delivery answered 200: 2N distinct events accepted, N duplicates absorbed.
  {
    const problems: string[] = [];
    if ((load.statuses['200'] ?? 0) !== 3 * n) problems.push(`HTTP statuses ${JSON.stringify(load.statuses)}, expected ${3 * n}× 200`);
    if ((load.answers['accepted'] ?? 0) !== 2 * n || (load.answers['already_accepted'] ?? 0) !== n) {
      problems.push(`answers ${JSON.stringify(load.answers)}, expected ${2 * n} accepted and ${n} already_accepted`);
    }
    problems.push(...load.unexpected);
    checks.push(check('every delivery accepted (200), duplicates absorbed', problems, `${3 * n} × 200: ${2 * n} accepted, ${n} already_accepted`));
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

  // Jobs and holds: captured the price, released the rest of the hold.
  {
    const { rows } = await pool.query<{ id: string; state: string; captured: bigint | null; released: bigint | null; adjusted: bigint; posted: bigint | null; voided: bigint | null }>(
      `/* bench */ select j.id, j.state, j.captured, j.released, j.adjusted, h.posted, h.voided from jobs j left join holds h on h.job_id = j.id`,
    );
    const problems: string[] = [];
    for (const r of rows) {
      const job = expectedOf.get(r.id);
      if (!job) {
        problems.push(`unexpected job ${r.id}`);
        continue;
      }
      const rest = job.reserved - job.expected;
      if (r.state !== 'captured' || r.captured !== job.expected || r.released !== rest || r.adjusted !== 0n || r.posted !== job.expected || r.voided !== rest) {
        problems.push(`job ${r.id}: ${r.state}, captured ${r.captured}, released ${r.released}, hold posted ${r.posted} voided ${r.voided} (expected ${job.expected} / ${rest})`);
      }
    }
    if (rows.length !== n) problems.push(`${rows.length} jobs, expected ${n}`);
    checks.push(check('every job captured, its hold posted for the price and voided for the rest', problems, `${rows.length} jobs`));
  }

  // Events: per job one applied, one no-op (the re-emission); none left or dead.
  {
    const { rows } = await pool.query<{ job_id: string; applied: number; no_effect: number; other: number }>(
      `/* bench */ select job_id, count(*) filter (where state = 'applied')::int as applied,
              count(*) filter (where state = 'no_effect')::int as no_effect,
              count(*) filter (where state not in ('applied', 'no_effect'))::int as other
       from webhook_events group by job_id`,
    );
    const problems = rows.filter((r) => r.applied !== 1 || r.no_effect !== 1 || r.other !== 0).map((r) => `job ${r.job_id}: ${r.applied} applied, ${r.no_effect} no_effect, ${r.other} other`);
    if (rows.length !== n) problems.push(`events for ${rows.length} jobs, expected ${n}`);
    checks.push(check('per job: one event applied, its re-emission a no-op, nothing pending or dead', problems, `${2 * n} events`));
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
