import type { FailoverWatch } from './failover-watch.js';
import type { DataNode, Formation } from './formation.js';
import { postmasterPidOf, type Killed, type KillMode } from './kill.js';
import { waitFor } from './processes.js';

/**
 * What pg_auto_failover made of the kill — decided by it, only observed here — and the
 * old primary's way back as a standby.
 */

export interface Outcome {
  /** the node Tally must find and write to now */
  primary: DataNode;
  failedOver: boolean;
}

/**
 * With the keeper alive (`postmaster`), a node that is primary again this long after the
 * kill, on a new postmaster, was restarted in place: the monitor fails over within a few
 * seconds of hearing "not running", or not at all.
 */
const IN_PLACE_AFTER_MS = 10_000;

export async function awaitOutcome(
  formation: Formation,
  watch: FailoverWatch,
  old: DataNode,
  killed: Killed,
  mode: KillMode,
  killedAt: number,
): Promise<Outcome> {
  let inPlace = false;
  await waitFor(
    mode === 'node'
      ? `pg_auto_failover promoting a node other than ${old.name}`
      : `pg_auto_failover failing over, or ${old.name} restarted in place`,
    async () => {
      if (watch.promotedNode !== null) return true;
      if (mode === 'node' || Date.now() - killedAt < IN_PLACE_AFTER_MS) return false;
      const restarted = postmasterPidOf(old.pgdata);
      const state = (await formation.monitor.nodes()).find((n) => n.name === old.name);
      inPlace =
        restarted !== null &&
        restarted !== killed.postmasterPid &&
        state?.reportedState === 'primary' &&
        state.goalState === 'primary' &&
        state.pgIsRunning;
      return inPlace;
    },
    180_000,
    50,
  );
  if (watch.promotedNode !== null) return { primary: formation.byName(watch.promotedNode), failedOver: true };
  return { primary: old, failedOver: false };
}

export interface Rejoin {
  ms: number | null;
  /** what `ms` counts from: the kill (its keeper lived and brought it back), or its keeper's restart */
  from: 'kill' | 'keeper restart' | 'not needed';
}

/**
 * The old primary back as a synchronous standby. A node killed whole gets its
 * `pg_autoctl run` started again (its machine is back); pg_auto_failover has it rewind
 * and catch up. A node whose keeper lived comes back on its own.
 */
export async function bringBack(
  formation: Formation,
  watch: FailoverWatch,
  old: DataNode,
  outcome: Outcome,
  killedAt: number,
): Promise<Rejoin> {
  if (!outcome.failedOver) {
    await formation.waitWhole(120_000);
    return { ms: null, from: 'not needed' };
  }
  if (!old.keeper.running()) {
    const restartedAt = Date.now();
    formation.restartKeeper(old);
    // pg_rewind, or when it cannot be used a full pg_basebackup, which starts with a
    // spread checkpoint on the primary: minutes, not seconds.
    await formation.waitWhole(420_000);
    return { ms: Date.now() - restartedAt, from: 'keeper restart' };
  }
  await waitFor(`${old.name} back as a secondary`, async () => watch.wholeAt !== null, 420_000);
  return { ms: watch.wholeAt! - killedAt, from: 'kill' };
}
