import { Type } from '@sinclair/typebox';
import { AmountString, Metadata, SignedAmountString } from '../schemas.js';

/** What the wallet routes answer (wallets.ts, wallet-history.ts): a wallet and its entries. */

export const WalletView = Type.Object({
  id: Type.String(),
  tenant_id: Type.String(),
  currency: Type.String(),
  metadata: Metadata,
  balance: SignedAmountString,
  reserved: AmountString,
  available: SignedAmountString,
  created_at: Type.String(),
});

export const InstantText = Type.String({ description: 'RFC 3339 in UTC, to the microsecond' });

export const EntryView = Type.Object({
  id: Type.String(),
  entry_type: Type.String(),
  amount: SignedAmountString,
  settlement_key: Type.String(),
  job_id: Type.Union([Type.String(), Type.Null()]),
  reference: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({
    description: "the instant the entry took its place in the wallet's order (RFC 3339, UTC, to the microsecond)",
  }),
  sequence: Type.Integer({ minimum: 1, description: "its number in the wallet's order: 1, 2, 3 … in the order the entries were posted" }),
  balance_after: SignedAmountString,
  reserved_after: AmountString,
  available_after: SignedAmountString,
});
