import type { Micros } from '../../money/index.js';
import { microsToMinorCeil, microsToMinorFloor, minimumChargeMicros, minorToMicros } from './minor-units.js';

/**
 * Whether a posting that lowered a wallet's `available` starts a recharge, and of how
 * much (CONTRACT.md "Payments", auto-recharge). Pure: the writer reads the values under
 * the wallet's lock, asks, and writes what it says (recharge.ts).
 */
export interface RechargeSituation {
  enabled: boolean;
  threshold: Micros;
  target: Micros;
  /** null: no limit */
  monthlyLimit: Micros | null;
  currency: string;
  /** after the posting */
  available: Micros;
  /** a recharge of this wallet is awaiting its payment */
  inFlight: boolean;
  /** this calendar month's (UTC) recharges that were not canceled: paid or in flight */
  monthTotal: Micros;
  /** a customer and a payment method to charge (the tenant's latest successful checkout) */
  chargeable: boolean;
}

export type RechargeDecision =
  | { kind: 'recharge'; amount: Micros; amountMinor: bigint }
  | {
      kind: 'none';
      reason: 'disabled' | 'above_threshold' | 'in_flight' | 'no_payment_method' | 'monthly_limit';
    };

export function decideRecharge(s: RechargeSituation): RechargeDecision {
  if (!s.enabled) return { kind: 'none', reason: 'disabled' };
  if (s.available >= s.threshold) return { kind: 'none', reason: 'above_threshold' };
  if (s.inFlight) return { kind: 'none', reason: 'in_flight' };
  if (!s.chargeable) return { kind: 'none', reason: 'no_payment_method' };
  const minimum = minimumChargeMicros(s.currency);
  // target − available, rounded up to the minor unit, at least Stripe's minimum charge
  let minor = microsToMinorCeil(s.target - s.available, s.currency);
  const minimumMinor = microsToMinorCeil(minimum, s.currency);
  if (minor < minimumMinor) minor = minimumMinor;
  if (s.monthlyLimit !== null) {
    const room = microsToMinorFloor(s.monthlyLimit - s.monthTotal, s.currency);
    if (minor > room) minor = room;
    if (minor < minimumMinor) return { kind: 'none', reason: 'monthly_limit' };
  }
  return { kind: 'recharge', amount: minorToMicros(minor, s.currency), amountMinor: minor };
}
