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

/**
 * Inserts the settlements in one statement. A key that exists already — the intended
 * constraint, settlements_settlement_key_key, and only it — is skipped and missing from
 * the answer (the caller decides what that means); any other constraint raises. Returns
 * the inserted rows by key.
 */
export async function insertSettlements(tx: Queryable, rows: readonly NewSettlement[]): Promise<Map<string, SettlementRow>> {
  if (rows.length === 0) return new Map();
  const result = await tx.query<SettlementRow>({
    name: 'insert_settlements',
    text: `insert into settlements (id, settlement_key, tenant_id, job_id, charge_type, version, amount, remainder, snapshot, reason, event_provider, event_key)
     select * from unnest($1::uuid[], $2::text[], $3::uuid[], $4::uuid[], $5::text[], $6::int[], $7::bigint[], $8::bigint[],
                          $9::jsonb[], $10::text[], $11::text[], $12::text[])
     on conflict on constraint settlements_settlement_key_key do nothing
     returning *`,
    values: [
      rows.map(() => newId()),
      rows.map((s) => s.key),
      rows.map((s) => s.tenantId),
      rows.map((s) => s.jobId),
      rows.map((s) => s.chargeType),
      rows.map((s) => s.version),
      rows.map((s) => s.amount.toString()),
      rows.map((s) => (s.remainder ?? 0n).toString()),
      rows.map((s) => (s.snapshot ? JSON.stringify(s.snapshot) : null)),
      rows.map((s) => s.reason ?? null),
      rows.map((s) => s.eventProvider ?? null),
      rows.map((s) => s.eventKey ?? null),
    ],
  });
  return new Map(result.rows.map((r) => [r.settlement_key, r]));
}

/** The settlements with these keys, by key. */
export async function findSettlements(db: Queryable, keys: readonly string[]): Promise<Map<string, SettlementRow>> {
  if (keys.length === 0) return new Map();
  const result = await db.query<SettlementRow>({
    name: 'find_settlements',
    text: 'select * from settlements where settlement_key = any($1::text[])',
    values: [keys],
  });
  return new Map(result.rows.map((r) => [r.settlement_key, r]));
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
