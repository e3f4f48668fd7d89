import type pg from 'pg';
import { lostAndDoubled, type Check, type LossAndDoubling } from './checks.js';
import { ledgerInvariants, reconcileClean, walletsMatch, workersOnPrimary } from './ledger-checks.js';
import type { SteadyLoad } from './load.js';
import { waitFor } from './processes.js';
import { waitForSettled } from './settled.js';
import { LISTENING_WORKERS_SQL, type TallyFleet } from './tally-fleet.js';
import type { World } from './world.js';

/**
 * Every check of a round, on the primary after the kill, once the load has stopped and
 * the workers have settled everything acknowledged (since the first round: the wallets
 * carry every round's money).
 */
export async function verifyRound(
  db: pg.Pool,
  world: World,
  fleet: TallyFleet,
  load: SteadyLoad,
): Promise<{ checks: Check[]; figures: LossAndDoubling; reconcile: string }> {
  await waitForSettled(
    db,
    load.jobs.map((j) => j.id),
    120_000,
  );
  // Workers find the new primary by themselves; their LISTEN connection follows within a poll or two.
  await waitFor(
    'both workers listening on the new primary',
    async () => (await db.query<{ n: number }>(LISTENING_WORKERS_SQL)).rows[0]!.n >= 2,
    30_000,
  ).catch(() => {});
  const { checks, figures } = await lostAndDoubled(db, world.provider, load);
  const reconcile = await reconcileClean(fleet.databaseUrl);
  checks.push(
    await walletsMatch(world, load),
    ...(await ledgerInvariants(db)),
    await workersOnPrimary(db),
    reconcile,
    {
      name: 'every client call answered as a correct client expects',
      ok: load.refusals.length === 0,
      detail: load.refusals.slice(0, 3).join('; ') || 'yes',
    },
    { name: 'no tally process died', ok: fleet.crashed().length === 0, detail: fleet.crashed().join('; ').slice(0, 300) || 'none' },
  );
  return { checks, figures, reconcile: reconcile.detail };
}
