import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { TALLY_BIN } from './app.js';
import { benchPool, recreateDatabase } from './database.js';
import { exitReason, freePort, runTally, waitFor } from './processes.js';
import { bars, note } from './progress.js';
import { CURRENCY, MODEL, buildWorld } from './world.js';

/**
 * A full `tally reconcile` over a ledger of a million entries (issue 16: under 10 s).
 *
 * The ledger is made the way Tally makes it, then multiplied: `tenants` wallets are
 * opened, topped up and given one job each over the API, and each job's completion is
 * delivered signed and settled by the worker — the real path writes every row of a
 * settled job (job, hold, settlement, the reserve / capture / remainder entries, the
 * event, the delivery, the spend counters, the projections and the running balances).
 * Each such job is then the template of set-based copies (generate_series, one INSERT …
 * SELECT per table and chunk) that copy every column of its rows, with new ids and keys
 * and each copy's place in its wallet's order: the entry's sequence number, its balance
 * and reserved amount after it (closed form: each copy charges what its template
 * charged) and an instant a microsecond after the one before. The accounts' projections,
 * the wallets' heads and the spend counters are moved as the write path moves them, by
 * the copies' amounts. The result is a ledger reconciliation must call clean; it is
 * checked to be at every size, by `tally reconcile` itself (spawned as an operator runs
 * it), whose time is the measurement.
 */

export interface ReconcileScaleConfig {
  adminUrl: string;
  workDir: string;
  logLevel: string;
  /** the largest ledger; smaller sizes measured on the way there (a tenth, three tenths) */
  entries: number;
  tenants: number;
  seed: number;
  /** also break one wallet's projection at the largest size and show the run finds it */
  inconsistency: boolean;
}

export interface ReconcileRunTiming {
  entries: number;
  seedSeconds: number;
  /** wall clock of `tally reconcile`, process start to exit (Node start, migrate check, every check, the stored run) */
  seconds: number;
  exitCode: number | null;
  clean: boolean;
  /** per check, from the run's progress lines on stderr */
  checks: Record<string, number>;
}

export interface ReconcileScaleResult {
  tenants: number;
  runs: ReconcileRunTiming[];
  /** the run with one wallet's projection off by a micro: exit 1, and that exception */
  inconsistency?: { seconds: number; exitCode: number | null; found: boolean; output: string };
  /** seconds per million entries between the smallest and the largest size (marginal cost) */
  secondsPerMillion: number;
  tableBytes: number;
  correct: boolean;
}

/** What the write path leaves on a settled job that a copy must repeat (table → column overrides). */
type Overrides = Record<string, string>;

/** Copies every row `source` selects, once per n in [$1, $2], every column as it is unless overridden. */
async function cloneRows(pool: pg.Pool, table: string, from: string, overrides: Overrides, range: [number, number]): Promise<void> {
  const columns = (
    await pool.query<{ column_name: string }>(
      `select column_name from information_schema.columns where table_schema = current_schema() and table_name = $1 and is_generated = 'NEVER' order by ordinal_position`,
      [table],
    )
  ).rows.map((r) => r.column_name);
  for (const name of Object.keys(overrides)) if (!columns.includes(name)) throw new Error(`${table} has no column ${name}`);
  const select = columns.map((c) => overrides[c] ?? `t.${c}`).join(', ');
  await pool.query(`insert into ${table} (${columns.join(', ')}) select ${select} ${from}`, range);
}

/** One job's copy n: its ids are md5s of the template's and n, its keys name the copy's job. */
const NEW_JOB = `md5(t_job.id::text || ':' || n)::uuid`;
const rekey = (expression: string) => `replace(${expression}, t_job.id::text, ${NEW_JOB}::text)`;
/** The instant of the copy's i-th entry (0 reserve, 1 capture, 2 remainder): a microsecond apart, after the template's last. */
const at = (i: number) => `(tpl.last_at + ((n - 1) * 3 + ${i + 1}) * interval '1 microsecond')`;

/**
 * The templates: per wallet, its one settled job and that job's three entries, which
 * must be the last three of the wallet's order (closed form of the copies' running values).
 */
