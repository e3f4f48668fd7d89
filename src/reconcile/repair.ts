import type { Pool } from '../db/pool.js';
import { withTransaction } from '../db/transaction.js';
import { logSettlementWritten, settle, type DecisionLog } from '../ledger/index.js';
import { awaitingEventOf, claimEvent, requeueDead } from '../queue/index.js';
import { settleEvent, settleSettings, type SettleSettings } from '../worker/settle-event.js';
import { logEventOutcome } from '../worker/outcome-log.js';
import { expireGrant, rebuildProjection } from '../funds/index.js';
import { creditStrandedPayment } from '../funds/payments/index.js';
import { formatAmount } from '../money/index.js';
import { DEFAULT_CONFIG, type Config } from '../config/index.js';
import type { Finding } from './checks.js';

/**
 * How a repair claims and settles an event, as a worker would: the workers' lease
 * (TALLY_LEASE_SECONDS) and settle settings, handed down by the command that runs it.
 */
export interface RepairSettings extends SettleSettings {
  readonly leaseSeconds: number;
}

/** The repair settings from the configuration. */
export function repairSettings(config: Pick<Config, 'leaseSeconds' | 'maxAttempts' | 'usageFetchTimeoutMs'>): RepairSettings {
  return { ...settleSettings(config), leaseSeconds: config.leaseSeconds };
}

/** What a run handed none repairs with: every setting's default. */
export const DEFAULT_REPAIR_SETTINGS: RepairSettings = repairSettings(DEFAULT_CONFIG);

export interface RepairAction {
  class: string;
  fingerprint: string;
  action: string;
  result: string;
}

/**
 * Repairs reuse the normal keyed paths, so running them twice does nothing the second
 * time: a stuck or dead event is settled the way a worker would (claim, settle under
 * its fencing token); an expired hold is released through settle() with its own key;
 * a drifted projection is rebuilt from the immutable entries; an overdue grant expiry is
 * posted by the sweep's keyed writer; a payment its grant never took is credited on a grant
 * of its own, keyed by the payment intent. Everything else needs a person.
 *
 * Order matters: events first, so a completion that was stuck settles (captures)
 * before its job's expired hold is considered; an expired hold whose job still has an
 * unsettled event (pending, claimed or dead) is left open — the event wins over the
 * expiry, as it does over the cancel grace, and a dead letter never drops money. Once
 * an operator discards the dead event (tally discard), the hold is released here.
 */
export async function repair(
  pool: Pool,
  findings: Finding[],
  log?: DecisionLog,
  settings: RepairSettings = DEFAULT_REPAIR_SETTINGS,
): Promise<RepairAction[]> {
  const actions: RepairAction[] = [];
  const inOrder = [...findings].sort((a, b) => REPAIR_ORDER.indexOf(a.class) - REPAIR_ORDER.indexOf(b.class));
  for (const finding of inOrder) {
    // One repair failing (a state no keyed path can fix) is reported in the run and
    // does not stop the others, nor the run.
    const attempt = async (action: string, perform: () => Promise<string>) => {
      let result: string;
      try {
        result = await perform();
      } catch (error) {
        result = `failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
      }
      actions.push({ class: finding.class, fingerprint: finding.fingerprint, action, result });
    };
    switch (finding.class) {
      case 'event_stuck':
      case 'event_dead': {
        const { provider, event_key } = finding.objects as { provider: string; event_key: string };
        await attempt('settle_event', () => redriveEvent(pool, provider, event_key, finding.class === 'event_dead', log, settings));
        break;
      }
      case 'hold_open_past_expiry': {
        const { job_id } = finding.objects as { job_id: string };
        await attempt('release_hold', () => releaseExpiredHold(pool, job_id, log));
        break;
      }
      case 'projection_drift': {
        const { account_id } = finding.objects as { account_id: string };
        await attempt('rebuild_projection', async () => {
          await withTransaction(pool, (tx) => rebuildProjection(tx, account_id));
          return 'rebuilt';
        });
        break;
      }
      case 'grant_expiry_overdue': {
        const { grant_id } = finding.objects as { grant_id: string };
        await attempt('expire_grant', () => expireOverdueGrant(pool, grant_id));
        break;
      }
      case 'payment_not_credited': {
        const { payment_intent } = finding.objects as { payment_intent: string };
        await attempt('credit_payment', () => withTransaction(pool, (tx) => creditStrandedPayment(tx, payment_intent)));
        break;
      }
      // grant_drift and allocation_mismatch have no repair: no keyed path rewrites a
      // grant or a share from the entries, and which side is wrong needs a person
      // (checks/grants.ts, checks/allocations.ts).
      default:
        break;
    }
  }
  return actions;
}

const REPAIR_ORDER: readonly string[] = ['event_dead', 'event_stuck', 'projection_drift', 'hold_open_past_expiry', 'grant_expiry_overdue'];

/**
 * Posts an overdue grant expiry through the sweep's own writer (expireGrant): keyed by the
 * grant, so a worker's sweep at the same moment, or a second repair, posts nothing more.
 */
async function expireOverdueGrant(pool: Pool, grantId: string): Promise<string> {
  const lapsed = await withTransaction(pool, (tx) => expireGrant(tx, grantId));
  return lapsed === null ? 'skipped: its expiry has posted' : `expired: ${formatAmount(lapsed)} lapsed`;
}

/**
 * Releases an expired hold with its own key (…:release:1) through settle(), unless an
 * event of the job is still to be settled. The check runs just before the settlement,
 * not under the job's lock: an event accepted in between is settled afterwards as a
 * late one and flagged (late_success_after_release), never silently lost.
 */
async function releaseExpiredHold(pool: Pool, jobId: string, log: DecisionLog | undefined): Promise<string> {
  const waiting = await awaitingEventOf(pool, jobId);
  if (waiting !== null) return `skipped: an event of the job is ${waiting}; it is settled first`;
  const result = await settle(pool, { jobId, event: { type: 'hold.expired' } });
  if (log) logSettlementWritten(log, result);
  return result.reason ?? result.outcome;
}

/**
 * Claims one event now and settles it as a worker would: a dead one is re-queued with a
 * fresh count of attempts first, in the same transaction as the claim, so no worker can
 * take it in between. The claim is the workers' own (queue/claim.ts): a live worker's
 * unexpired claim, or an event behind an earlier one of its job, is left alone.
 */
async function redriveEvent(
  pool: Pool,
  provider: string,
  eventKey: string,
  dead: boolean,
  log: DecisionLog | undefined,
  settings: RepairSettings,
): Promise<string> {
  const claim = await withTransaction(pool, async (tx) => {
    if (dead) await requeueDead(tx, provider, eventKey);
    return claimEvent(tx, provider, eventKey, settings.leaseSeconds);
  });
  if (!claim) return 'skipped: claimed by a live worker, settled, or behind an earlier event of its job';
  const outcome = await settleEvent(pool, claim, settings);
  if (log) logEventOutcome(log, claim, outcome);
  return outcome.kind === 'settled' ? outcome.result.outcome : outcome.kind;
}
