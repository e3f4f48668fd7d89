import { POSTING_TYPES, type GrantCategory, type PostingType, type WalletChange } from './posting/index.js';


/**
 * A wallet's statement over [from, to): what it held before, every entry in the range
 * with what it held after each, what it held at the end, and totals per entry type.
 * Pure: the shell (wallet-history.ts) reads the entries, this builds and checks. The
 * running values are the ones stored with the entries (migrations/0009); building a
 * statement checks each against the one before and the entry's amount, so a statement
 * never prints a balance its own lines contradict.
 *
 * Amounts are signed from the wallet's side, as in the entries list (entries.ts): a
 * credit, a refund or a released hold positive; a reservation, a capture or a charge
 * negative. What an entry does to the balance and to the reserved amount is its
 * `change`, the posting module's walletDelta of its flags and accounts.
 *
 * Totals are given per entry type and per category of the grant an entry names: `paid`,
 * `promotional`, and `unassigned` for the entries that name no grant — since credit
 * grants, the wallet's debt (the part of a charge no grant covered, and its repayment);
 * before them (migration 0019), every entry of the wallet. A debt repayment moves money
 * between two categories: its grant's balance falls by it, the debt's rises by it.
 */

/** What a wallet holds: its balance and its reserved amount (the same two as an entry's change). */
export type Holdings = WalletChange;

/** One entry of the wallet's order, as stored. */
export interface ChainEntry {
  id: string;
  sequence: bigint;
  /** RFC 3339 with microseconds, UTC */
  createdAt: string;
  entryType: PostingType;
  jobId: string | null;
  settlementKey: string;
  reference: string | null;
  /** the grant it moves (null: the wallet's debt, or an entry from before grants) */
  grantId: string | null;
  /** that grant's category (null with no grant) */
  grantCategory: GrantCategory | null;
  amount: bigint;
  /** what it did to the wallet (the posting module's walletDelta) */
  change: Holdings;
  balanceAfter: bigint;
  reservedAfter: bigint;
}

export interface TypeTotal {
  entryType: PostingType;
  count: number;
  amount: bigint;
  balanceChange: bigint;
  reservedChange: bigint;
}

/** Where an entry's money is, by the grant it names: its category, or `unassigned` for none. */
export const STATEMENT_CATEGORIES = ['paid', 'promotional', 'unassigned'] as const;
export type StatementCategory = (typeof STATEMENT_CATEGORIES)[number];

export interface CategoryTotal {
  category: StatementCategory;
  /** the entries naming a grant of this category (or none, for `unassigned`) */
  count: number;
  balanceChange: bigint;
  reservedChange: bigint;
}

export interface Statement {
  from: string;
  to: string;
  opening: Holdings;
  lines: ChainEntry[];
  closing: Holdings;
  /** one per entry type present in the range, in POSTING_TYPES order */
  totals: TypeTotal[];
  /** one per category, in STATEMENT_CATEGORIES order, present or not: they add up to the same changes as `totals` */
  categoryTotals: CategoryTotal[];
}

export class StatementChainBroken extends Error {
  constructor(entry: ChainEntry, expected: Holdings) {
    super(
      `entry ${entry.id} (number ${entry.sequence} of its wallet) says balance ${entry.balanceAfter}, reserved ${entry.reservedAfter} after it; ` +
        `the entries before it and its amount give ${expected.balance}, ${expected.reserved} (run tally reconcile: running_balance_drift)`,
    );
    this.name = 'StatementChainBroken';
  }
}

/**
 * The statement from the wallet's holdings before the range (`before`: the newest entry
 * before `from`, null when there is none) and the range's entries in the wallet's order.
 * Throws StatementChainBroken when a stored running value disagrees with its entry.
 */
export function buildStatement(range: { from: string; to: string }, before: Holdings | null, lines: ChainEntry[]): Statement {
  const opening = before ?? { balance: 0n, reserved: 0n };
  let held = opening;
  const totals = new Map<PostingType, TypeTotal>();
  const categories = new Map<StatementCategory, CategoryTotal>(
    STATEMENT_CATEGORIES.map((category) => [category, { category, count: 0, balanceChange: 0n, reservedChange: 0n }]),
  );
  for (const line of lines) {
    const change = line.change;
    const expected = { balance: held.balance + change.balance, reserved: held.reserved + change.reserved };
    if (expected.balance !== line.balanceAfter || expected.reserved !== line.reservedAfter) throw new StatementChainBroken(line, expected);
    held = expected;
    const total = totals.get(line.entryType) ?? { entryType: line.entryType, count: 0, amount: 0n, balanceChange: 0n, reservedChange: 0n };
    total.count += 1;
    total.amount += line.amount;
    total.balanceChange += change.balance;
    total.reservedChange += change.reserved;
    totals.set(line.entryType, total);
    const category = categories.get(line.grantCategory ?? 'unassigned')!;
    category.count += 1;
    if (line.entryType === 'debt_repayment' && line.grantCategory !== null) {
      // the grant pays the wallet's debt: its category holds less, the debt (owed: negative) as much less
      category.balanceChange -= line.amount;
      categories.get('unassigned')!.balanceChange += line.amount;
    } else {
      category.balanceChange += change.balance;
      category.reservedChange += change.reserved;
    }
  }
  return {
    from: range.from,
    to: range.to,
    opening,
    lines,
    closing: held,
    totals: POSTING_TYPES.flatMap((t) => (totals.has(t) ? [totals.get(t)!] : [])),
    categoryTotals: [...categories.values()],
  };
}

/**
 * The statement of [from, to) cut from a wallet's whole order, as the database query
 * does it (instants rise along the order, so the range is a contiguous run of it).
 * Instants compare as strings: RFC 3339 in UTC with a fixed number of digits.
 */
export function statementOf(chain: readonly ChainEntry[], from: string, to: string): Statement {
  const before = chain.filter((e) => e.createdAt < from).at(-1);
  const lines = chain.filter((e) => e.createdAt >= from && e.createdAt < to);
  return buildStatement({ from, to }, before ? { balance: before.balanceAfter, reserved: before.reservedAfter } : null, lines);
}
