import { createHash } from 'node:crypto';
import type { Queryable } from '../../db/pool.js';
import { stripeEventRefusal } from './event-refusal.js';
import type { PaymentSettings } from './settings.js';
import type { Stripe } from './stripe-client.js';
import { knownEventIds, newestReceived, storeStripeEvent } from './stripe-events.js';

/**
 * `tally payments sync`: Stripe's Events API lists what it sent (30 days of it); each
 * event Tally never received is stored exactly as a delivery would store it (then settled
 * by the workers like any other). From the newest event received (`created` of that
 * second again, known ids skipped), or from `since`. An event fetched through the API
 * with the account's key needs no signature; it is refused exactly as a delivery of it
 * would be (event-refusal.ts: another Stripe account's, the other mode's).
 */
export interface SyncReport {
  since: number | null;
  listed: number;
  received: number;
  already_received: number;
  refused: number;
}

/** Stripe keeps events for 30 days: without a start, that is where a first sync begins. */
const STRIPE_EVENT_RETENTION_SECONDS = 30 * 24 * 3600;

export async function syncStripeEvents(
  db: Queryable,
  stripe: Stripe,
  settings: PaymentSettings,
  since: number | null,
): Promise<SyncReport> {
  const start = since ?? (await newestReceived(db)) ?? Math.floor(Date.now() / 1000) - STRIPE_EVENT_RETENTION_SECONDS;
  const report: SyncReport = { since: start, listed: 0, received: 0, already_received: 0, refused: 0 };
  const page: Stripe.Event[] = [];
  const flush = async () => {
    const known = await knownEventIds(
      db,
      page.map((e) => e.id),
    );
    for (const event of page) {
      if (known.has(event.id)) {
        report.already_received++;
        continue;
      }
      const payload = Buffer.from(JSON.stringify(event));
      const object = event.data.object as { id?: unknown };
      const outcome = await storeStripeEvent(db, {
        id: event.id,
        type: event.type,
        livemode: event.livemode,
        objectId: typeof object.id === 'string' ? object.id : null,
        payload,
        payloadHash: createHash('sha256').update(payload).digest(),
        created: event.created,
        source: 'sync',
        refused: stripeEventRefusal(event, settings),
      });
      if (outcome.kind === 'accepted') report.received++;
      else if (outcome.kind === 'refused') report.refused++;
      else report.already_received++;
    }
    page.length = 0;
  };
  for await (const event of stripe.events.list({ created: { gte: start }, limit: 100 })) {
    report.listed++;
    page.push(event);
    if (page.length === 100) await flush();
  }
  await flush();
  return report;
}
