import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { runPgbench } from './tpcb-pgbench.js';
import { runBuiltinTpcb } from './tpcb-node.js';
import type { TpcbResult, TpcbRun } from './tpcb-spec.js';

/**
 * The bench's limit: pgbench's TPC-B ("tpcb-like", the built-in script pgbench runs with
 * default settings) on the bench's own server in the same run — the figure issue 16
 * compares Tally against (jobs settled / s ≥ 1.0× its tps, deliveries accepted / s ≥ 3×).
 *
 * Scale 1 (1 branch, 10 tellers, 100,000 accounts, as `pgbench -i -s 1`), simple query
 * mode (pgbench's default), one client per connection Tally's workers use (workers ×
 * worker concurrency, as the minimal-transaction limit always did), and a thread per CPU.
 * At scale 1 every transaction updates the one branch row, so commits serialise on it:
 * that is TPC-B at the scale the reference figure was taken at, not a tuning choice.
 *
 * The real pgbench runs when one is found; the project never requires it. Without one,
 * a built-in equivalent (node-postgres) sends the same seven statements on the same
 * tables; the report says which ran.
 */

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The pgbench to run, or null. BENCH_PGBENCH=none forces the built-in equivalent,
 * BENCH_PGBENCH=/path a given binary; otherwise PATH, then Debian's and Ubuntu's
 * /usr/lib/postgresql/<version>/bin (newest first), where the client package puts it.
 */
export function findPgbench(env: NodeJS.ProcessEnv = process.env): string | null {
  const chosen = env['BENCH_PGBENCH'];
  if (chosen === 'none') return null;
  if (chosen) {
    if (!isExecutable(chosen)) throw new Error(`BENCH_PGBENCH=${chosen} is not an executable file (use BENCH_PGBENCH=none for the built-in TPC-B)`);
    return chosen;
  }
  for (const dir of (env['PATH'] ?? '').split(delimiter).filter(Boolean)) {
    if (isExecutable(join(dir, 'pgbench'))) return join(dir, 'pgbench');
  }
  let versions: string[] = [];
  try {
    versions = readdirSync('/usr/lib/postgresql').filter((v) => /^\d+(\.\d+)?$/.test(v));
  } catch {
    return null;
  }
  for (const version of versions.sort((a, b) => Number(b) - Number(a))) {
    const path = join('/usr/lib/postgresql', version, 'bin', 'pgbench');
    if (isExecutable(path)) return path;
  }
  return null;
}

export async function measureTpcb(run: TpcbRun, pgbench: string | null = findPgbench()): Promise<TpcbResult> {
  return pgbench ? runPgbench(pgbench, run) : runBuiltinTpcb(run);
}
