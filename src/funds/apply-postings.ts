import type { Queryable } from '../db/pool.js';
import { systemAccountIds, type SystemAccountKind } from './accounts.js';
import type { EntryRow } from './entries.js';
import { announceDepleted } from './grant-events.js';
import { transfersOf } from './grant-transfers.js';
import { alertIfOverdrawn } from './overdraft.js';
import { rechargeAfterPosting } from './payments/recharge.js';
import { availableAt, walletDelta, type JobFunding, type Posting, type WalletFunds } from './posting/index.js';
import { moveProjections, type Transfer } from './transfers.js';
import { postWalletEntries, type SpendGuard } from './wallet-entries.js';
import type { LockedFunds } from './wallet-funds.js';
import { writeWalletsFunds, type NewShareEntry } from './wallet-funds-write.js';

/**
 * THE posting writer: every movement of a wallet's money — a hold, a job's settlement, a
 * credit, a grant's activation, expiry or void, a payer's refund or dispute — is written
 * here, from what the posting module (funds/posting/) accepted under the wallet's lock.
 * In one place, in this order:
 *
 * 1. the postings become entries naming their grant (grant-transfers.ts), posted to each
 *    wallet in one statement with its projection, running values, the tenant's spend and
 *    the wallet's thresholds (wallet-entries.ts); a guarded posting (a hold) is refused
 *    there by the tenant's spend limits (its funds were checked by the posting module);
 * 2. the tenant's system accounts' projections (wallets first: docs/ARCHITECTURE.md "Lock order");
 * 3. the grants', shares', draws' and debt's new values, for every wallet in one statement;
 * 4. what follows from the new values: wallet_overdrawn for a posting that took the
 *    balance below zero (or its balance handed back, for a caller that names the event),
 *    grant.depleted, and an auto-recharge where `available` fell.
 */

/** What names the entries of one posting. */
export interface PostingOrigin {
  settlementKey: string;
  jobId?: string | null;
  reference?: string | null;
  /** the revenue account a job's posting moves (its hold's); other system accounts are found by kind */
  revenueAccountId?: string;
}

/** One wallet's accepted postings, in order, and the funds the posting module left. */
export interface WalletPostings {
  locked: LockedFunds;
  items: readonly { origin: PostingOrigin; postings: readonly Posting[] }[];
  funds: WalletFunds;
  /** the wallet's jobs the postings moved, by id */
  jobs: ReadonlyMap<string, JobFunding>;
}

export interface AppliedPosting {
  /** its entries, in the posting's order (a posting that moves nothing has none) */
  rows: EntryRow[];
  /** the wallet's posted balance after its entries; null when the wallet has no entry in this call */
  balanceAfter: bigint | null;
  /** how its entries moved the wallet's posted balance */
  balanceChange: bigint;
}

export interface ApplyOptions {
  /** a reservation: refused (SpendLimitReached) past the tenant's spend limits */
  guard?: SpendGuard;
  /**
   * `raise`: wallet_overdrawn for each posting that took the balance below zero, keyed by
   * its settlement key. `report`: the caller raises it, from balanceAfter (a job's
   * settlement names its event).
   */
  overdraft: 'raise' | 'report';
  /**
   * Called between the entries and the grants' values: what references the new entries
   * and is referenced by the shares (a hold's row) is written there.
   */
  afterEntries?: (applied: AppliedPosting[][]) => Promise<void>;
}

