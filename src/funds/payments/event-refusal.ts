/**
 * Which Stripe events are not the operator's to apply, decided once for the two ways an
 * event comes in — a delivery (intake/stripe-receive.ts) and `tally payments sync`
 * (sync.ts) — so that neither lets through what the other refuses. A refused event is
 * stored with its refusal as reason and state `refused`, which no worker claims (the
 * queue claims only pending and processing rows, events-table.ts) and `tally payments
 * retry` does not re-queue (it takes only dead ones): it is never applied.
 *
 * - `connect_account_refused`: the event names a Stripe `account` (the top-level field
 *   Stripe sets on a Connect account's events) other than the configured one; with none
 *   configured, any account. Such an event is signed with the platform's secret but
 *   speaks for another account: its metadata (`tally_wallet_id`) is anyone's to write.
 * - `livemode_mismatch`: the event's mode is not the API key's.
 */
export type StripeEventRefusal = 'connect_account_refused' | 'livemode_mismatch';

export interface RefusalSettings {
  livemode: boolean;
  account: string | null;
}

/** `account` as the event carries it: absent or null means the platform's own event. */
export function stripeEventRefusal(event: { livemode: boolean; account?: unknown }, settings: RefusalSettings): StripeEventRefusal | null {
  const account = event.account ?? null;
  if (account !== null && account !== settings.account) return 'connect_account_refused';
  if (event.livemode !== settings.livemode) return 'livemode_mismatch';
  return null;
}

/** The 400's message for a refusal, naming the event and what it was compared with. */
export function refusalMessage(
  eventId: string,
  refusal: StripeEventRefusal,
  event: { livemode: boolean; account?: unknown },
  settings: RefusalSettings,
): string {
  const never = 'stored as refused, never applied';
  switch (refusal) {
    case 'connect_account_refused': {
      const named = typeof event.account === 'string' ? event.account : JSON.stringify(event.account ?? null);
      const configured = settings.account
        ? `only ${settings.account} is configured`
        : 'no Stripe account is configured (PUT /v1/payment-settings/stripe with "account" to accept one)';
      return `event ${eventId} names the Stripe account ${named} (Connect), and ${configured}: ${never}`;
    }
    case 'livemode_mismatch':
      return `event ${eventId} is ${event.livemode ? 'live' : 'test'} mode, the configured API key is ${settings.livemode ? 'live' : 'test'} mode: ${never}`;
  }
}
