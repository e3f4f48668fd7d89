import type pg from 'pg';

/**
 * Rows written per table in the window (pg_stat_user_tables): inserts, updates and how
 * many updates were HOT (no index touched), with each table's index count — what a job
 * costs PostgreSQL beyond its round trips: every insert and every non-HOT update adds an
 * entry to each index (partial indexes only when the row matches). Read after Tally's
 * processes stopped, when their backends have flushed their statistics.
 */
export interface TableWrites {
  table: string;
  inserts: number;
  updates: number;
  hotUpdates: number;
  indexes: number;
}

type Snapshot = Map<string, { ins: number; upd: number; hot: number; indexes: number }>;

export async function snapshotTableWrites(pool: pg.Pool): Promise<Snapshot> {
  const { rows } = await pool.query<{ relname: string; ins: string; upd: string; hot: string; indexes: number }>(
    `/* bench */ select t.relname, t.n_tup_ins::text as ins, t.n_tup_upd::text as upd, t.n_tup_hot_upd::text as hot,
            (select count(*)::int from pg_index i where i.indrelid = t.relid) as indexes
     from pg_stat_user_tables t`,
  );
  return new Map(rows.map((r) => [r.relname, { ins: Number(r.ins), upd: Number(r.upd), hot: Number(r.hot), indexes: r.indexes }]));
}

/** The tables written between two snapshots, most rows first; the harness's own reconciliation tables left out. */
export function tableWritesBetween(before: Snapshot, after: Snapshot): TableWrites[] {
  return [...after]
    .filter(([table]) => !table.startsWith('reconcil'))
    .map(([table, a]) => {
      const b = before.get(table) ?? { ins: 0, upd: 0, hot: 0 };
      return { table, inserts: a.ins - b.ins, updates: a.upd - b.upd, hotUpdates: a.hot - b.hot, indexes: a.indexes };
    })
    .filter((t) => t.inserts + t.updates > 0)
    .sort((x, y) => y.inserts + y.updates - (x.inserts + x.updates));
}
