import type { Queryable } from '../db/pool.js';
import { newId } from '../ids.js';

export type AccountKind = 'wallet' | SystemAccountKind;
/** the tenant's accounts outside its wallets, per currency: money comes from funding, goes to revenue, and lapsed credit to breakage */
export type SystemAccountKind = 'funding' | 'revenue' | 'breakage';

export interface AccountRow {
  id: string;
  tenant_id: string;
  currency: string;
  kind: AccountKind;
  /** a wallet's labels from its tenant; {} on system accounts */
  metadata: Record<string, string>;
  debits_pending: bigint;
  debits_posted: bigint;
  credits_pending: bigint;
  credits_posted: bigint;
  created_at: Date;
}

/** CONTRACT.md: balance = posted credits − posted debits; reserved = open holds. */
export interface WalletBalances {
  balance: bigint;
  reserved: bigint;
  available: bigint;
}

export function walletBalances(row: Pick<AccountRow, 'debits_pending' | 'debits_posted' | 'credits_posted'>): WalletBalances {
  const balance = row.credits_posted - row.debits_posted;
  return { balance, reserved: row.debits_pending, available: balance - row.debits_pending };
}

/**
 * The tenant's funding, revenue and breakage accounts for a currency, created on first use.
 * Per tenant, so no global row serialises every capture in the system.
 */
export async function ensureSystemAccounts(tx: Queryable, tenantId: string, currency: string): Promise<void> {
  await tx.query(
    `insert into accounts (id, tenant_id, currency, kind)
     values ($1, $4, $5, 'funding'), ($2, $4, $5, 'revenue'), ($3, $4, $5, 'breakage')
     on conflict on constraint accounts_tenant_currency_kind_key do nothing`,
    [newId(), newId(), newId(), tenantId, currency],
  );
}

/**
 * The ids of the tenant's system accounts of `kinds` in the currency; a breakage account
 * opened before grants existed is created here, on its first use.
 */
export async function systemAccountIds(
  tx: Queryable,
  tenantId: string,
  currency: string,
  kinds: readonly SystemAccountKind[],
): Promise<Partial<Record<SystemAccountKind, string>>> {
  if (kinds.length === 0) return {};
  if (kinds.includes('breakage')) await ensureSystemAccounts(tx, tenantId, currency);
  const result = await tx.query<{ id: string; kind: SystemAccountKind }>(
    'select id, kind from accounts where tenant_id = $1 and currency = $2 and kind = any($3::text[])',
    [tenantId, currency, kinds],
  );
  return Object.fromEntries(result.rows.map((r) => [r.kind, r.id]));
}

/** Raises UniqueViolation on accounts_tenant_currency_kind_key when the wallet exists. */
export async function insertWallet(
  tx: Queryable,
  tenantId: string,
  currency: string,
  metadata: Record<string, string> = {},
): Promise<AccountRow> {
  await ensureSystemAccounts(tx, tenantId, currency);
  const result = await tx.query<AccountRow>(
    `insert into accounts (id, tenant_id, currency, kind, metadata) values ($1, $2, $3, 'wallet', $4) returning *`,
    [newId(), tenantId, currency, JSON.stringify(metadata)],
  );
  return result.rows[0]!;
}

export async function findWallet(db: Queryable, walletId: string, tenantId?: string): Promise<AccountRow | null> {
  const result = await db.query<AccountRow>(
    `select * from accounts where id = $1 and kind = 'wallet' and ($2::uuid is null or tenant_id = $2)`,
    [walletId, tenantId ?? null],
  );
  return result.rows[0] ?? null;
}

export async function findSystemAccountId(
  db: Queryable,
  tenantId: string,
  currency: string,
  kind: 'funding' | 'revenue',
): Promise<string | null> {
  const result = await db.query<{ id: string }>({
    name: 'find_system_account',
    text: 'select id from accounts where tenant_id = $1 and currency = $2 and kind = $3',
    values: [tenantId, currency, kind],
  });
  return result.rows[0]?.id ?? null;
}
