import type { Check, LossAndDoubling } from './checks.js';
import { FailoverWatch } from './failover-watch.js';
import { countByRoute, type FetchRecorder } from './fetch-recorder.js';
import type { Formation } from './formation.js';
import type { KillMode } from './kill.js';
import type { SteadyLoad } from './load.js';
import { messagesBetween, type MessageSeen } from './log-lines.js';
import type { MonitorEvent } from './monitor-state.js';
import { webhookErrorsCounted } from './metrics-probe.js';
import { nodePool } from './node-db.js';
import { awaitOutcome, bringBack, type Rejoin } from './outcome.js';
import { waitFor } from './processes.js';
import type { ProbeWatch } from './probe-watch.js';
import type { Progress } from './progress.js';
import { settlementsSince } from './settled.js';
import type { TallyFleet } from './tally-fleet.js';
import { verifyRound } from './verify-round.js';
import type { World } from './world.js';

/**
 * One failover under load, start to finish: the formation whole (primary + synchronous
 * standby), the load started, warmed up, the primary SIGKILLed, pg_auto_failover left to
 * promote the standby (nothing here promotes), the load kept running on the new primary,
 * then stopped, everything settled and checked on the new primary, and the old primary
 * brought back as a standby — so the next round kills the new primary in turn: the
 * failback.
 */

export interface RoundOptions {
  warmupSeconds: number;
  afterSeconds: number;
  kill: KillMode;
}

export interface RoundContext {
  formation: Formation;
  fleet: TallyFleet;
  world: World;
  load: SteadyLoad;
  recorder: FetchRecorder;
  health: ProbeWatch;
  scrape: ProbeWatch;
  progress: Progress;
  say: (line: string) => void;
}

export interface RoundFigures extends LossAndDoubling {
  round: number;
  kill: KillMode;
  killed: string;
  postmasterPid: number;
  /** ms since the epoch, just after the SIGKILL */
  killedAt: number;
  /** the node primary afterwards: the promoted standby, or the killed node restarted in place */
  primaryAfter: string;
  failedOver: boolean;
  secondsUnderLoad: number;
  msKillToPromoted: number | null;
  msKillToFirstSettlement: number | null;
  rejoin: Rejoin;
  settlementsAfterKill: number;
  /** failed client answers from the kill until the load stopped */
  answered503: number;
  /** the same 503s by route: which calls a failover refuses */
  answered503ByRoute: Record<string, number>;
  otherFailures: Record<string, number>;
  failuresBeforeKill: number;
  msHealthzNot200: number;
  msMetricsNot200: number;
  /** since the start: tally_webhooks_total{outcome="error"} on serve, and the 503s the drill's deliveries got */
  webhookErrors: { counter: number | null; seen: number };
  acknowledged: { jobs: number; deliveries: number; credits: number };
  /** ticks of the steady rate that started no job, too many being still in flight (so far) */
  jobsNotStarted: number;
  reconcile: string;
  checks: Check[];
  ok: boolean;
  messages: MessageSeen[];
  events: MonitorEvent[];
}

/** Settlements each side of the kill, so that both primaries demonstrably settled under the load. */
const SETTLEMENTS_BEFORE_KILL = 20;
const SETTLEMENTS_AFTER_KILL = 20;

