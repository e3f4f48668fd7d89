import type { ReconcileScaleResult } from './reconcile-scale.js';
import type { ClaimExplainResult } from './claim-explain.js';
import { formatBalanceAt, type BalanceAtResult } from './balance-at.js';
import type { LimitResult } from './limit.js';
import type { ScenarioName, ScenarioResult } from './scenario.js';
import type { TpcbResult } from './tpcb-spec.js';

/** The readable report (a table) and the machine one (--json). */

export interface Machine {
  cpus: number;
  cpuModel: string;
  memoryBytes: number;
  node: string;
  kernel: string;
}

export interface BenchReport {
  date: string;
  command: string;
  machine: Machine;
  postgres: { version: string; embedded: boolean; settings: Record<string, string> };
  options: Record<string, unknown>;
  /** the limit: pgbench TPC-B on this server in this run (bench/tpcb.ts) */
  tpcb: TpcbResult;
  /** every TPC-B run (1 client, and as many as Tally's workers use); `tpcb` is the fastest */
  tpcbRuns: TpcbResult[];
  /** minimal durable transactions (--minimal-limit), secondary context; empty without it */
  limit: LimitResult[];
  scenarios: ScenarioResult[];
  /** the issue's targets, as shares of TPC-B tps */
  targets: typeof TARGETS;
  ratios: Record<ScenarioName, Ratios>;
  /** GET /v1/wallets/{id}?at= at a wallet of a million entries (bench/balance-at.ts) */
  balanceAt?: BalanceAtResult;
  /** a full tally reconcile at growing ledgers (bench/reconcile-scale.ts) */
  reconcileScale?: ReconcileScaleResult;
  /** the claim under EXPLAIN at growing backlogs (bench/claim-explain.ts) */
  claimExplain?: ClaimExplainResult;
  ok: boolean;
}

/** Issue 16's goal: jobs settled / s at least TPC-B's tps, deliveries accepted / s at least three times it. */
export const TARGETS = { jobsToTpcb: 1, deliveriesToTpcb: 3 } as const;

export interface Ratios {
  /** jobs settled / s ÷ TPC-B tps (target TARGETS.jobsToTpcb) */
  jobsToTpcb: number;
  /** deliveries accepted / s ÷ TPC-B tps (target TARGETS.deliveriesToTpcb) */
  deliveriesToTpcb: number;
  eventsToTpcb: number;
  met: { jobs: boolean; deliveries: boolean };
  /** against the minimal transactions, when --minimal-limit measured them */
  minimal?: { jobsToLimit: number; jobsToLimitOneRow: number; eventsToLimit: number; deliveriesToLimit: number };
}

export function ratiosOf(scenarios: ScenarioResult[], tpcb: TpcbResult, limit: LimitResult[]): BenchReport['ratios'] {
  const distinct = limit.find((l) => l.shape === 'distinct_rows')?.perSecond ?? NaN;
  const one = limit.find((l) => l.shape === 'one_row')?.perSecond ?? NaN;
  const out = {} as BenchReport['ratios'];
  for (const s of scenarios) {
    const jobsToTpcb = s.jobsPerSecond / tpcb.perSecond;
    const deliveriesToTpcb = s.acceptedPerSecond / tpcb.perSecond;
    out[s.name] = {
      jobsToTpcb,
      deliveriesToTpcb,
      eventsToTpcb: s.eventsPerSecond / tpcb.perSecond,
      met: { jobs: jobsToTpcb >= TARGETS.jobsToTpcb, deliveries: deliveriesToTpcb >= TARGETS.deliveriesToTpcb },
      ...(limit.length > 0
        ? {
            minimal: {
              jobsToLimit: s.jobsPerSecond / distinct,
              jobsToLimitOneRow: s.jobsPerSecond / one,
              eventsToLimit: s.eventsPerSecond / distinct,
              deliveriesToLimit: s.acceptedPerSecond / distinct,
            },
          }
        : {}),
    };
  }
  return out;
}

const grantsOf = (s: ScenarioResult) => (s.grants > 1 ? `, ${s.grants} grants each` : '');
const TITLES: Record<ScenarioName, (s: ScenarioResult) => string> = {
  hot: (s) => `hot wallet (1 wallet${grantsOf(s)})`,
  spread: (s) => `spread (${s.tenants} wallets${grantsOf(s)})`,
  growing: (s) => `growing (${s.tenants} wallets${grantsOf(s)}, hold extended)`,
};

const postgresSeconds = (s: ScenarioResult) => (s.cpuSeconds.postgres ? Object.values(s.cpuSeconds.postgres).reduce((a, b) => a + b, 0) : null);

