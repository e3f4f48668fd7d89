import type { Queryable } from '../../src/db/pool.js';

/**
 * What the database holds, in one round trip: a row count per table, and a fingerprint
 * of the rows a refused request could only change by updating them (providers' secrets,
 * a job's ref or state, an account's projections, an event's state). Taken before and
 * after each fuzzed request, it says exactly which request stored or billed something.
 */
export const COUNTED_TABLES = [
  'tenants',
  'api_keys',
  'providers',
  'price_versions',
  'accounts',
  'jobs',
  'holds',
  'settlements',
  'ledger_entries',
  'webhook_events',
  'delivery_attempts',
  'alerts',
  'idempotency_keys',
  'provider_usage',
  'reconciliation_runs',
  'reconciliation_exceptions',
] as const;

const FINGERPRINTS = {
  providers_rows: `select md5(coalesce(string_agg(t::text, '|' order by name), '')) from providers t`,
  jobs_rows: `select md5(coalesce(string_agg(t::text, '|' order by id), '')) from jobs t`,
  accounts_rows: `select md5(coalesce(string_agg(t::text, '|' order by id), '')) from accounts t`,
  holds_rows: `select md5(coalesce(string_agg(t::text, '|' order by job_id), '')) from holds t`,
  events_rows: `select md5(coalesce(string_agg(concat_ws(',', provider, event_key, state, attempts, reason, run_after), '|' order by provider, event_key), '')) from webhook_events`,
  exceptions_rows: `select md5(coalesce(string_agg(t::text, '|' order by id), '')) from reconciliation_exceptions t`,
} as const;

export type Snapshot = Record<(typeof COUNTED_TABLES)[number] | keyof typeof FINGERPRINTS, string>;

const SNAPSHOT_SQL = `select ${[
  ...COUNTED_TABLES.map((t) => `(select count(*) from ${t})::text as ${t}`),
  ...Object.entries(FINGERPRINTS).map(([name, sql]) => `(${sql}) as ${name}`),
].join(',\n')}`;

export async function snapshot(db: Queryable): Promise<Snapshot> {
  const result = await db.query<Snapshot>(SNAPSHOT_SQL);
  return result.rows[0]!;
}

/**
 * Snapshots that skip the full query while the database has written nothing: every
 * change to a (logged) table advances the WAL insert position, so an unchanged
 * position proves an unchanged snapshot. When it moved (a write, a rolled-back write,
 * or background work), the full snapshot is taken.
 */
export class Snapshots {
  private last: { lsn: string; snapshot: Snapshot } | null = null;
  constructor(private readonly db: Queryable) {}

  async take(): Promise<Snapshot> {
    const lsn = (await this.db.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn')).rows[0]!.lsn;
    if (this.last?.lsn === lsn) return this.last.snapshot;
    const taken = await snapshot(this.db);
    this.last = { lsn, snapshot: taken };
    return taken;
  }
}

/** The entries of `after` that differ from `before`: {name: "before → after"}. */
export function changes(before: Snapshot, after: Snapshot): Record<string, string> {
  const diff: Record<string, string> = {};
  for (const name of Object.keys(before) as (keyof Snapshot)[]) {
    if (before[name] !== after[name]) diff[name] = `${before[name]} → ${after[name]}`;
  }
  return diff;
}
