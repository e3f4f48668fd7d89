import type { Queryable } from '../db/pool.js';
import type { ChargeType } from '../lifecycle/index.js';

/** Settlements committed, by charge type (the tally_settlements gauge, read at scrape time). */
export async function countSettlementsByChargeType(db: Queryable): Promise<Map<ChargeType, number>> {
  const rows = await db.query<{ charge_type: ChargeType; n: string }>(
    'select charge_type, count(*)::text as n from settlements group by charge_type',
  );
  return new Map(rows.rows.map((r) => [r.charge_type, Number(r.n)]));
}
