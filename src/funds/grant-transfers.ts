import type { Party, Posting } from './posting/index.js';
import type { Transfer } from './transfers.js';

/** The accounts behind a posting's parties, and what every entry of it carries. */
export interface PostingContext {
  walletId: string;
  tenantId: string;
  currency: string;
  settlementKey: string;
  jobId?: string | null;
  reference?: string | null;
  /** the tenant's system accounts in the currency, by kind (only those the postings name are needed) */
  accounts: Partial<Record<'revenue' | 'funding' | 'breakage', string>>;
  /** a share's 'reserve' entry (grant null: the part held against the debt), which the posting of its capture or return names */
  pendingEntryOf?: (grantId: string | null) => string | null;
}

/**
 * The posting module's postings as ledger transfers. A grant and the debt are parties of
 * the wallet: their side is the wallet's account, with the grant named (none for the
 * debt). Postings of one type between the same parties are one entry (a refund that
 * reaches one grant through a draw and a share): an entry's key is its settlement, type
 * and grant.
 */
export function transfersOf(postings: readonly Posting[], context: PostingContext): Transfer[] {
  const merged = new Map<string, Posting>();
  for (const p of postings) {
    const key = `${p.type}|${p.flags}|${partyKey(p.from)}|${partyKey(p.to)}`;
    const same = merged.get(key);
    merged.set(key, same ? { ...same, amount: same.amount + p.amount } : p);
  }
  return [...merged.values()].map((p): Transfer => {
    const grantId = grantOf(p.from) ?? grantOf(p.to);
    const pendingId = p.flags === 'post_pending' || p.flags === 'void_pending' ? (context.pendingEntryOf?.(grantId) ?? null) : null;
    if ((p.flags === 'post_pending' || p.flags === 'void_pending') && pendingId === null) {
      throw new Error(
        `the share of ${grantId === null ? 'the debt' : `grant ${grantId}`} in ${context.settlementKey} has no reserve entry to ${p.flags === 'post_pending' ? 'post' : 'void'}`,
      );
    }
    return {
      settlementKey: context.settlementKey,
      entryType: p.type,
      flags: p.flags,
      pendingId,
      debitAccountId: accountOf(p.from, context),
      creditAccountId: accountOf(p.to, context),
      amount: p.amount,
      currency: context.currency,
      tenantId: context.tenantId,
      jobId: context.jobId ?? null,
      reference: context.reference ?? null,
      grantId,
    };
  });
}

function partyKey(party: Party): string {
  return typeof party === 'object' ? `grant:${party.grant}` : party;
}

function grantOf(party: Party): string | null {
  return typeof party === 'object' ? party.grant : null;
}

function accountOf(party: Party, context: PostingContext): string {
  if (typeof party === 'object' || party === 'debt') return context.walletId;
  const account = context.accounts[party];
  if (!account) throw new Error(`a posting of ${context.settlementKey} names the ${party} account, which the writer did not give`);
  return account;
}