export async function runRound(round: number, ctx: RoundContext, options: RoundOptions): Promise<RoundFigures> {
  const { formation, fleet, load, recorder, health, progress, say } = ctx;
  const crashed = () => fleet.crashed()[0] ?? null;
  say(`round ${round}: waiting for the formation to be whole (one primary, one synchronous secondary)`);
  await formation.waitWhole(180_000);
  const old = await formation.primary();
  const oldDb = nodePool(old.port);
  const startedAt = Date.now();
  load.start();
  progress.start(`round ${round} warm-up`);
  say(
    `round ${round}: load running on ${old.name}; SIGKILL (${options.kill}) after ${options.warmupSeconds} s and ${SETTLEMENTS_BEFORE_KILL} settlements`,
  );
  await waitFor(
    'warm-up settlements',
    async () =>
      Date.now() - startedAt >= options.warmupSeconds * 1000 &&
      (await settlementsSince(oldDb, new Date(startedAt))).count >= SETTLEMENTS_BEFORE_KILL,
    120_000,
    200,
    crashed,
  ).finally(() => oldDb.end());

  const watch = new FailoverWatch(formation.monitor, old.name);
  watch.start();
  try {
    const killed = formation.kill(old, options.kill);
    const killedAt = Date.now();
    progress.set(`round ${round} after the kill`);
    say(
      `round ${round}: SIGKILL → ${old.name}'s postmaster (pid ${killed.postmasterPid})` +
        (killed.keeperPids.length > 0 ? ` and its pg_autoctl (pids ${killed.keeperPids.join(', ')})` : '') +
        '; pg_auto_failover decides what happens next',
    );
    const outcome = await awaitOutcome(formation, watch, old, killed, options.kill, killedAt);
    say(
      outcome.failedOver
        ? `round ${round}: ${outcome.primary.name} promoted by pg_auto_failover ${watch.promotedAt! - killedAt} ms after the kill; the load goes on`
        : `round ${round}: no failover — ${old.name}'s pg_autoctl restarted PostgreSQL in place (crash recovery) and it is still the primary`,
    );
    const db = nodePool(outcome.primary.port);
    try {
      await waitFor(
        'settlements after the kill',
        async () =>
          Date.now() - killedAt >= options.afterSeconds * 1000 &&
          (await settlementsSince(db, new Date(killedAt))).count >= SETTLEMENTS_AFTER_KILL,
        120_000,
        200,
        crashed,
      );
      progress.set(`round ${round} stopping the load`);
      await load.stop();
      const stoppedAt = Date.now();
      progress.stop();
      say(
        `round ${round}: load stopped after ${((stoppedAt - startedAt) / 1000).toFixed(1)} s; settling and checking on ${outcome.primary.name}`,
      );
      const { checks, figures, reconcile } = await verifyRound(db, ctx.world, fleet, load);
      const first = await settlementsSince(db, new Date(killedAt));
      const during = recorder.between(killedAt, stoppedAt);
      const otherFailures: Record<string, number> = {};
      for (const f of during.filter((f) => f.status !== 503)) {
        const key = f.status === 0 ? `refused (${f.code})` : `${f.status} ${f.code}`;
        otherFailures[key] = (otherFailures[key] ?? 0) + 1;
      }
      say(`round ${round}: checks done; bringing ${old.name} back as a standby`);
      const rejoin = await bringBack(formation, watch, old, outcome, killedAt);
      const logs = fleet.processes.map((p) => ({ name: p.name, path: p.logPath }));
      return {
        round,
        kill: options.kill,
        killed: old.name,
        postmasterPid: killed.postmasterPid,
        killedAt,
        primaryAfter: outcome.primary.name,
        failedOver: outcome.failedOver,
        secondsUnderLoad: (stoppedAt - startedAt) / 1000,
        msKillToPromoted: watch.promotedAt === null ? null : watch.promotedAt - killedAt,
        msKillToFirstSettlement: first.first ? first.first.getTime() - killedAt : null,
        rejoin,
        settlementsAfterKill: first.count,
        answered503: during.filter((f) => f.status === 503).length,
        answered503ByRoute: countByRoute(during.filter((f) => f.status === 503)),
        otherFailures,
        failuresBeforeKill: recorder.between(startedAt, killedAt).length,
        msHealthzNot200: health.unhealthyMs(killedAt, stoppedAt),
        msMetricsNot200: ctx.scrape.unhealthyMs(killedAt, stoppedAt),
        webhookErrors: {
          counter: await webhookErrorsCounted(fleet.baseUrl),
          seen: recorder.between(0).filter((f) => f.status === 503 && f.what.startsWith('POST /v1/webhooks/')).length,
        },
        acknowledged: { jobs: load.jobs.length, deliveries: load.deliveries.size, credits: load.credits.length },
        jobsNotStarted: load.skippedTicks,
        reconcile,
        checks,
        ok: checks.every((c) => c.ok),
        messages: await messagesBetween(logs, killedAt - 1_000, stoppedAt),
        events: await formation.monitor.eventsSince(new Date(killedAt - 1_000)),
        ...figures,
      };
    } finally {
      await db.end();
    }
  } finally {
    watch.stop();
    progress.stop();
  }
}
