import { formatMicros } from './money.js';
import type { RoundFigures } from './round.js';

/** The drill's report on stdout: each round's checks and what the operator saw, then one summary table. */

const ms = (value: number | null) => (value === null ? 'n/a' : `${value} ms`);
const seconds = (at: number, killedAt: number) => `+${((at - killedAt) / 1000).toFixed(2)} s`;

export function formatRound(r: RoundFigures): string {
  const lines = [
    '',
    `── round ${r.round}: ${r.killed} (postmaster pid ${r.postmasterPid}) SIGKILLed → ${r.promoted} promoted by pg_auto_failover ──`,
    ...r.checks.map((c) => `  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`),
    '  what the operator saw (relative to the kill):',
    ...r.events.map(
      (e) =>
        `    monitor ${seconds(e.at.getTime(), r.killedAt)}  ${e.node}: ${e.reportedState} → ${e.goalState}  ${e.description.slice(0, 110)}`,
    ),
    ...r.messages.map(
      (m) => `    tally ${m.process.padEnd(8)} ${seconds(m.first, r.killedAt)}…${seconds(m.last, r.killedAt)}  ×${m.count}  "${m.msg}"`,
    ),
    `    /healthz not 200 for ${r.msHealthzNot200} ms`,
  ];
  return lines.join('\n');
}

export function formatSummary(rounds: RoundFigures[], command: string): string {
  const header =
    '| round | killed → promoted | kill → promoted | kill → first settlement on the new primary | kill → old primary back as standby | 503 | other 5xx / refused | /healthz not 200 | lost | doubled | reconcile | checks |';
  const rule = `|${header
    .split('|')
    .slice(1, -1)
    .map(() => ' --- ')
    .join('|')}|`;
  const rows = rounds.map((r) => {
    const lost = r.lost.jobs + r.lost.deliveries + r.lost.credits + (r.lost.micros > 0n ? 1 : 0);
    const doubled = r.doubled.ledgerKeys + r.doubled.resolutions + r.doubled.credits + (r.doubled.micros > 0n ? 1 : 0);
    const other =
      Object.entries(r.otherFailures)
        .map(([status, n]) => `${n}× ${status}`)
        .join(', ') || '0';
    return (
      `| ${r.round} | ${r.killed} → ${r.promoted} | ${ms(r.msKillToPromoted)} | ${ms(r.msKillToFirstSettlement)} | ${ms(r.msKillToWhole)} | ` +
      `${r.answered503} | ${other} | ${r.msHealthzNot200} ms | ${lost} | ${doubled} | ${r.reconcile} | ${r.checks.filter((c) => c.ok).length}/${r.checks.length} ${r.ok ? 'ok' : 'FAILED'} |`
    );
  });
  const last = rounds.at(-1);
  const totals = last
    ? `acknowledged in all: ${last.acknowledged.jobs} jobs, ${last.acknowledged.deliveries} webhook deliveries, ${last.acknowledged.credits} top-ups; ` +
      `lost ${formatMicros(last.lost.micros)} USD, doubled ${formatMicros(last.doubled.micros)} USD`
    : 'no round ran';
  return ['', `== failover drill summary (${command}) ==`, header, rule, ...rows, totals, ''].join('\n');
}