/**
 * What a growing job costs against a plain one measured in the same run (spread, on as
 * many wallets, else hot): per job, PostgreSQL CPU, statements, transactions, WAL.
 */
function growingAgainstPlain(scenarios: ScenarioResult[]): string[] {
  const growing = scenarios.find((s) => s.name === 'growing');
  const plain = scenarios.find((s) => s.name === 'spread') ?? scenarios.find((s) => s.name === 'hot');
  if (!growing || !plain) return [];
  const pair = (f: (s: ScenarioResult) => number | null, digits: number) => {
    const [g, p] = [f(growing), f(plain)];
    return `${num(g, digits)} against ${num(p, digits)}${g !== null && p !== null && p > 0 ? ` (${num(g / p, 2)}×)` : ''}`;
  };
  const perJob = (x: number | null, s: ScenarioResult) => (x === null ? null : (x * 1000) / s.jobs);
  return [
    `growing against ${plain.name}, per job (a growing job is 6 deliveries, 5 events and one extension; a plain one 3 and 2): ` +
      [
        `PostgreSQL CPU ms ${pair((s) => perJob(postgresSeconds(s), s), 2)}`,
        `statements ${pair((s) => s.profile.statementsPerJob, 1)}`,
        `transactions ${pair((s) => s.profile.transactionsPerJob, 2)}`,
        `WAL bytes ${pair((s) => s.profile.walBytesPerJob, 0)}`,
        `jobs settled / s ${pair((s) => s.jobsPerSecond, 0)}`,
      ].join('; '),
  ];
}

/** Share of the machine's CPU taken by others above which the report warns. */
const CONTENDED = 0.2;

const num = (n: number | null | undefined, digits = 0) =>
  n === null || n === undefined || !Number.isFinite(n)
    ? 'n/a'
    : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const mib = (bytes: number | null | undefined) => (bytes === null || bytes === undefined ? 'n/a' : `${num(bytes / 2 ** 20)}`);
const pct = (x: number) => `${num(x * 100, 1)} %`;
const times = (x: number, met?: boolean) => `${num(x, 2)}×${met ? ' (met)' : ''}`;
const ms = (p: { p50: number; p95: number; p99: number }) => `${num(p.p50)} / ${num(p.p95)} / ${num(p.p99)}`;

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
        .join('   ')
        .trimEnd(),
    )
    .join('\n');
}

