import { lostAndDoubled, type Check, type LossAndDoubling } from './checks.js';
import { FailoverWatch } from './failover-watch.js';
import type { FetchRecorder } from './fetch-recorder.js';
import type { Formation } from './formation.js';
import type { HealthWatch } from './health-watch.js';
import { ledgerInvariants, reconcileClean, walletsMatch, workersOnPrimary } from './ledger-checks.js';
import type { SteadyLoad } from './load.js';
import { messagesBetween, type MessageSeen } from './log-lines.js';
import type { MonitorEvent } from './monitor-state.js';
import { nodePool } from './node-db.js';
import { waitFor } from './processes.js';
import type { Progress } from './progress.js';
import { settlementsSince, waitForSettled } from './settled.js';
import { LISTENING_WORKERS_SQL, type TallyFleet } from './tally-fleet.js';
import type { World } from './world.js';

/**
 * One failover under load, start to finish: the formation whole (primary + synchronous
 * standby), the load started, warmed up, the primary's postmaster SIGKILLed,
 * pg_auto_failover left to promote the standby (nothing here promotes), the load kept
 * running on the new primary, then stopped, everything settled, and every check made on
 * the new primary. The next round kills the new primary in turn: the failback.
 */

export interface RoundOptions {
  warmupSeconds: number;
  afterSeconds: number;
}

export interface RoundContext {
  formation: Formation;
  fleet: TallyFleet;
  world: World;
  load: SteadyLoad;
  recorder: FetchRecorder;
  health: HealthWatch;
  progress: Progress;
  say: (line: string) => void;
}

export interface RoundFigures extends LossAndDoubling {
  round: number;
  killed: string;
  postmasterPid: number;
  /** ms since the epoch, just after the SIGKILL */
  killedAt: number;
  promoted: string;
  secondsUnderLoad: number;
  msKillToPromoted: number | null;
  msKillToFirstSettlement: number | null;
  msKillToWhole: number | null;
  settlementsOnNewPrimary: number;
  /** failed client answers from the kill until the load stopped */
  answered503: number;
  otherFailures: Record<string, number>;
  failuresBeforeKill: number;
  msHealthzNot200: number;
  acknowledged: { jobs: number; deliveries: number; credits: number };
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
  say(`round ${round}: waiting for the formation to be whole (one primary, one synchronous secondary)`);
  await formation.waitWhole(180_000);
  const old = await formation.primary();
  const oldDb = nodePool(old.port);
  const startedAt = Date.now();
  load.start();
  progress.start(`round ${round} warm-up`);
  say(
    `round ${round}: load running on ${old.name}; killing its postmaster after ${options.warmupSeconds} s and ${SETTLEMENTS_BEFORE_KILL} settlements`,
  );
  await waitFor(
    'warm-up settlements',
    async () =>
      Date.now() - startedAt >= options.warmupSeconds * 1000 &&
      (await settlementsSince(oldDb, new Date(startedAt))).count >= SETTLEMENTS_BEFORE_KILL,
    120_000,
    200,
    () => fleet.crashed()[0] ?? null,
  );
  await oldDb.end();

  const watch = new FailoverWatch(formation.monitor, old.name);
  watch.start();
  const postmasterPid = formation.killPostmaster(old);
  const killedAt = Date.now();
  progress.set(`round ${round} after the kill`);
  say(`round ${round}: SIGKILL → ${old.name}'s postmaster (pid ${postmasterPid}); pg_auto_failover decides what happens next`);
  await waitFor(`a node other than ${old.name} promoted`, async () => watch.promotedNode !== null, 120_000, 50).catch((error: Error) => {
    watch.stop();
    throw error;
  });
  const promoted = formation.byName(watch.promotedNode!);
  const newDb = nodePool(promoted.port);
  try {
    say(`round ${round}: ${promoted.name} promoted by pg_auto_failover ${watch.promotedAt! - killedAt} ms after the kill; load goes on`);
    await waitFor(
      'settlements on the new primary',
      async () =>
        Date.now() - killedAt >= options.afterSeconds * 1000 &&
        (await settlementsSince(newDb, new Date(killedAt))).count >= SETTLEMENTS_AFTER_KILL,
      120_000,
      200,
      () => fleet.crashed()[0] ?? null,
    );
    progress.set(`round ${round} stopping the load`);
    await load.stop();
    const stoppedAt = Date.now();
    progress.stop();
    say(
      `round ${round}: load stopped after ${((stoppedAt - startedAt) / 1000).toFixed(1)} s; waiting for the workers to settle everything acknowledged`,
    );
    await waitForSettled(
      newDb,
      load.jobs.map((j) => j.id),
      120_000,
    );
    await waitFor(
      'both workers listening on the new primary',
      async () => (await newDb.query<{ n: number }>(LISTENING_WORKERS_SQL)).rows[0]!.n >= 2,
      30_000,
    ).catch(() => {});

    const { checks, figures } = await lostAndDoubled(newDb, ctx.world.provider, load);
    const reconcile = await reconcileClean(fleet.databaseUrl);
    const first = await settlementsSince(newDb, new Date(killedAt));
    checks.push(
      await walletsMatch(ctx.world, load),
      ...(await ledgerInvariants(newDb)),
      await workersOnPrimary(newDb),
      reconcile,
      {
        name: 'every client call answered as a correct client expects',
        ok: load.refusals.length === 0,
        detail: load.refusals.slice(0, 3).join('; ') || 'yes',
      },
      { name: 'no tally process died', ok: fleet.crashed().length === 0, detail: fleet.crashed().join('; ').slice(0, 300) || 'none' },
    );
    const during = recorder.between(killedAt, stoppedAt);
    const otherFailures: Record<string, number> = {};
    for (const f of during.filter((f) => f.status !== 503))
      otherFailures[f.status === 0 ? 'refused' : String(f.status)] =
        (otherFailures[f.status === 0 ? 'refused' : String(f.status)] ?? 0) + 1;
    // The old primary's way back (rewind, catch up, secondary) may still be running: give it a moment.
    await waitFor('the old primary back as a secondary', async () => watch.wholeAt !== null, 60_000).catch(() => {});
    watch.stop();
    const logs = fleet.processes.map((p) => ({ name: p.name, path: p.logPath }));
    return {
      round,
      killed: old.name,
      postmasterPid,
      killedAt,
      promoted: promoted.name,
      secondsUnderLoad: (stoppedAt - startedAt) / 1000,
      msKillToPromoted: watch.promotedAt === null ? null : watch.promotedAt - killedAt,
      msKillToFirstSettlement: first.first ? first.first.getTime() - killedAt : null,
      msKillToWhole: watch.wholeAt === null ? null : watch.wholeAt - killedAt,
      settlementsOnNewPrimary: first.count,
      answered503: during.filter((f) => f.status === 503).length,
      otherFailures,
      failuresBeforeKill: recorder.between(startedAt, killedAt).length,
      msHealthzNot200: health.unhealthyMs(killedAt, stoppedAt),
      acknowledged: { jobs: load.jobs.length, deliveries: load.deliveries.size, credits: load.credits.length },
      reconcile: reconcile.detail,
      checks,
      ok: checks.every((c) => c.ok),
      messages: await messagesBetween(logs, killedAt - 1_000, stoppedAt),
      events: await formation.monitor.eventsSince(new Date(killedAt - 1_000)),
      ...figures,
    };
  } finally {
    watch.stop();
    progress.stop();
    await newDb.end();
  }
}