const TEMPLATES = `
  create table bench_templates as
  select j.id as job_id, j.wallet_id, a.entry_seq as last_seq, a.last_entry_at as last_at,
         (select e.amount from ledger_entries e where e.job_id = j.id and e.entry_type = 'capture') as captured
  from jobs j join accounts a on a.id = j.wallet_id
  where j.state = 'captured'
    and (select min(e.wallet_seq) from ledger_entries e where e.job_id = j.id) = a.entry_seq - 2
    and (select count(*) from ledger_entries e where e.job_id = j.id) = 3`;

async function seedCopies(pool: pg.Pool, range: [number, number]): Promise<void> {
  const fromTemplate = (table: string, alias: string, joinOn: string) =>
    `from bench_templates tpl join jobs t_job on t_job.id = tpl.job_id join ${table} ${alias} on ${joinOn}, generate_series($1::bigint, $2::bigint) n`;
  const entryIndex = `(t.wallet_seq - tpl.last_seq + 2)`;
  const entryAt = `(tpl.last_at + ((n - 1) * 3 + ${entryIndex} + 1) * interval '1 microsecond')`;
  await cloneRows(pool, 'jobs', `from bench_templates tpl join jobs t on t.id = tpl.job_id join jobs t_job on t_job.id = t.id, generate_series($1::bigint, $2::bigint) n`, {
    id: NEW_JOB,
    provider_job_ref: `t.provider_job_ref || ':' || n`,
    created_at: at(0),
    updated_at: at(1),
  }, range);
  await cloneRows(pool, 'ledger_entries', fromTemplate('ledger_entries', 't', 't.job_id = t_job.id'), {
    id: `md5(t.id::text || ':' || n)::uuid`,
    settlement_key: rekey('t.settlement_key'),
    pending_id: `case when t.pending_id is null then null else md5(t.pending_id::text || ':' || n)::uuid end`,
    job_id: NEW_JOB,
    created_at: entryAt,
    wallet_seq: `t.wallet_seq + 3 * n`,
    balance_after: `t.balance_after - n * tpl.captured`,
  }, range);
  await cloneRows(pool, 'holds', fromTemplate('holds', 't', 't.job_id = t_job.id'), {
    job_id: NEW_JOB,
    pending_entry_id: `md5(t.pending_entry_id::text || ':' || n)::uuid`,
    resolved_by: rekey('t.resolved_by'),
    resolved_at: at(1),
    created_at: at(0),
  }, range);
  // The hold's split across grants (0019): the same shares, on the copy's reserve entries.
  await cloneRows(pool, 'hold_shares', fromTemplate('hold_shares', 't', 't.job_id = t_job.id'), {
    job_id: NEW_JOB,
    pending_entry_id: `case when t.pending_entry_id is null then null else md5(t.pending_entry_id::text || ':' || n)::uuid end`,
  }, range);
  await cloneRows(pool, 'settlements', fromTemplate('settlements', 't', 't.job_id = t_job.id'), {
    id: `md5(t.id::text || ':' || n)::uuid`,
    settlement_key: rekey('t.settlement_key'),
    job_id: NEW_JOB,
    event_key: `t.event_key || ':' || n`,
    created_at: at(1),
  }, range);
  await cloneRows(pool, 'webhook_events', fromTemplate('webhook_events', 't', 't.job_id = t_job.id'), {
    event_key: `t.event_key || ':' || n`,
    job_id: NEW_JOB,
    settlement_key: rekey('t.settlement_key'),
    received_at: at(0),
    run_after: at(0),
    processed_at: at(1),
  }, range);
  await cloneRows(pool, 'delivery_attempts', fromTemplate('delivery_attempts', 't', 't.job_id = t_job.id'), {
    id: `md5(t.id::text || ':' || n)::uuid`,
    event_key: `t.event_key || ':' || n`,
    job_id: NEW_JOB,
    received_at: at(0),
  }, range);
  // What the write path moves for each copy: the projections of the accounts its entries
  // touch (by the template's entries, per copy), the wallet's head, and the spend counter
  // of the capture's period (the hold's +amount and its resolution's −amount net out).
  const copies = range[1] - range[0] + 1;
  await pool.query(
    `update accounts a set debits_pending = a.debits_pending + $1::bigint * d.debits_pending, debits_posted = a.debits_posted + $1::bigint * d.debits_posted,
            credits_pending = a.credits_pending + $1::bigint * d.credits_pending, credits_posted = a.credits_posted + $1::bigint * d.credits_posted
     from (select account_id, sum(dp) as debits_pending, sum(dq) as debits_posted, sum(cp) as credits_pending, sum(cq) as credits_posted
           from (select e.debit_account_id as account_id,
                        case e.flags when 'pending' then e.amount when 'posted' then 0 else -e.amount end as dp,
                        case when e.flags in ('posted', 'post_pending') then e.amount else 0 end as dq, 0 as cp, 0 as cq
                 from bench_templates tpl join ledger_entries e on e.job_id = tpl.job_id
                 union all
                 select e.credit_account_id, 0, 0,
                        case e.flags when 'pending' then e.amount when 'posted' then 0 else -e.amount end,
                        case when e.flags in ('posted', 'post_pending') then e.amount else 0 end
                 from bench_templates tpl join ledger_entries e on e.job_id = tpl.job_id) m
           group by account_id) d
     where a.id = d.account_id`,
    [copies],
  );
  // The grants the copies' entries name: each copy's capture leaves them (its hold and the
  // rest of it released net out), as the posting module moves them for the template.
  await pool.query(
    `update grants g set remaining = g.remaining - $1::bigint * c.captured
     from (select e.grant_id, sum(e.amount) as captured from bench_templates tpl join ledger_entries e on e.job_id = tpl.job_id
           where e.entry_type = 'capture' and e.grant_id is not null group by e.grant_id) c
     where g.id = c.grant_id`,
    [copies],
  );
  await pool.query(
    `update accounts a set entry_seq = tpl.last_seq + 3 * $1::bigint, running_balance = a.running_balance - $2::bigint * tpl.captured,
            last_entry_at = tpl.last_at + ($1::bigint * 3) * interval '1 microsecond'
     from bench_templates tpl where a.id = tpl.wallet_id`,
    [range[1], copies],
  );
  await pool.query(
    `insert into spend_periods (tenant_id, currency, period, starts_on, spent)
     select j.tenant_id, j.currency, p.period, p.starts_on, sum(tpl.captured)
     from bench_templates tpl join jobs j on j.id = tpl.job_id, generate_series($1::bigint, $2::bigint) n,
          lateral (select ${at(1)} at time zone 'UTC' as utc) c,
          lateral (values ('day', c.utc::date), ('month', date_trunc('month', c.utc)::date)) p(period, starts_on)
     group by 1, 2, 3, 4
     on conflict (tenant_id, currency, period, starts_on) do update set spent = spend_periods.spent + excluded.spent`,
    range,
  );
}

