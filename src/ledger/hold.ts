import type { Queryable } from '../db/pool.js';
import { tenantRuns } from '../db/tenant-groups.js';
import { holdKey } from '../lifecycle/index.js';
import { InsufficientFunds, WalletNotFound, applyPostings, findSystemAccountId, lockWalletFunds } from '../funds/index.js';
import { NO_FUNDING, post } from '../funds/posting/index.js';

export interface HoldRow {
  job_id: string;
  tenant_id: string;
  wallet_id: string;
  revenue_account_id: string;
  currency: string;
  amount: bigint;
  pending_entry_id: string | null;
  posted: bigint | null;
  voided: bigint | null;
  resolved_by: string | null;
  resolved_at: Date | null;
  expires_at: Date;
}

export interface ReserveRequest {
  jobId: string;
  tenantId: string;
  walletId: string;
  currency: string;
  amount: bigint;
  expiresAt: Date;
}

/**
 * The only place funds are checked. The wallet is locked with its grants
 * (wallet-funds.ts) and the posting module splits the hold across the fundable grants in
 * draw-down order, or refuses it: InsufficientFunds, and the caller's transaction (which
 * inserted the job) rolls back, so nothing is written. The lock also checks that the
 * wallet is the tenant's, in the job's currency: the schema's foreign key only says the
 * account exists, and a hold on another tenant's wallet would move money across tenants.
 * The entries' statement checks the tenant's spend limits (wallet-entries.ts).
 */
export async function reserveHold(tx: Queryable, request: ReserveRequest): Promise<HoldRow> {
  // Opening a wallet creates the tenant's system accounts in its currency: none, no such wallet.
  const revenue = await findSystemAccountId(tx, request.tenantId, request.currency, 'revenue');
  if (revenue === null) throw new WalletNotFound(request.walletId);
  const locked = await lockWalletFunds(tx, request.walletId, [], { tenantId: request.tenantId, currency: request.currency });
  if (locked === null) throw new WalletNotFound(request.walletId);
  const posting = post(locked.funds, NO_FUNDING, { kind: 'hold', amount: request.amount, now: locked.now });
  if (!posting.ok) throw new InsufficientFunds(request.walletId, request.amount);
  let hold: HoldRow | undefined;
  await applyPostings(
    tx,
    [
      {
        locked,
        items: [
          {
            origin: { settlementKey: holdKey(request.tenantId, request.jobId), jobId: request.jobId, revenueAccountId: revenue },
            postings: posting.postings,
          },
        ],
        funds: posting.wallet,
        jobs: new Map([[request.jobId, posting.job]]),
      },
    ],
    {
      guard: { currency: request.currency, requested: request.amount },
      overdraft: 'raise',
      // The hold's row names its first 'reserve' entry; its shares reference it.
      afterEntries: async (applied) => {
        hold = await insertHold(tx, request, revenue, applied[0]?.[0]?.rows[0]?.id ?? null);
      },
    },
  );
  return hold!;
}

async function insertHold(tx: Queryable, request: ReserveRequest, revenue: string, pendingEntryId: string | null): Promise<HoldRow> {
  const hold = await tx.query<HoldRow>(
    `insert into holds (job_id, tenant_id, wallet_id, revenue_account_id, currency, amount, pending_entry_id, expires_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8) returning *`,
    [
      request.jobId,
      request.tenantId,
      request.walletId,
      revenue,
      request.currency,
      request.amount.toString(),
      pendingEntryId,
      request.expiresAt,
    ],
  );
  return hold.rows[0]!;
}

/**
 * The holds of `jobIds`, by job; a job without one is a bug (every job reserves). With
 * the jobs' tenant (a settlement batch has one), the statement names it.
 */
export async function findHolds(tx: Queryable, jobIds: readonly string[], tenantId?: string): Promise<Map<string, HoldRow>> {
  const result = await tx.query<HoldRow>(
    tenantId === undefined
      ? { name: 'find_holds', text: 'select * from holds where job_id = any($1::uuid[])', values: [jobIds] }
      : {
          name: 'find_tenant_holds',
          text: 'select * from holds where tenant_id = $2 and job_id = any($1::uuid[])',
          values: [jobIds, tenantId],
        },
  );
  const holds = new Map(result.rows.map((h) => [h.job_id, h]));
  for (const jobId of jobIds) if (!holds.has(jobId)) throw new Error(`job ${jobId} has no hold`);
  return holds;
}

export interface HoldResolution {
  jobId: string;
  tenantId: string;
  posted: bigint;
  voided: bigint;
  settlementKey: string;
}

/**
 * Resolves each hold once, one statement per tenant (a settlement batch's one): the
 * trigger holds_resolve_once refuses a second resolution (a backstop the job lock makes
 * unreachable in a correct run).
 */
export async function resolveHolds(tx: Queryable, resolutions: readonly HoldResolution[]): Promise<void> {
  for (const run of tenantRuns(resolutions, (r) => r.tenantId)) {
    await tx.query({
      name: 'resolve_holds',
      text: `update holds h set posted = r.posted, voided = r.voided, resolved_by = r.settlement_key, resolved_at = now()
       from unnest($1::uuid[], $2::bigint[], $3::bigint[], $4::text[]) as r(job_id, posted, voided, settlement_key)
       where h.tenant_id = $5 and h.job_id = r.job_id`,
      values: [
        run.items.map((r) => r.jobId),
        run.items.map((r) => r.posted.toString()),
        run.items.map((r) => r.voided.toString()),
        run.items.map((r) => r.settlementKey),
        run.tenantId,
      ],
    });
  }
}
