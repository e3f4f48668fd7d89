import { MAX_JOBS_IN_FLIGHT } from './load.js';
import { formatMicros } from './money.js';
import type { RoundFigures } from './round.js';

/** The drill's report on stdout: each round's checks and what the operator saw, then one summary table. */

const ms = (value: number | null) => (value === null ? 'n/a' : `${value} ms`);
const since = (at: number, killedAt: number) => `${at >= killedAt ? '+' : '−'}${(Math.abs(at - killedAt) / 1000).toFixed(2)} s`;

function outcomeOf(r: RoundFigures): string {
  return r.failedOver ? `${r.killed} → ${r.primaryAfter}` : `${r.killed} restarted in place`;
}

function rejoinOf(r: RoundFigures): string {
  if (r.rejoin.from === 'not needed') return 'not needed';
  return `${ms(r.rejoin.ms)} after ${r.rejoin.from === 'kill' ? 'the kill' : 'its pg_autoctl restarted'}`;
}

export function lostCount(r: RoundFigures): number {
  return r.lost.jobs + r.lost.deliveries + r.lost.credits + (r.lost.micros > 0n ? 1 : 0);
}

export function doubledCount(r: RoundFigures): number {
  return r.doubled.ledgerKeys + r.doubled.resolutions + r.doubled.credits + (r.doubled.micros > 0n ? 1 : 0);
}

export function formatRound(r: RoundFigures): string {
  const what =
    r.kill === 'node'
      ? `${r.killed}'s pg_autoctl and postmaster (pid ${r.postmasterPid})`
      : `${r.killed}'s postmaster (pid ${r.postmasterPid})`;
  const lines = [
    '',
    `── round ${r.round}: SIGKILL to ${what} → ${r.failedOver ? `${r.primaryAfter} promoted by pg_auto_failover` : 'restarted in place by its pg_autoctl, no failover'} ──`,
    ...r.checks.map((c) => `  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`),
    '  what the operator saw (time from the kill):',
    ...r.events.map(
      (e) =>
        `    monitor ${since(e.at.getTime(), r.killedAt)}  ${e.node}: ${e.reportedState} → ${e.goalState}  ${e.description.slice(0, 110)}`,
    ),
    ...r.messages.map(
      (m) => `    tally ${m.process.padEnd(8)} ${since(m.first, r.killedAt)} … ${since(m.last, r.killedAt)}  ×${m.count}  "${m.msg}"`,
    ),
    `    /healthz answered other than 200 for ${r.msHealthzNot200} ms, /metrics for ${r.msMetricsNot200} ms (scraped every second); ` +
      `tally_webhooks_total{outcome="error"} = ${r.webhookErrors.counter ?? '?'} (deliveries answered 503 since the start, as the drill saw them: ${r.webhookErrors.seen})`,
    `    503 by call: ${
      Object.entries(r.answered503ByRoute)
        .sort(([, a], [, b]) => b - a)
        .map(([route, n]) => `${route} ${n}`)
        .join(', ') || 'none'
    }`,
    `    ${r.settlementsAfterKill} settlements committed on ${r.primaryAfter} after the kill`,
  ];
  return lines.join('\n');
}

export function formatSummary(rounds: RoundFigures[], command: string): string {
  const columns = [
    'round',
    'kill',
    'outcome',
    'kill → promoted',
    'kill → first settlement committed on the new primary',
    'old primary back as standby',
    '503',
    'other 5xx / refused',
    '/healthz not 200',
    'lost',
    'doubled',
    'reconcile',
    'checks',
  ];
  const rows = rounds.map((r) => {
    const other =
      Object.entries(r.otherFailures)
        .map(([what, n]) => `${n}× ${what}`)
        .join(', ') || '0';
    const checks = `${r.checks.filter((c) => c.ok).length}/${r.checks.length} ${r.ok ? 'ok' : 'FAILED'}`;
    return [
      r.round,
      r.kill,
      outcomeOf(r),
      ms(r.msKillToPromoted),
      ms(r.msKillToFirstSettlement),
      rejoinOf(r),
      r.answered503,
      other,
      `${r.msHealthzNot200} ms`,
      lostCount(r),
      doubledCount(r),
      r.reconcile,
      checks,
    ];
  });
  const table = [columns, columns.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`);
  const last = rounds.at(-1);
  const totals = last
    ? `acknowledged in all: ${last.acknowledged.jobs} jobs, ${last.acknowledged.deliveries} webhook deliveries, ${last.acknowledged.credits} top-ups ` +
      `(${last.jobsNotStarted} job starts skipped while ${MAX_JOBS_IN_FLIGHT} were in flight), ` +
      `under load ${rounds.map((r) => `${r.secondsUnderLoad.toFixed(1)} s`).join(' + ')}; ` +
      `money lost ${formatMicros(last.lost.micros)} USD, doubled ${formatMicros(last.doubled.micros)} USD`
    : 'no round ran';
  return ['', `== failover drill summary: ${command} ==`, ...table, totals, ''].join('\n');
}
