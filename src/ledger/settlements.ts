import type { Queryable } from '../db/pool.js';
import { newId } from '../ids.js';
import type { ChargeType } from '../lifecycle/index.js';
import type { PricingSnapshot } from '../pricing/index.js';

export interface SettlementRow {
  id: string;
  settlement_key: string;
  tenant_id: string;
  job_id: string;
  charge_type: ChargeType;
  version: number;
  amount: bigint;
  remainder: bigint;
  snapshot: PricingSnapshot | null;
  reason: string | null;
  event_provider: string | null;
  event_key: string | null;
  created_at: Date;
}

export interface NewSettlement {
  key: string;
  tenantId: string;
  jobId: string;
  chargeType: ChargeType;
  version: number;
  amount: bigint;
  remainder?: bigint;
  snapshot?: PricingSnapshot | null;
  reason?: string | null;
  eventProvider?: string | null;
  eventKey?: string | null;
}

/** Raises UniqueViolation on settlements_settlement_key_key when the effect exists. */
export async function insertSettlement(tx: Queryable, s: NewSettlement): Promise<SettlementRow> {
  const result = await tx.query<SettlementRow>({
    name: 'insert_settlement',
    text: `insert into settlements (id, settlement_key, tenant_id, job_id, charge_type, version, amount, remainder, snapshot, reason, event_provider, event_key)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     returning *`,
    values: [
      newId(),
      s.key,
      s.tenantId,
      s.jobId,
      s.chargeType,
      s.version,
      s.amount.toString(),
      (s.remainder ?? 0n).toString(),
      s.snapshot ? JSON.stringify(s.snapshot) : null,
      s.reason ?? null,
      s.eventProvider ?? null,
      s.eventKey ?? null,
    ],
  });
  return result.rows[0]!;
}

export async function findSettlement(db: Queryable, key: string): Promise<SettlementRow | null> {
  const result = await db.query<SettlementRow>({
    name: 'find_settlement',
    text: 'select * from settlements where settlement_key = $1',
    values: [key],
  });
  return result.rows[0] ?? null;
}

export async function listSettlements(db: Queryable, jobId: string): Promise<SettlementRow[]> {
  const result = await db.query<SettlementRow>('select * from settlements where job_id = $1 order by created_at, id', [jobId]);
  return result.rows;
}
