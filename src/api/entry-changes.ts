import { Type } from '@sinclair/typebox';
import { availableDelta, type WalletChange } from '../funds/posting/index.js';
import { formatAmount } from '../money/index.js';
import { SignedAmountString } from './schemas.js';

/**
 * What entries did to a wallet, as an entry (the entries list, a statement's lines, a
 * credit's answer) and a statement's totals show it. An entry's `amount` alone adds up to
 * nothing: a reservation moves what is available and not the balance, a capture the
 * balance and not what is available, a debt repayment neither. These columns do add up:
 * over any run of the wallet's order, Σ balance_change is the change of the balance, Σ
 * reserved_change of the reserved amount, Σ available_change of balance − reserved. The
 * arithmetic is the ledger's (funds/posting walletDelta, availableDelta): this only
 * writes it out.
 */

export const changeFields = {
  balance_change: SignedAmountString,
  reserved_change: SignedAmountString,
  available_change: Type.String({
    description: 'the change of balance − reserved (available_after): balance_change − reserved_change, a signed decimal string',
    examples: ['-0.000150'],
  }),
};

export function changeView(change: WalletChange) {
  return {
    balance_change: formatAmount(change.balance),
    reserved_change: formatAmount(change.reserved),
    available_change: formatAmount(availableDelta(change)),
  };
}
