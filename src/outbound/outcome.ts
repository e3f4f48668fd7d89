import type { Pool, PoolClient } from '../db/pool.js';
import { withTransaction } from '../db/transaction.js';
import { newId } from '../ids.js';
import type { ClaimedDelivery } from './claim.js';
import type { AttemptResult } from './deliver.js';
import { holdDeliveriesSql } from './endpoint-holds.js';
import type { AfterFailure } from './retry-schedule.js';

/** The alert class raised when an endpoint is disabled for failing too long. */
export const ENDPOINT_DISABLED_ALERT = 'webhook_endpoint_disabled';

/** What became of a delivery after one attempt, as recorded. */
export type RecordedOutcome =
  | { kind: 'delivered' }
  | { kind: 'retry'; delayMs: number; endpointDisabled: boolean }
  | { kind: 'dead'; endpointDisabled: boolean }
  /** the claim's lease ran out and another worker took it over: nothing was written */
  | { kind: 'lease_lost' };

/**
 * Writes one attempt's outcome in one short transaction, fenced by the claim's token: the
 * delivery's new state (delivered, failed with the next attempt's time, or dead), the
 * attempt in the log, and the endpoint's health — a success clears `failing_since`, a
 * failure sets it if unset, and an endpoint failing without a success for longer than
 * `disableAfterMs` is disabled and an alert raised (once per disabling).
 */
export async function recordOutcome(
  pool: Pool,
  claim: ClaimedDelivery,
  attempt: AttemptResult,
  failure: AfterFailure | null,
  disableAfterMs: number,
): Promise<RecordedOutcome> {
  return await withTransaction(pool, async (tx) => {
    const moved = await tx.query({
      name: 'record_outbound_delivery',
      text: `update outbound_deliveries
             set state = $3, attempts = attempts + case when $3 = 'delivered' then 0 else 1 end,
                 next_attempt_at = case when $3 = 'failed' then now() + make_interval(secs => $4::double precision / 1000) else next_attempt_at end,
                 lease_expires_at = null,
                 delivered_at = case when $3 = 'delivered' then now() end
             where id = $1 and claim_token = $2 and state = 'delivering'`,
      values: [claim.id, claim.claim_token, stateOf(attempt, failure), failure?.kind === 'retry' ? failure.delayMs : 0],
    });
    if (moved.rowCount === 0) return { kind: 'lease_lost' };
    await insertAttempt(tx, claim, attempt);
    if (attempt.delivered) {
      await tx.query({
        name: 'endpoint_answers',
        text: `update webhook_endpoints set failing_since = null where id = $1 and failing_since is not null`,
        values: [claim.endpoint_id],
      });
      return { kind: 'delivered' };
    }
    const endpointDisabled = await noteFailure(tx, claim, attempt, disableAfterMs);
    return failure?.kind === 'retry' ? { kind: 'retry', delayMs: failure.delayMs, endpointDisabled } : { kind: 'dead', endpointDisabled };
  });
}

function stateOf(attempt: AttemptResult, failure: AfterFailure | null): 'delivered' | 'failed' | 'dead' {
  if (attempt.delivered) return 'delivered';
  return failure?.kind === 'retry' ? 'failed' : 'dead';
}

async function insertAttempt(tx: PoolClient, claim: ClaimedDelivery, attempt: AttemptResult): Promise<void> {
  await tx.query({
    name: 'insert_outbound_attempt',
    text: `insert into outbound_attempts (id, delivery_id, endpoint_id, started_at, status, latency_ms, response_excerpt, error)
           values ($1, $2, $3, $4, $5, $6, $7, $8)`,
    values: [
      newId(),
      claim.id,
      claim.endpoint_id,
      attempt.startedAt,
      attempt.status,
      attempt.latencyMs,
      attempt.excerpt,
      attempt.error?.slice(0, 1000) ?? null,
    ],
  });
}

/** Marks the endpoint failing; disables it (with an alert) once it has failed for too long. True when this disabled it. */
async function noteFailure(tx: PoolClient, claim: ClaimedDelivery, attempt: AttemptResult, disableAfterMs: number): Promise<boolean> {
  const disabled = await tx.query<{ tenant_id: string; url: string; failing_since: Date; disabled_at: Date; just_disabled: boolean }>({
    name: 'endpoint_fails',
    // One statement, both columns computed from the row as it was: a failure starts the
    // failing period if none runs; past the limit it also disables the endpoint.
    text: `update webhook_endpoints
           set failing_since = coalesce(failing_since, now()),
               disabled_at = case when disabled_at is null and coalesce(failing_since, now()) <= now() - make_interval(secs => $2::double precision / 1000)
                                  then now() else disabled_at end,
               disabled_reason = case when disabled_at is null and coalesce(failing_since, now()) <= now() - make_interval(secs => $2::double precision / 1000)
                                  then 'failing since ' || to_char(coalesce(failing_since, now()) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || ' without a successful delivery'
                                  else disabled_reason end
           where id = $1
           returning tenant_id, url, failing_since, disabled_at, disabled_at is not null and disabled_at = now() as just_disabled`,
    values: [claim.endpoint_id, disableAfterMs],
  });
  const row = disabled.rows[0];
  if (!row?.just_disabled) return false;
  await tx.query(holdDeliveriesSql('$1', 'true'), [claim.endpoint_id]);
  await tx.query(
    `insert into alerts (id, tenant_id, job_id, class, source, detail)
     values ($1, $2, null, $3, $4, $5)
     on conflict on constraint alerts_class_source_key do nothing`,
    [
      newId(),
      row.tenant_id,
      ENDPOINT_DISABLED_ALERT,
      `webhook_endpoint:${claim.endpoint_id}:${row.disabled_at.toISOString()}`,
      JSON.stringify({
        endpoint_id: claim.endpoint_id,
        url: row.url,
        failing_since: row.failing_since.toISOString(),
        last_status: attempt.status,
        last_error: attempt.error,
      }),
    ],
  );
  return true;
}
