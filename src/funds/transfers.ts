import type { Queryable } from '../db/pool.js';
import { tenantRuns } from '../db/tenant-groups.js';
import { projectionDelta, type PostingFlags, type PostingType, type ProjectionDelta } from './posting/index.js';


export interface Transfer {
  settlementKey: string;
  entryType: PostingType;
  flags: PostingFlags;
  pendingId?: string | null;
  debitAccountId: string;
  creditAccountId: string;
  amount: bigint;
  currency: string;
  tenantId: string;
  jobId?: string | null;
  reference?: string | null;
  /** the grant of the wallet the entry moves; none: the wallet's debt, or no wallet */
  grantId?: string | null;
}

/**
 * Moves the projection columns for `transfers`, in one statement, locking the accounts in the order
 * given by `lockOrder` (wallets before the tenant's system accounts — docs/ARCHITECTURE.md "Lock order", the one
 * lock order), so concurrent settlements never deadlock. `except` skips accounts whose
 * projection the caller already moved: the wallets, whose entries are inserted with their
 * projection, in one statement (wallet-entries.ts). Here only the system accounts move.
 * One statement per tenant, in that order (a transfer moves one tenant's accounts; a
 * settlement batch is one tenant's: one statement), naming it.
 * Returns each updated account's posted balance (credits − debits), for overdraft checks.
 */
export async function moveProjections(
  tx: Queryable,
  transfers: Transfer[],
  lockOrder: string[],
  except: ReadonlySet<string> = new Set(),
): Promise<Map<string, bigint>> {
  const byAccount = new Map<string, ProjectionDelta>();
  const tenantOf = new Map<string, string>();
  const add = (account: string, d: ProjectionDelta) => {
    if (except.has(account)) return;
    const sum = byAccount.get(account) ?? { debitsPending: 0n, debitsPosted: 0n, creditsPending: 0n, creditsPosted: 0n };
    sum.debitsPending += d.debitsPending;
    sum.debitsPosted += d.debitsPosted;
    sum.creditsPending += d.creditsPending;
    sum.creditsPosted += d.creditsPosted;
    byAccount.set(account, sum);
  };
  for (const t of transfers) {
    if (t.amount === 0n) continue;
    const d = projectionDelta(t);
    add(t.debitAccountId, d.debit);
    add(t.creditAccountId, d.credit);
    tenantOf.set(t.debitAccountId, t.tenantId).set(t.creditAccountId, t.tenantId);
  }
  const ordered = [...byAccount.keys()].sort((x, y) => rank(lockOrder, x) - rank(lockOrder, y) || (x < y ? -1 : 1));
  const balances = new Map<string, bigint>();
  for (const run of tenantRuns(ordered, (account) => tenantOf.get(account))) {
    for (const [id, balance] of await moveTenantProjections(tx, run.tenantId!, run.items, byAccount)) balances.set(id, balance);
  }
  return balances;
}

async function moveTenantProjections(
  tx: Queryable,
  tenantId: string,
  ordered: readonly string[],
  byAccount: ReadonlyMap<string, ProjectionDelta>,
): Promise<Map<string, bigint>> {
  const deltas = ordered.map((account) => byAccount.get(account)!);
  const values = [
    ordered,
    deltas.map((d) => d.debitsPending.toString()),
    deltas.map((d) => d.debitsPosted.toString()),
    deltas.map((d) => d.creditsPending.toString()),
    deltas.map((d) => d.creditsPosted.toString()),
    tenantId,
  ];
  // One account (a credit, a reservation, a hot tenant's batch): a plain UPDATE. Several:
  // one statement that first locks them in `ordered` (ORDER BY runs before FOR UPDATE
  // takes the locks), then moves them all.
  const updated = await tx.query<{ id: string; balance: bigint }>(
    ordered.length === 1
      ? {
          name: 'move_projection',
          text: `update accounts a set debits_pending = debits_pending + ($2::bigint[])[1], debits_posted = debits_posted + ($3::bigint[])[1],
                  credits_pending = credits_pending + ($4::bigint[])[1], credits_posted = credits_posted + ($5::bigint[])[1]
           where tenant_id = $6 and id = ($1::uuid[])[1]
           returning a.id, credits_posted - debits_posted as balance`,
          values,
        }
      : {
          name: 'move_projections',
          text: `with moves as (
             select * from unnest($1::uuid[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[]) with ordinality
               as m(id, debits_pending, debits_posted, credits_pending, credits_posted, n)
           ), locked as materialized (
             select a.id from accounts a join moves m on m.id = a.id where a.tenant_id = $6 order by m.n for no key update of a
           )
           update accounts a set debits_pending = a.debits_pending + m.debits_pending, debits_posted = a.debits_posted + m.debits_posted,
                  credits_pending = a.credits_pending + m.credits_pending, credits_posted = a.credits_posted + m.credits_posted
           from moves m join locked l on l.id = m.id
           where a.tenant_id = $6 and a.id = m.id
           returning a.id, a.credits_posted - a.debits_posted as balance`,
          values,
        },
  );
  return new Map(updated.rows.map((r) => [r.id, r.balance]));
}

function rank(order: string[], account: string): number {
  const i = order.indexOf(account);
  return i === -1 ? order.length : i;
}
