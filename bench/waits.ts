import type pg from 'pg';
import { BENCH_APPLICATION } from './database.js';

/**
 * A sampling profiler of PostgreSQL's side: every 100 ms, what each client backend of
 * the scenario's database is doing (pg_stat_activity). Over a run the shares say where
 * a connection's time goes: running in PostgreSQL, flushing WAL at commit, waiting for a
 * row lock, or waiting for the application (between statements of an open transaction:
 * round trips and Node CPU; between transactions: idle).
 */

const SAMPLE_EVERY_MS = 100;

export interface WaitProfile {
  samples: number;
  /** application → activity → share of that application's backend-samples (0..1) */
  byApplication: Record<string, Record<string, number>>;
  /** application → mean number of its backends seen per sample */
  backends: Record<string, number>;
}

const LOCK_MEANING: Record<string, string> = {
  transactionid: " (a row another transaction updated: waits for its commit)",
  tuple: ' (queued behind another waiter for a row)',
  object: " (e.g. NOTIFY's queue lock, held by a committing transaction)",
};

function activityOf(state: string | null, waitType: string | null, wait: string | null): string {
  if (state === 'idle') return 'idle (no transaction)';
  if (state === 'idle in transaction') return 'in transaction, waiting for the client';
  if (state !== 'active') return state ?? 'unknown';
  if (!waitType) return 'active: on CPU';
  if (waitType === 'IO' && /^WAL/.test(wait ?? '')) return `active: WAL ${wait} (commit flush)`;
  if (waitType === 'LWLock' && /^WAL/.test(wait ?? '')) return `active: LWLock ${wait} (waiting for another's WAL flush)`;
  if (waitType === 'Lock') return `active: Lock ${wait}${LOCK_MEANING[wait ?? ''] ?? ''}`;
  return `active: ${waitType} ${wait}`;
}

export function startWaitSampler(pool: pg.Pool): { stop(): WaitProfile } {
  const counts = new Map<string, Map<string, number>>();
  let samples = 0;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    pool
      .query<{ application_name: string; state: string | null; wait_event_type: string | null; wait_event: string | null }>(
        `/* bench */ select application_name, state, wait_event_type, wait_event from pg_stat_activity
         where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()
           and application_name <> $1`,
        [BENCH_APPLICATION],
      )
      .then((result) => {
        samples++;
        for (const row of result.rows) {
          const app = row.application_name || '(none)';
          const activity = activityOf(row.state, row.wait_event_type, row.wait_event);
          const perApp = counts.get(app) ?? new Map<string, number>();
          perApp.set(activity, (perApp.get(activity) ?? 0) + 1);
          counts.set(app, perApp);
        }
      })
      .catch(() => {})
      .finally(() => (busy = false));
  }, SAMPLE_EVERY_MS);
  return {
    stop() {
      clearInterval(timer);
      const byApplication: WaitProfile['byApplication'] = {};
      const backends: WaitProfile['backends'] = {};
      for (const [app, perApp] of counts) {
        const total = [...perApp.values()].reduce((a, b) => a + b, 0);
        byApplication[app] = Object.fromEntries([...perApp].sort((a, b) => b[1] - a[1]).map(([activity, n]) => [activity, n / total]));
        backends[app] = samples ? total / samples : 0;
      }
      return { samples, byApplication, backends };
    },
  };
}