export function formatReport(report: BenchReport): string {
  const { scenarios, limit, ratios, tpcb } = report;
  const o = report.options;
  const lines: string[] = [];
  const m = report.machine;
  lines.push(`Tally benchmark — ${report.date}`);
  lines.push(`machine: ${m.cpus} CPUs (${m.cpuModel}), ${num(m.memoryBytes / 2 ** 30, 1)} GiB, Node ${m.node}, Linux ${m.kernel}`);
  lines.push(
    `PostgreSQL ${report.postgres.version}${report.postgres.embedded ? ' (embedded)' : ''}: ${Object.entries(report.postgres.settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}`,
  );
  lines.push(
    `run: ${o['jobs']} jobs × 3 deliveries (original, duplicate, re-emission${scenarios.some((s) => s.name === 'growing') ? '; growing: after 3 progress reports, each job with auto_extend' : ''}); load generator ${o['concurrency']} in flight${o['rate'] ? ` at ${o['rate']}/s` : ''}; tally serve --workers 0 + ${o['workers']} × tally worker ${o['workerConcurrencyGiven'] ? `--concurrency ${o['workerConcurrency']}` : `(default concurrency: ${o['workerConcurrency']})`}; LOG_LEVEL=${o['logLevel']}${o['separate'] ? '; --separate: the workers start once every delivery is accepted, so settlement rates count from the first event processed' : ''}`,
  );
  lines.push('');
  const col = (f: (s: ScenarioResult) => string) => scenarios.map(f);
  const rows: string[][] = [
    ['', ...col((s) => TITLES[s.name](s))],
    ['deliveries accepted / s (HTTP 200s)', ...col((s) => num(s.acceptedPerSecond))],
    ['jobs settled / s', ...col((s) => num(s.jobsPerSecond))],
    [
      scenarios.some((s) => s.name === 'growing') ? 'events settled / s (2 per job; growing 5)' : 'events settled / s (2 per job)',
      ...col((s) => num(s.eventsPerSecond)),
    ],
    ['deliveries: seconds to send all', ...col((s) => num(s.deliverySeconds, 1))],
    [
      o['separate'] ? 'settled: first event processed → last capture, s' : 'settled: first delivery → last capture, s',
      ...col((s) => num(s.settleSeconds, 1)),
    ],
    ['receipt → settled p50 / p95 / p99, ms', ...col((s) => ms(s.latencyMs))],
    ['delivery HTTP p50 / p95 / p99, ms', ...col((s) => ms(s.httpMs))],
    ['peak RSS server, MiB', ...col((s) => mib(s.peakRssBytes.server))],
    ['peak RSS worker(s), MiB', ...col((s) => s.peakRssBytes.workers.map(mib).join(' + '))],
    ['CPU s: server', ...col((s) => num(s.cpuSeconds.server, 1))],
    ['CPU s: worker(s)', ...col((s) => num(s.cpuSeconds.workers, 1))],
    [
      'CPU s: PostgreSQL',
      ...col((s) => num(postgresSeconds(s), 1)),
    ],
    [
      'CPU ms per job: server / workers / PostgreSQL',
      ...col((s) => {
        const pg = postgresSeconds(s);
        const per = (x: number | null) => (x === null ? null : (x * 1000) / s.jobs);
        return `${num(per(s.cpuSeconds.server), 1)} / ${num(per(s.cpuSeconds.workers), 1)} / ${num(per(pg), 1)}`;
      }),
    ],
    ['CPU s: load generator + harness', ...col((s) => num(s.cpuSeconds.loadGenerator + s.cpuSeconds.harness, 1))],
    ['CPU s: other processes on the machine', ...col((s) => num(s.cpuSeconds.otherProcesses, 1))],
    ['CPU s available (CPUs × window)', ...col((s) => num(s.cpuSeconds.available, 1))],
    [
      'run-queue wait s: server / workers / PostgreSQL',
      ...col(
        (s) =>
          `${num(s.cpuSeconds.runQueueWait.server, 1)} / ${num(s.cpuSeconds.runQueueWait.workers, 1)} / ${num(s.cpuSeconds.runQueueWait.postgres, 1)}`,
      ),
    ],
    ['load average (1 min) at the end', ...col((s) => num(s.cpuSeconds.loadAverage, 1))],
    ['statements per job (round trips)', ...col((s) => num(s.profile.statementsPerJob, 1))],
    ['transactions per job (COMMITs)', ...col((s) => num(s.profile.transactionsPerJob, 2))],
    ['WAL bytes per job', ...col((s) => num(s.profile.walBytesPerJob, 0))],
    [
      'PostgreSQL ms per job: executing / planning',
      ...col((s) => `${num(s.profile.executeMsPerJob, 1)} / ${num(s.profile.planMsPerJob, 1)}`),
    ],
    ['retried deliveries', ...col((s) => num(s.retries))],
    ['money verified', ...col((s) => (s.verification.ok ? 'exact' : 'FAILED'))],
  ];
  lines.push(table(rows));
  lines.push(...growingAgainstPlain(scenarios));
  const busiest = Math.max(
    ...[...scenarios.map((s) => s.cpuSeconds), tpcb.cpuSeconds, ...limit.map((l) => l.cpuSeconds)].map((c) =>
      c.otherProcesses !== null && c.available ? c.otherProcesses / c.available : 0,
    ),
  );
  if (busiest > CONTENDED) {
    lines.push(
      `WARNING: other processes used up to ${pct(busiest)} of the machine's CPU during this run: every rate above is lower than this machine gives Tally alone.`,
    );
  }
  lines.push('');
  lines.push(
    `The limit: pgbench TPC-B — ${tpcb.tool === 'pgbench' ? tpcb.program : `${tpcb.program}; no pgbench found (PATH, /usr/lib/postgresql/*/bin, BENCH_PGBENCH)`}`,
  );
  lines.push(
    `  ${tpcb.script} script, scale ${tpcb.scale}, ${tpcb.queryMode} query mode, ${tpcb.threads} thread(s), ~${num(tpcb.seconds)} s per run; the limit is the fastest run (${tpcb.clients} client${tpcb.clients === 1 ? '' : 's'})`,
  );
  const cpuCells = (c: BenchReport['tpcb']['cpuSeconds'], transactions: number) => [
    num(c.postgres === null ? null : (c.postgres * 1000) / transactions, 3),
    `${num(c.postgres, 1)} / ${num(c.harness, 1)} / ${num(c.otherProcesses, 1)} / ${num(c.available, 1)}`,
  ];
  lines.push(
    table([
      ['', 'tx / s', 'latency p50 / p95 / p99, ms', 'PostgreSQL CPU ms / tx', 'CPU s: PostgreSQL / client / other / available'],
      ...report.tpcbRuns.map((run) => [
        `TPC-B (${run.tool === 'pgbench' ? 'pgbench' : 'built-in'}), ${run.clients} client${run.clients === 1 ? '' : 's'}${run.failed ? `, ${run.failed} failed` : ''}`,
        num(run.perSecond),
        ms(run.latencyMs),
        ...cpuCells(run.cpuSeconds, run.transactions),
      ]),
      ...limit.map((l) => [
        `minimal tx (BEGIN; UPDATE; INSERT; COMMIT), ${l.shape === 'distinct_rows' ? 'distinct rows' : 'one row'}`,
        num(l.perSecond),
        ms(l.latencyMs),
        ...cpuCells(l.cpuSeconds, l.transactions),
      ]),
    ]),
  );
  lines.push('');
  lines.push(`Tally as a share of pgbench TPC-B (${num(tpcb.perSecond)} tx/s)`);
  lines.push(
    table([
      ['', ...col((s) => TITLES[s.name](s))],
      [
        `jobs settled / s ÷ TPC-B tps (target ≥ ${num(TARGETS.jobsToTpcb, 1)}×)`,
        ...col((s) => times(ratios[s.name].jobsToTpcb, ratios[s.name].met.jobs)),
      ],
      [
        `deliveries accepted / s ÷ TPC-B tps (target ≥ ${num(TARGETS.deliveriesToTpcb)}×)`,
        ...col((s) => times(ratios[s.name].deliveriesToTpcb, ratios[s.name].met.deliveries)),
      ],
      ['events settled / s ÷ TPC-B tps', ...col((s) => times(ratios[s.name].eventsToTpcb))],
      ...(limit.length > 0
        ? [
            ['jobs settled / s ÷ minimal tx / s (distinct rows)', ...col((s) => times(ratios[s.name].minimal?.jobsToLimit ?? NaN))],
            ['jobs settled / s ÷ minimal tx / s (one row)', ...col((s) => times(ratios[s.name].minimal?.jobsToLimitOneRow ?? NaN))],
          ]
        : []),
    ]),
  );
  for (const s of scenarios) {
    lines.push('');
    lines.push(`Profile — ${TITLES[s.name](s)}`);
    if (s.cpuSeconds.postgres) {
      lines.push(
        `  PostgreSQL CPU s by client: ${Object.entries(s.cpuSeconds.postgres)
          .slice(0, 6)
          .map(([k, v]) => `${k} ${num(v, 1)}`)
          .join(', ')}`,
      );
    }
    const waits = s.profile.waits;
    if (waits) {
      for (const app of ['tally-serve', 'tally-worker']) {
        const shares = waits.byApplication[app];
        if (!shares) continue;
        lines.push(
          `  ${app} connections (${num(waits.backends[app], 1)} on average): ${Object.entries(shares)
            .slice(0, 5)
            .map(([k, v]) => `${k} ${pct(v)}`)
            .join(', ')}`,
        );
      }
    }
    const writes = s.profile.tableWrites.slice(0, 10);
    if (writes.length > 0) {
      const n = s.jobs;
      lines.push(
        `  rows written per job (inserts + updates, HOT share; indexes): ${writes
          .map((t) => `${t.table} ${num(t.inserts / n, 2)} + ${num(t.updates / n, 2)}${t.updates > 0 ? ` (${pct(t.hotUpdates / t.updates)} HOT)` : ''}; ${t.indexes}`)
          .join(' · ')}`,
      );
    }
    if (s.profile.claim)
      lines.push(`  claim query with ${s.profile.claim.backlog} events open: ${num(s.profile.claim.executionMs, 2)} ms (EXPLAIN ANALYZE)`);
    for (const st of s.profile.statements.slice(0, 6)) {
      lines.push(
        `  ${num(st.totalMs)} ms (+${num(st.planMs)} planning) in ${num(st.callsPerJob, 2)}/job × ${num(st.meanMs, 3)} ms: ${st.query.slice(0, 90)}`,
      );
    }
  }
  lines.push('');
  for (const s of scenarios) {
    lines.push(`Verification — ${TITLES[s.name](s)}: ${s.verification.ok ? 'exact' : 'FAILED'}`);
    for (const c of s.verification.checks) lines.push(`  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name} — ${c.detail}`);
  }
  if (report.balanceAt) lines.push('', formatBalanceAt(report.balanceAt));
  return lines.join('\n');
}
