import type { Pool } from '../db/pool.js';
import { withTransaction } from '../db/transaction.js';
import { settle } from '../ledger/settle.js';
import { settleEvent } from '../worker/settle-event.js';
import type { ClaimedEvent } from '../worker/queue.js';
import { DEFAULT_LEASE_SECONDS } from '../worker/worker.js';
import { PROJECTION_FROM_ENTRIES, type Finding } from './checks.js';

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
 * a drifted projection is rebuilt from the immutable entries. Everything else needs a
 * person.
 */
export async function repair(pool: Pool, findings: Finding[]): Promise<RepairAction[]> {
  const actions: RepairAction[] = [];
  for (const finding of findings) {
    switch (finding.class) {
      case 'event_stuck':
      case 'event_dead': {
        const { provider, event_key } = finding.objects as { provider: string; event_key: string };
        const result = await redriveEvent(pool, provider, event_key, finding.class === 'event_dead');
        actions.push({ class: finding.class, fingerprint: finding.fingerprint, action: 'settle_event', result });
        break;
      }
      case 'hold_open_past_expiry': {
        const { job_id } = finding.objects as { job_id: string };
        const result = await settle(pool, { jobId: job_id, event: { type: 'hold.expired' } });
        actions.push({ class: finding.class, fingerprint: finding.fingerprint, action: 'release_hold', result: result.reason ?? result.outcome });
        break;
      }
      case 'projection_drift': {
        const { account_id } = finding.objects as { account_id: string };
        await rebuildProjection(pool, account_id);
        actions.push({ class: finding.class, fingerprint: finding.fingerprint, action: 'rebuild_projection', result: 'rebuilt' });
        break;
      }
      default:
        break;
    }
  }
  return actions;
}

/**
 * Claims one event now (a fresh fencing token; a live worker's unexpired claim is
 * left alone) and settles it as a worker would.
 */
async function redriveEvent(pool: Pool, provider: string, eventKey: string, resetAttempts: boolean): Promise<string> {
  const claimed = await pool.query<ClaimedEvent>(
    `update webhook_events
     set state = 'processing', lease_until = now() + make_interval(secs => $3), fencing_token = nextval('fencing_tokens'),
         attempts = case when $4 then 1 else attempts + 1 end, run_after = now()
     where provider = $1 and event_key = $2
       and (state in ('pending', 'dead') or (state = 'processing' and lease_until < now()))
       and not exists (
         select 1 from webhook_events earlier
         where earlier.job_id = webhook_events.job_id and earlier.seq < webhook_events.seq and earlier.state in ('pending', 'processing'))
     returning provider, event_key, tenant_id, job_id, seq, type, event, usage, attempts, fencing_token`,
    [provider, eventKey, DEFAULT_LEASE_SECONDS, resetAttempts],
  );
  const claim = claimed.rows[0];
  if (!claim) return 'skipped: claimed by a live worker, settled, or behind an earlier event of its job';
  const outcome = await settleEvent(pool, claim);
  return outcome.kind === 'settled' ? outcome.result.outcome : outcome.kind;
}

async function rebuildProjection(pool: Pool, accountId: string): Promise<void> {
  await withTransaction(pool, async (tx) => {
    // Lock the account first, so no settlement moves it while we sum.
    await tx.query('select id from accounts where id = $1 for update', [accountId]);
    await tx.query(
      `with sums as (${PROJECTION_FROM_ENTRIES})
       update accounts a set
         debits_pending = coalesce(s.debits_pending, 0), debits_posted = coalesce(s.debits_posted, 0),
         credits_pending = coalesce(s.credits_pending, 0), credits_posted = coalesce(s.credits_posted, 0)
       from (select $1::uuid as id) target left join sums s on s.account_id = target.id
       where a.id = target.id`,
      [accountId],
    );
  });
}
