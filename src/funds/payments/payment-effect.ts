/**
 * What a Stripe event did to the ledger (payment-settle.ts): applied, no effect (with
 * why), or wait — it needs an object Tally has not seen yet, and the worker puts it back.
 */
export type PaymentEffect =
  { kind: 'applied'; reason: string | null } | { kind: 'no_effect'; reason: string } | { kind: 'wait'; reason: string };

export interface EventContext {
  /** Stripe's `created` of the event, unix seconds */
  created: number | null;
}
