import type { Pool } from '../db/pool.js';
import { Poller } from '../queue/engine/index.js';
import { claimDeliveries, type ClaimedDelivery } from './claim.js';
import { deliver, type AttemptResult } from './deliver.js';
import type { DestinationPolicy, Resolver } from './destinations.js';
import { recordOutcome, type RaiseAlert, type RecordedOutcome } from './outcome.js';
import { afterFailure } from './retry-schedule.js';
import type { OutboundSettings } from './settings.js';

/** What the delivery worker logs to. */
export interface DeliveryLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface DeliveryWorkerOptions {
  settings: OutboundSettings;
  policy: DestinationPolicy;
  log: DeliveryLog;
  /** raises the alert of an endpoint disabled for failing (the ledger's alerts module, handed in by the CLI) */
  raiseAlert: RaiseAlert;
  /** DNS, replaceable in tests */
  resolver?: Resolver;
}

/**
 * Delivers outbound webhooks at least once: `settings.concurrency` loops, each claiming one
 * due delivery (claim.ts: the queue engine's claim — SKIP LOCKED, lease, fencing token), sending it outside any
 * transaction (deliver.ts), and recording the attempt and the outcome under the token
 * (outcome.ts). A worker killed mid-delivery leaves its claim to lapse: the delivery is
 * claimed and sent again — so receivers dedupe by webhook-id. Idle loops poll
 * (queue/engine/poller.ts).
 *
 * `pool` is a function: the CLI's worker follows the database to a new pool when it
 * moves (an embedded server restarted on another port), and this worker with it.
 */
export class DeliveryWorker {
  private readonly poller: Poller;

  constructor(
    private readonly pool: () => Pool,
    private readonly options: DeliveryWorkerOptions,
  ) {
    this.poller = new Poller({ pollIntervalMs: options.settings.pollIntervalMs, log: options.log });
  }

  start(): void {
    this.poller.start(
      Array.from({ length: this.options.settings.concurrency }, () => ({
        failed: 'claiming outbound deliveries failed; retrying after the poll interval',
        round: () => this.deliverNext(),
      })),
    );
  }

  /** Stops claiming; deliveries in flight finish (each within the timeout) and are recorded. */
  async stop(): Promise<void> {
    await this.poller.stop();
  }

  /** One due delivery claimed and attempted; false when none was due, or its outcome could not be recorded. */
  private async deliverNext(): Promise<boolean> {
    const [claim] = await claimDeliveries(this.pool(), 1, this.options.settings.leaseSeconds);
    if (!claim) return false;
    // Work is waiting: another idle loop may find more.
    this.poller.wakeOne();
    return await this.attempt(claim);
  }

  /** Sends one delivery and records it; false when the record could not be written (the database is away). */
  private async attempt(claim: ClaimedDelivery): Promise<boolean> {
    const { settings, policy, resolver, log, raiseAlert } = this.options;
    const result = await deliver(
      { url: claim.url, messageId: claim.message_id, body: JSON.stringify(claim.payload), secrets: claim.secrets },
      { policy, timeoutMs: settings.timeoutMs, resolver },
    );
    const failure = result.delivered ? null : afterFailure(claim.attempts + 1, Date.now() - claim.created_at.getTime(), settings);
    let outcome: RecordedOutcome;
    try {
      outcome = await recordOutcome(this.pool(), claim, result, failure, settings.disableAfterMs, raiseAlert);
    } catch (error) {
      // The database is away (a lost COMMIT that could not be read back either): the
      // lease lapses and the delivery is sent again later.
      log.warn(
        { err: error, message_id: claim.message_id },
        'could not record an outbound delivery; it is sent again once its lease runs out',
      );
      return false;
    }
    logOutcome(log, claim, result, outcome);
    return true;
  }
}

function logOutcome(log: DeliveryLog, claim: ClaimedDelivery, result: AttemptResult, outcome: RecordedOutcome): void {
  const fields = {
    message_id: claim.message_id,
    type: claim.payload.type,
    endpoint_id: claim.endpoint_id,
    attempt: claim.attempts + 1,
    status: result.status,
    latency_ms: result.latencyMs,
    error: result.error,
  };
  if (outcome.kind === 'lease_lost')
    return log.warn(fields, 'outbound delivery attempted after its lease ran out; another worker owns it now');
  if (outcome.kind === 'dead') log.warn(fields, 'outbound delivery gave up: its retry window passed');
  else if (outcome.kind === 'retry') log.info({ ...fields, retry_in_ms: outcome.delayMs }, 'outbound delivery failed; retrying');
  if (outcome.kind !== 'delivered' && outcome.endpointDisabled) {
    log.warn(
      { endpoint_id: claim.endpoint_id, tenant_id: claim.tenant_id },
      'webhook endpoint disabled: it failed without a success for too long (alert webhook_endpoint_disabled)',
    );
  }
}
