import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { loadServerSecret } from '../api/server-secret.js';
import { debugStacks, processConfig } from '../config/index.js';
import { openDatabase } from '../db/connect.js';
import { migrate } from '../db/migrate.js';
import { findStripeEvent, readStripeCredentials, requeueDeadStripeEvent, stripeClient, syncStripeEvents } from '../funds/payments/index.js';

/**
 * `tally payments sync [--since T]`, on the database itself (like reconcile): lists
 * Stripe's events since the last one received and receives those that never arrived,
 * exactly as if delivered (docs/payments.md). The server's secret unseals the API key:
 * run it where `serve` runs, or with the same TALLY_SECRET_KEY.
 */
export function registerPaymentCommands(program: Command): void {
  const payments =
    program.commands.find((c) => c.name() === 'payments') ?? program.command('payments').description('payments through Stripe');
  payments
    .command('sync')
    .description(
      "receive the Stripe events that never arrived: lists Stripe's events since the newest received (or --since) and stores each missing one as a delivery would",
    )
    .option('--since <time>', 'start here instead: an RFC 3339 instant or unix seconds (Stripe keeps 30 days of events)', parseSince)
    .option('--json', 'print the report as JSON')
    .action(async (options: { since?: number; json?: boolean }) => paymentsSyncCommand(options));
  payments
    .command('retry <event_id>')
    .description('queue a dead Stripe event again (reconciliation shows it as payment_event_stuck): the workers settle it like a new one')
    .action(async (eventId: string) => paymentsRetryCommand(eventId));
}

async function paymentsRetryCommand(eventId: string): Promise<void> {
  const db = await openDatabase(processConfig(), { max: 1 });
  try {
    await migrate(db.pool);
    if (await requeueDeadStripeEvent(db.pool, eventId)) {
      console.log(`${eventId} is pending again; a worker settles it shortly`);
      return;
    }
    const event = await findStripeEvent(db.pool, eventId);
    console.error(event ? `${eventId} is ${event.state}, not dead: nothing to retry` : `no Stripe event ${eventId} was received`);
    process.exitCode = 1;
  } finally {
    await db.close();
  }
}

function parseSince(value: string): number {
  const seconds = /^\d{1,12}$/.test(value) ? Number(value) : Date.parse(value) / 1000;
  if (!Number.isFinite(seconds)) throw new InvalidArgumentError('give an RFC 3339 instant (2026-12-01T00:00:00Z) or unix seconds');
  return Math.floor(seconds);
}

async function paymentsSyncCommand(options: { since?: number; json?: boolean }): Promise<void> {
  const config = processConfig();
  try {
    const db = await openDatabase(config, { max: 2 });
    try {
      await migrate(db.pool);
      const credentials = await readStripeCredentials(db.pool, await loadServerSecret(config));
      if (!credentials) throw new Error('Stripe is not configured: PUT /v1/payment-settings/stripe first');
      const report = await syncStripeEvents(db.pool, stripeClient(credentials), credentials, options.since ?? null);
      if (options.json) console.log(JSON.stringify(report, null, 2));
      else
        console.log(
          `listed ${report.listed} Stripe events since ${report.since === null ? 'the start' : new Date(report.since * 1000).toISOString()}: ` +
            `${report.received} received now (the workers apply them), ${report.already_received} received before` +
            (report.refused ? `, ${report.refused} refused (another Stripe account's, or the other mode than the API key)` : ''),
        );
    } finally {
      await db.close();
    }
  } catch (error) {
    console.error(`tally payments sync: ${error instanceof Error ? error.message : String(error)}`);
    if (debugStacks() && error instanceof Error) console.error(error.stack);
    process.exitCode = 1;
  }
}
