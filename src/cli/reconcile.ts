import { openDatabase } from '../db/connect.js';
import { debugStacks, processConfig } from '../config/index.js';
import { migrate } from '../db/migrate.js';
import { reconcile, type ReconciliationRun } from '../reconcile/run.js';
import { repairSettings } from '../reconcile/repair.js';
import { reconcileProgress } from './reconcile-progress.js';

/** Exit status when the run itself failed (database unreachable, …): neither clean nor "exceptions found". */
export const RECONCILE_FAILED_EXIT_CODE = 2;

/** Checks a run makes at once (the pool below has room for them). */
const RECONCILE_CONCURRENCY = 2;

/**
 * Exit 0 when clean, 1 when exceptions were found (CONTRACT.md). A run that could not
 * be made at all exits 2, so a scheduler never mistakes an outage for a finding, or a
 * finding for an outage.
 */
export async function reconcileCommand(options: { json?: boolean; repair?: boolean }): Promise<void> {
  let run: ReconciliationRun;
  try {
    const config = processConfig();
    const db = await openDatabase(config, { max: 4 });
    try {
      await migrate(db.pool);
      const progress = reconcileProgress();
      try {
        // Two checks at a time: the run is CPU-bound in PostgreSQL, and one query uses
        // one core when the planner does not parallelise it.
        run = await reconcile(db.pool, {
          repair: options.repair ?? false,
          repairWith: repairSettings(config),
          onCheck: (p) => progress.onCheck(p),
          concurrency: RECONCILE_CONCURRENCY,
        });
      } finally {
        progress.stop();
      }
    } finally {
      await db.close();
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    console.error(`tally reconcile: the run failed, nothing was checked: ${message}`);
    if (debugStacks() && error instanceof Error) console.error(error.stack);
    process.exitCode = RECONCILE_FAILED_EXIT_CODE;
    return;
  }
  if (options.json) {
    console.log(JSON.stringify(run, null, 2));
  } else {
    printRun(run);
  }
  process.exitCode = run.clean ? 0 : 1;
}

function printRun(run: ReconciliationRun): void {
  for (const repair of run.repairs) console.log(`repaired ${repair.fingerprint}: ${repair.action} → ${repair.result}`);
  if (run.clean) {
    console.log(
      `reconciliation ${run.id}: clean${run.resolved_exceptions.length ? ` (${run.resolved_exceptions.length} reviewed exceptions)` : ''}`,
    );
    return;
  }
  console.log(`reconciliation ${run.id}: ${run.exceptions.length} exception(s)`);
  for (const e of run.exceptions) {
    console.log(`  ${e.class.padEnd(32)} ${JSON.stringify(e.objects)}  ${JSON.stringify(e.detail)}  [${e.id}]`);
  }
  console.log(
    'Repairable classes (event_stuck, event_dead, hold_open_past_expiry, projection_drift, grant_expiry_overdue): run with --repair.',
  );
  console.log('A dead event whose error is permanent: tally discard PROVIDER EVENT_KEY --note "..." lets its hold be released.');
  console.log('Others need review; resolve with POST /v1/reconciliation/exceptions/{id}/resolve.');
}