/** `tally reconcile` as an operator runs it; its progress lines (stderr) are passed on and read. */
async function runReconcile(url: string, logLevel: string, label: string): Promise<{ seconds: number; exitCode: number | null; stdout: string; checks: Record<string, number> }> {
  const started = performance.now();
  const child = spawn(process.execPath, [TALLY_BIN, 'reconcile'], {
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: logLevel },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    process.stderr.write(chunk.toString().replace(/^(?=.)/gm, `${label} `));
  });
  const exitCode = await new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const seconds = (performance.now() - started) / 1000;
  // "reconcile: <class> done in 1.23 s (4/17 checks, …" — see src/cli/reconcile-progress.ts
  const checks: Record<string, number> = {};
  for (const match of stderr.matchAll(/reconcile: ([a-z_]+) done in ([\d.]+) s \(\d+\/\d+ checks/g)) checks[match[1]!] = Number(match[2]);
  return { seconds, exitCode, stdout, checks };
}

async function entryCount(pool: pg.Pool): Promise<number> {
  return Number((await pool.query<{ n: string }>('select count(*)::text as n from ledger_entries')).rows[0]!.n);
}

export async function measureReconcileScale(config: ReconcileScaleConfig): Promise<ReconcileScaleResult> {
  const url = await recreateDatabase(config.adminUrl, 'tally_bench_rec');
  const pool = benchPool(url, 2);
  const adminToken = `bench-admin-${process.pid}`;
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env = { DATABASE_URL: url, TALLY_ADMIN_TOKEN: adminToken, LOG_LEVEL: config.logLevel, HOST: '127.0.0.1', TALLY_RECONCILE_INTERVAL_SECONDS: '0' };
  try {
    // The templates, through the real path: serve with its in-process worker.
    note(`[reconcile] ${config.tenants} wallets with one job each, settled through the API and the worker…`);
    const server = runTally('serve', ['serve', '--port', String(port), '--workers', '1'], env, join(config.workDir, 'reconcile-serve.log'));
    try {
      await waitFor('tally serve answering /healthz', async () => (await fetch(`${baseUrl}/healthz`)).status === 200, 60_000, () => exitReason(server));
      const world = await buildWorld(baseUrl, adminToken, { tenants: config.tenants, jobs: config.tenants, seed: config.seed });
      const signer = new Webhook(world.secret);
      for (const job of world.jobs) {
        const id = `msg_${job.id}`;
        const body = JSON.stringify({ type: 'job.completed', timestamp: new Date().toISOString(), data: { job_id: job.id, tenant_id: job.tenantId, model: MODEL, currency: CURRENCY, usage: job.usage } });
        const now = new Date();
        const response = await fetch(`${baseUrl}/v1/webhooks/${world.provider}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': signer.sign(id, now, body) },
          body,
        });
        if (response.status !== 200) throw new Error(`delivery of ${job.id}: ${response.status} ${await response.text()}`);
      }
      await waitFor(
        'every template job captured',
        async () => Number((await pool.query<{ n: string }>(`select count(*)::text as n from jobs where state = 'captured'`)).rows[0]!.n) === config.tenants,
        120_000,
        () => exitReason(server),
      );
    } finally {
      await server.stop();
    }
    await pool.query(TEMPLATES);
    const templates = Number((await pool.query<{ n: string }>('select count(*)::text as n from bench_templates')).rows[0]!.n);
    if (templates !== config.tenants) throw new Error(`${templates} of ${config.tenants} settled jobs are usable templates (the last three entries of their wallet)`);
    const base = await entryCount(pool);

    const sizes = [...new Set([Math.round(config.entries / 10), Math.round((config.entries * 3) / 10), config.entries])].filter((s) => s > base);
    const runs: ReconcileRunTiming[] = [];
    let copies = 0;
    let correct = true;
    for (const size of sizes) {
      // Copies per template so that the ledger has at least `size` entries.
      const target = Math.ceil((size - base) / (3 * templates));
      note(`[reconcile] seeding to ${(base + 3 * templates * target).toLocaleString('en-US')} entries (set-based)…`);
      const progress = bars('[reconcile] seeding', { copies: target });
      const seedStarted = performance.now();
      const chunk = Math.max(1, Math.floor(100_000 / (3 * templates)));
      while (copies < target) {
        const to = Math.min(target, copies + chunk);
        await seedCopies(pool, [copies + 1, to]);
        copies = to;
        progress.update({ copies });
      }
      progress.stop();
      // As autovacuum would have left a table this size: visibility map and statistics.
      await pool.query('vacuum analyze');
      const seedSeconds = (performance.now() - seedStarted) / 1000;
      const entries = await entryCount(pool);
      note(`[reconcile] ${entries.toLocaleString('en-US')} entries (seeded in ${seedSeconds.toFixed(1)} s); tally reconcile…`);
      const run = await runReconcile(url, config.logLevel, '[reconcile]');
      const clean = run.exitCode === 0 && /: clean/.test(run.stdout);
      if (!clean) note(`[reconcile] NOT clean at ${entries} entries (exit ${run.exitCode}):\n${run.stdout.slice(0, 4000)}`);
      correct &&= clean;
      runs.push({ entries, seedSeconds, seconds: run.seconds, exitCode: run.exitCode, clean, checks: run.checks });
      note(`[reconcile] ${entries.toLocaleString('en-US')} entries: ${run.seconds.toFixed(2)} s, ${clean ? 'clean' : 'NOT clean'}`);
    }

    let inconsistency: ReconcileScaleResult['inconsistency'];
    if (config.inconsistency) {
      // One wallet's projection a micro off: the run must find exactly that, and exit 1.
      const wallet = (await pool.query<{ id: string }>(`select wallet_id::text as id from bench_templates order by wallet_id limit 1`)).rows[0]!.id;
      await pool.query('update accounts set debits_posted = debits_posted + 1 where id = $1', [wallet]);
      const run = await runReconcile(url, config.logLevel, '[reconcile, one drift]');
      // The wallet's projection_drift, and the currency's sum off by the same micro (currency_sum_nonzero).
      const found = run.exitCode === 1 && /2 exception\(s\)/.test(run.stdout) && run.stdout.split('\n').some((line) => line.includes('projection_drift') && line.includes(`"account_id":"${wallet}"`)) && run.stdout.includes('currency_sum_nonzero');
      inconsistency = { seconds: run.seconds, exitCode: run.exitCode, found, output: run.stdout.trim().split('\n').slice(0, 3).join('\n') };
      await pool.query('update accounts set debits_posted = debits_posted - 1 where id = $1', [wallet]);
      correct &&= found;
    }

    const tableBytes = Number((await pool.query<{ bytes: string }>(`select pg_total_relation_size('ledger_entries')::text as bytes`)).rows[0]!.bytes);
    const first = runs[0];
    const last = runs.at(-1);
    const secondsPerMillion = first && last && last.entries > first.entries ? ((last.seconds - first.seconds) / (last.entries - first.entries)) * 1e6 : NaN;
    return { tenants: config.tenants, runs, ...(inconsistency ? { inconsistency } : {}), secondsPerMillion, tableBytes, correct };
  } finally {
    await pool.end();
  }
}

/** Under this, issue 16's target for a full reconciliation of a million entries is met. */
export const RECONCILE_TARGET_SECONDS = 10;

export function formatReconcileScale(r: ReconcileScaleResult): string {
  const n = (x: number, digits = 2) => x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  const largest = r.runs.at(-1);
  const lines = [
    `Reconciliation at scale — ${r.tenants} wallets, ledgers copied from jobs settled through the real path: ${r.correct ? 'clean at every size' : 'WRONG'}`,
    ...r.runs.map((run) => {
      const slowest = Object.entries(run.checks).sort((a, b) => b[1] - a[1]).slice(0, 3).map(([name, s]) => `${name} ${n(s)} s`).join(', ');
      return `  ${run.entries.toLocaleString('en-US').padStart(11)} entries: tally reconcile ${n(run.seconds)} s (exit ${run.exitCode}${run.clean ? ', clean' : ', NOT clean'})${slowest ? `; slowest: ${slowest}` : ''}`;
    }),
    `  growth: ${n(r.secondsPerMillion)} s per million entries between the smallest and the largest ledger; ledger_entries with its indexes ${n(r.tableBytes / 2 ** 20, 0)} MiB`,
    ...(largest ? [`  target < ${RECONCILE_TARGET_SECONDS} s at ${largest.entries.toLocaleString('en-US')} entries: ${largest.seconds < RECONCILE_TARGET_SECONDS ? 'met' : 'MISSED'}`] : []),
    ...(r.inconsistency ? [`  one wallet's projection a micro off: ${r.inconsistency.found ? 'found' : 'NOT found'} in ${n(r.inconsistency.seconds)} s (exit ${r.inconsistency.exitCode}): ${r.inconsistency.output.split('\n').find((line) => line.includes('projection_drift'))?.trim() ?? ''}`] : []),
  ];
  return lines.join('\n');
}