/** Writes the postings of each wallet (in the order given: wallet id order, the lock order). */
export async function applyPostings(
  tx: Queryable,
  wallets: readonly WalletPostings[],
  options: ApplyOptions,
): Promise<AppliedPosting[][]> {
  /** by wallet, by posting: its entries to be */
  const transfersOfWallet: Transfer[][][] = [];
  const systemAccounts = new Set<string>();
  for (const wallet of wallets) {
    const { locked } = wallet;
    const parties = new Set(wallet.items.flatMap((item) => item.postings.flatMap((p) => [p.from, p.to])));
    const needsRevenue = wallet.items.some((item) => !item.origin.revenueAccountId && item.postings.some((p) => p.from === 'revenue' || p.to === 'revenue'));
    const kinds = (['funding', 'revenue', 'breakage'] as const).filter(
      (kind: SystemAccountKind) => parties.has(kind) && (kind !== 'revenue' || needsRevenue),
    );
    const accounts = kinds.length > 0 ? await systemAccountIds(tx, locked.tenantId, locked.currency, kinds) : {};
    transfersOfWallet.push(
      wallet.items.map((item) => {
        const transfers = transfersOf(item.postings, {
          walletId: locked.walletId,
          tenantId: locked.tenantId,
          currency: locked.currency,
          settlementKey: item.origin.settlementKey,
          jobId: item.origin.jobId ?? null,
          reference: item.origin.reference ?? null,
          accounts: { ...accounts, ...(item.origin.revenueAccountId ? { revenue: item.origin.revenueAccountId } : {}) },
          pendingEntryOf: (grantId) => locked.pendingEntries.get(`${item.origin.jobId}:${grantId ?? 'debt'}`) ?? null,
        });
        for (const t of transfers) for (const account of [t.debitAccountId, t.creditAccountId]) if (account !== locked.walletId) systemAccounts.add(account);
        return transfers;
      }),
    );
  }

  const applied: AppliedPosting[][] = [];
  const newShareEntries = new Map<string, NewShareEntry[]>();
  for (const [i, wallet] of wallets.entries()) {
    const { locked } = wallet;
    const byPosting = transfersOfWallet[i]!;
    const moving = byPosting.flat().filter((t) => t.amount !== 0n);
    let rows: EntryRow[] = [];
    let balance: bigint | null = null;
    if (moving.length > 0) {
      const posted = await postWalletEntries(tx, locked.walletId, moving, options.guard);
      if (!posted) throw new Error(`wallet ${locked.walletId} vanished while posting ${wallet.items[0]?.origin.settlementKey}`);
      rows = posted.rows;
      balance = posted.balance;
    }
    applied.push(perPosting(locked.walletId, byPosting, rows, balance));
    // A hold's shares each name their own 'reserve' entry.
    const shares = rows.filter((r) => r.flags === 'pending' && r.job_id !== null && r.grant_id !== null);
    newShareEntries.set(
      locked.walletId,
      shares.map((r) => ({ jobId: r.job_id!, grantId: r.grant_id!, pendingEntryId: r.id })),
    );
  }

  const walletIds = wallets.map((w) => w.locked.walletId);
  await options.afterEntries?.(applied);
  await moveProjections(tx, transfersOfWallet.flat(2), [...walletIds, ...[...systemAccounts].sort()], new Set(walletIds));
  await writeWalletsFunds(
    tx,
    wallets.map((w) => ({ before: w.locked, after: w.funds, jobs: w.jobs, newShareEntries: newShareEntries.get(w.locked.walletId) })),
  );

  for (const [i, wallet] of wallets.entries()) {
    const { locked } = wallet;
    if (options.overdraft === 'raise') {
      for (const [j, posting] of applied[i]!.entries()) {
        // Only a posting that lowered the balance overdraws: one that raised it (a credit
        // paying part of a debt) leaves a wallet below zero no worse.
        if (posting.balanceChange < 0n && posting.balanceAfter !== null)
          await alertIfOverdrawn(tx, locked, posting.balanceAfter, wallet.items[j]!.origin.settlementKey);
      }
    }
    const postings = wallet.items.flatMap((item) => item.postings);
    await announceDepleted(tx, locked, wallet.funds, postings, locked.now);
    await rechargeAfterPosting(tx, locked, postings, availableAt(wallet.funds, locked.now));
  }
  return applied;
}

/** One wallet, one posting that is not a job's (a credit, a grant's, a payer's refund): applyPostings for it. */
export async function applyPosting(
  tx: Queryable,
  locked: LockedFunds,
  posting: { postings: readonly Posting[]; wallet: WalletFunds },
  origin: PostingOrigin,
): Promise<AppliedPosting> {
  const [applied] = await applyPostings(tx, [{ locked, items: [{ origin, postings: posting.postings }], funds: posting.wallet, jobs: new Map() }], {
    overdraft: 'raise',
  });
  return applied![0]!;
}

/**
 * Splits a wallet's inserted rows back to its postings (transfers of zero are no entry),
 * with each posting's balance after it: the wallet's balance after all of them, less what
 * the later ones moved — as if they had been written one at a time, in order.
 */
function perPosting(walletId: string, byPosting: Transfer[][], rows: EntryRow[], balance: bigint | null): AppliedPosting[] {
  let next = 0;
  const result = byPosting.map((transfers) => {
    const moving = transfers.filter((t) => t.amount !== 0n).length;
    const own = rows.slice(next, next + moving);
    next += moving;
    return { rows: own, balanceAfter: null as bigint | null, balanceChange: transfers.reduce((sum, t) => sum + walletDelta(t, walletId).balance, 0n) };
  });
  let after = balance;
  for (let i = result.length - 1; i >= 0; i--) {
    result[i]!.balanceAfter = after;
    if (after !== null) after -= result[i]!.balanceChange;
  }
  return result;
}
