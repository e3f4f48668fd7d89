import { Type } from '@sinclair/typebox';
import { changeFields } from '../entry-changes.js';
import { AmountString, Metadata, SignedAmountString } from '../schemas.js';
import { walletFundsFields } from '../wallet-funds-view.js';

/** What the wallet routes answer (wallets.ts, wallet-history.ts): a wallet and its entries. */

/** The wallet's running values: what GET /v1/wallets/{id}?at= answers about an instant (with `at` and `sequence`). */
export const WalletBalancesView = Type.Object({
  id: Type.String(),
  tenant_id: Type.String(),
  currency: Type.String(),
  metadata: Metadata,
  balance: SignedAmountString,
  reserved: AmountString,
  available: SignedAmountString,
  created_at: Type.String(),
});

/** The wallet now: its running values, and what its grants add (wallet-funds-view.ts; `available` as the grants allow). */
export const WalletView = Type.Object({ ...WalletBalancesView.properties, ...walletFundsFields });

export const InstantText = Type.String({ description: 'RFC 3339 in UTC, to the microsecond' });

export const EntryView = Type.Object({
  id: Type.String(),
  entry_type: Type.String(),
  amount: SignedAmountString,
  settlement_key: Type.String(),
  job_id: Type.Union([Type.String(), Type.Null()]),
  grant_id: Type.Union([Type.String(), Type.Null()], {
    description: "the grant it moves; null for the wallet's debt, or an entry from before grants",
  }),
  reference: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({
    description: "the instant the entry took its place in the wallet's order (RFC 3339, UTC, to the microsecond)",
  }),
  sequence: Type.Integer({ minimum: 1, description: "its number in the wallet's order: 1, 2, 3 … in the order the entries were posted" }),
  balance_after: SignedAmountString,
  reserved_after: AmountString,
  available_after: SignedAmountString,
  // what the entry did to the wallet: these add up, its amount does not (entry-changes.ts)
  ...changeFields,
});
