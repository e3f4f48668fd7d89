import type { Queryable } from '../db/pool.js';

/** Every entry type (migrations/0001_core.sql ledger_entries_type_known), in the order statements list them. */
export const ENTRY_TYPES = ['credit', 'reserve', 'capture', 'release_remainder', 'release', 'adjustment'] as const;
export type EntryType = (typeof ENTRY_TYPES)[number];
/** TigerBeetle-style transfer flags; see migrations/0001_core.sql. */
export type EntryFlags = 'posted' | 'pending' | 'post_pending' | 'void_pending';

export interface Transfer {
  settlementKey: string;
  entryType: EntryType;
  flags: EntryFlags;
  pendingId?: string | null;
  debitAccountId: string;
  creditAccountId: string;
  amount: bigint;
  currency: string;
  tenantId: string;
  jobId?: string | null;
  reference?: string | null;
}

export interface ProjectionDelta {
  debitsPending: bigint;
  debitsPosted: bigint;
  creditsPending: bigint;
  creditsPosted: bigint;
}

/** How one transfer moves the four projection columns of its two accounts. */
export function projectionDelta(transfer: Transfer): { debit: ProjectionDelta; credit: ProjectionDelta } {
  const a = transfer.amount;
  const zero: ProjectionDelta = { debitsPending: 0n, debitsPosted: 0n, creditsPending: 0n, creditsPosted: 0n };
  switch (transfer.flags) {
    case 'posted':
      return { debit: { ...zero, debitsPosted: a }, credit: { ...zero, creditsPosted: a } };
    case 'pending':
      return { debit: { ...zero, debitsPending: a }, credit: { ...zero, creditsPending: a } };
    case 'post_pending':
      return {
        debit: { ...zero, debitsPending: -a, debitsPosted: a },
        credit: { ...zero, creditsPending: -a, creditsPosted: a },
      };
    case 'void_pending':
      return { debit: { ...zero, debitsPending: -a }, credit: { ...zero, creditsPending: -a } };
  }
}

/**
 * Moves the projection columns for `transfers`, one UPDATE per account, in the order
 * given by `lockOrder` (wallets before the tenant's system accounts — DESIGN.md's one
 * lock order), so concurrent settlements never deadlock. `except` skips accounts whose
 * projection the caller already moved: the wallets, whose entries are inserted with their
 * projection, in one statement (wallet-entries.ts). Here only the system accounts move.
 * Returns each updated account's posted balance (credits − debits), for overdraft checks.
 */
export async function moveProjections(
  tx: Queryable,
  transfers: Transfer[],
  lockOrder: string[],
  except: ReadonlySet<string> = new Set(),
): Promise<Map<string, bigint>> {
  const byAccount = new Map<string, ProjectionDelta>();
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
  }
  const ordered = [...byAccount.keys()].sort((x, y) => rank(lockOrder, x) - rank(lockOrder, y) || (x < y ? -1 : 1));
  const balances = new Map<string, bigint>();
  for (const account of ordered) {
    const d = byAccount.get(account)!;
    const updated = await tx.query<{ balance: bigint }>({
      name: 'move_projection',
      text: `update accounts set debits_pending = debits_pending + $2, debits_posted = debits_posted + $3,
              credits_pending = credits_pending + $4, credits_posted = credits_posted + $5
       where id = $1
       returning credits_posted - debits_posted as balance`,
      values: [account, d.debitsPending.toString(), d.debitsPosted.toString(), d.creditsPending.toString(), d.creditsPosted.toString()],
    });
    balances.set(account, updated.rows[0]!.balance);
  }
  return balances;
}

function rank(order: string[], account: string): number {
  const i = order.indexOf(account);
  return i === -1 ? order.length : i;
}
