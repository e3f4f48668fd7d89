import type { Queryable } from '../db/pool.js';
import { keyset, type PageRequest } from '../db/keyset.js';
import { grantStatus, grantStatusSql, type GrantStatus } from './grant-status.js';
import type { GrantSource } from './grants.js';
import { fundingByGrant, type GrantCategory } from './posting/index.js';

/**
 * The read models of grants, apart from their writers: one grant, a wallet's
 * grants page by page, a job's funding. Amounts are the stored values, never added up
 * here (the wallet's totals are funds/posting walletTotals'). Each read takes the
 * database's clock in the same statement, and the status is decided at that instant
 * (grant-status.ts).
 */

/** A grant as the API shows it; instants are RFC 3339 in UTC to the microsecond. */
export interface GrantRecord {
  id: string;
  tenant_id: string;
  wallet_id: string;
  currency: string;
  category: GrantCategory;
  priority: number;
  amount: bigint;
  remaining: bigint;
  held: bigint;
  status: GrantStatus;
  source: GrantSource;
  effective_at: string;
  expires_at: string | null;
  expired_amount: bigint;
  voided_amount: bigint;
  payment: Record<string, unknown> | null;
  reference: string | null;
  metadata: Record<string, string>;
  created_at: string;
}

interface GrantReadRow extends Omit<GrantRecord, 'status'> {
  activated: boolean;
  voided: boolean;
  canceled: boolean;
  disputed: boolean;
  expiry_posted: boolean;
  expires_at_us: string | null;
  now_us: string;
}

const INSTANT = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
const MICROS = (column: string) => `(extract(epoch from ${column}) * 1000000)::bigint::text`;

/** The columns of a GrantReadRow, over `grants g` and `clock` (the statement's one reading of the clock). */
const COLUMNS = `g.id, g.tenant_id, g.wallet_id, g.currency, g.category, g.priority, g.amount, g.remaining, g.held, g.source,
  ${INSTANT('g.effective_at')} as effective_at, ${INSTANT('g.expires_at')} as expires_at, ${INSTANT('g.created_at')} as created_at,
  g.expired_amount, g.voided_amount, g.payment, g.reference, g.metadata,
  g.activated_at is not null as activated, g.voided_at is not null as voided, g.canceled_at is not null as canceled,
  g.disputed, g.expiry_posted_at is not null as expiry_posted,
  ${MICROS('g.expires_at')} as expires_at_us, ${MICROS('clock.now')} as now_us`;

function recordOf(row: GrantReadRow): GrantRecord {
  const { activated, voided, canceled, disputed, expiry_posted, expires_at_us, now_us, ...fields } = row;
  const status = grantStatus(
    {
      source: row.source,
      activated,
      voided,
      canceled,
      disputed,
      expiryPosted: expiry_posted,
      expiresAt: expires_at_us === null ? null : BigInt(expires_at_us),
      remaining: row.remaining,
    },
    BigInt(now_us),
  );
  return { ...fields, status };
}

/** A grant by id; with `tenantId`, only that tenant's (null for anyone else's, as for an unknown one). */
export async function readGrant(db: Queryable, id: string, tenantId: string | null = null): Promise<GrantRecord | null> {
  const result = await db.query<GrantReadRow>({
    name: 'read_grant',
    text: `with clock as (select clock_timestamp() as now)
      select ${COLUMNS} from grants g, clock where g.id = $1 and ($2::uuid is null or g.tenant_id = $2)`,
    values: [id, tenantId],
  });
  const row = result.rows[0];
  return row ? recordOf(row) : null;
}

/** What GET /v1/wallets/{id}/grants may be narrowed by; null means "any". */
export interface GrantListFilter {
  status: GrantStatus | null;
  category: GrantCategory | null;
}

/**
 * One page of a wallet's grants, newest first, `limit + 1` rows for pageOf. The order is
 * (created_at, id): ids are UUIDv7 except the opening grant of a wallet from before
 * grants (migration 0019), which is dated to the wallet's creation. Null when the cursor
 * names no grant of this wallet. The status filter is the same rules in SQL, at the
 * statement's instant.
 */
export async function listWalletGrants(
  db: Queryable,
  walletId: string,
  filter: GrantListFilter,
  page: PageRequest,
): Promise<GrantRecord[] | null> {
  let position: string[] = [];
  if (page.cursor) {
    const found = await db.query<{ created_at: string; id: string }>(
      `select ${INSTANT('created_at')} as created_at, id from grants where id = $1 and wallet_id = $2`,
      [page.cursor.id, walletId],
    );
    if (!found.rows[0]) return null;
    position = [found.rows[0].created_at, found.rows[0].id];
  }
  const values: unknown[] = [page.limit + 1, walletId, filter.status, filter.category];
  const { where, order } = keyset(['g.created_at', 'g.id'], page, values.length + 1);
  values.push(...position);
  const result = await db.query<GrantReadRow>(
    `with clock as (select clock_timestamp() as now)
     select ${COLUMNS} from grants g, clock
     where g.wallet_id = $2
       and ($3::text is null or ${grantStatusSql('g', 'clock.now')} = $3)
       and ($4::text is null or g.category = $4)
       and ${where}
     order by ${order}
     limit $1`,
    values,
  );
  return result.rows.map(recordOf);
}

/** One grant's part in a job: its hold's share and the job's adjustments on it (posting/job-funding.ts). */
export interface FundingShare {
  grant_id: string;
  category: GrantCategory;
  held: bigint;
  captured: bigint;
  returned: bigint;
  refunded: bigint;
  /** signed: what the job's adjustments drew from the grant, less what its refunds gave back */
  adjusted: bigint;
}

export interface JobFundingView {
  /** the hold's shares in allocation order, then the grants only adjustments reached */
  shares: FundingShare[];
  /** the adjustments' part no grant covered (the wallet's debt), net of refunds */
  debt: bigint;
}

/** A job's money per grant: the rows are loaded here, combined by the posting module's fundingByGrant. */
export async function readJobFunding(db: Queryable, jobId: string): Promise<JobFundingView> {
  const shares = await db.query<{ grant_id: string; held: string; captured: string; returned: string; refunded: string }>({
    name: 'read_job_shares',
    text: 'select grant_id, held, captured, returned, refunded from hold_shares where job_id = $1 order by position',
    values: [jobId],
  });
  const draws = await db.query<{ version: number; grant_id: string | null; amount: string; refunded: string }>({
    name: 'read_job_draws',
    text: 'select version, grant_id, amount, refunded from adjustment_draws where job_id = $1 order by version, position',
    values: [jobId],
  });
  const { rows, debt } = fundingByGrant(
    shares.rows.map((s) => ({
      grantId: s.grant_id,
      held: BigInt(s.held),
      captured: BigInt(s.captured),
      returned: BigInt(s.returned),
      refunded: BigInt(s.refunded),
    })),
    draws.rows.map((d) => ({ version: d.version, grantId: d.grant_id, amount: BigInt(d.amount), refunded: BigInt(d.refunded) })),
  );
  const ids = rows.map((r) => r.grantId);
  const categories = ids.length
    ? await db.query<{ id: string; category: GrantCategory }>('select id, category from grants where id = any($1::uuid[])', [ids])
    : { rows: [] };
  const categoryOf = new Map(categories.rows.map((g) => [g.id, g.category]));
  return {
    shares: rows.map((r) => ({
      grant_id: r.grantId,
      category: categoryOf.get(r.grantId)!,
      held: r.held,
      captured: r.captured,
      returned: r.returned,
      refunded: r.refunded,
      adjusted: r.adjusted,
    })),
    debt,
  };
}
