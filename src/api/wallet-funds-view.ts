import { Type } from '@sinclair/typebox';
import type { Queryable } from '../db/pool.js';
import type { Instant, WalletTotals } from '../funds/posting/index.js';
import { readWalletTotals, type AccountRow } from '../funds/index.js';
import { formatAmount } from '../money/index.js';
import { AmountString, SignedAmountString } from './schemas.js';
import { walletView } from './views.js';

/**
 * What a wallet's view adds from its grants (CONTRACT.md "Credit grants"), all from
 * funds/posting walletTotals over the grants as they are now: `available` as the grants
 * allow it (Σ over fundable grants of their unheld remaining − debt), the balance by
 * category, the debt, the next expiry. `balance` and `reserved` stay the wallet's own
 * running values (= Σ remaining − debt and Σ held: a ledger invariant).
 */

const InstantText = Type.String({ format: 'date-time', description: 'RFC 3339, UTC, to the microsecond' });

export const walletFundsFields = {
  available: SignedAmountString,
  balance_by_category: Type.Object(
    { paid: AmountString, promotional: AmountString },
    { description: "the grants' remaining by category, held parts included (balance = paid + promotional − debt)" },
  ),
  debt: AmountString,
  next_expiry: Type.Union([
    Type.Object(
      { at: InstantText, amount: AmountString },
      { description: 'the soonest instant at which credit that can fund lapses, and the unheld amount lapsing then' },
    ),
    Type.Null(),
  ]),
};

/** Microseconds since the epoch as RFC 3339 in UTC, to the microsecond. */
function instantText(micros: Instant): string {
  const ms = micros / 1000n;
  return `${new Date(Number(ms)).toISOString().slice(0, 23)}${String(micros - ms * 1000n).padStart(3, '0')}Z`;
}

const NO_FUNDS: WalletTotals = {
  balance: 0n,
  reserved: 0n,
  available: 0n,
  debt: 0n,
  balanceByCategory: { paid: 0n, promotional: 0n },
  nextExpiry: null,
};

export function walletFundsView(totals: WalletTotals) {
  return {
    available: formatAmount(totals.available),
    balance_by_category: {
      paid: formatAmount(totals.balanceByCategory.paid),
      promotional: formatAmount(totals.balanceByCategory.promotional),
    },
    debt: formatAmount(totals.debt),
    next_expiry:
      totals.nextExpiry === null ? null : { at: instantText(totals.nextExpiry.at), amount: formatAmount(totals.nextExpiry.amount) },
  };
}

/**
 * The wallet views of `rows` with their grants' totals. Read the rows and call this in one
 * snapshot (a repeatable-read transaction, or the transaction that wrote them), so the
 * running values and the grants agree.
 */
export async function walletViewsWithFunds(db: Queryable, rows: readonly AccountRow[]) {
  const totals = await readWalletTotals(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => ({ ...walletView(row), ...walletFundsView(totals.get(row.id) ?? NO_FUNDS) }));
}
