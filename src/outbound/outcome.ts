import type { Pool, PoolClient, Queryable } from '../db/pool.js';
import { newId } from '../ids.js';
import { LeaseLost, commitFenced, deadLetter, retryLater, writeFenced } from '../queue/engine/index.js';
import type { ClaimedDelivery } from './claim.js';
import { DELIVERIES_TABLE, fencedDelivery } from './deliveries-table.js';
import type { AttemptResult } from './deliver.js';
import { holdDeliveriesSql } from './endpoint-holds.js';
import type { AfterFailure } from './retry-schedule.js';

/** The alert class raised when an endpoint is disabled for failing too long. */
export const ENDPOINT_DISABLED_ALERT = 'webhook_endpoint_disabled';

/**
 * Raises an alert in `tx`. The alerts table is the ledger's (alerts/raise.ts), and
 * ledger/ imports outbound/ (messages are written with the effects), so outbound/ cannot
 * import it: the CLI hands this in (cli/outbound-runtime.ts), as it hands the worker its duties.
 */
export type RaiseAlert = (
  tx: Queryable,
  alert: { tenantId: string; class: typeof ENDPOINT_DISABLED_ALERT; source: string; detail: Record<string, unknown> },
) => Promise<void>;

/** What became of a delivery after one attempt, as recorded. */
export type RecordedOutcome =
  | { kind: 'delivered' }
  | { kind: 'retry'; delayMs: number; endpointDisabled: boolean }
  | { kind: 'dead'; endpointDisabled: boolean }
  /** the claim's lease ran out and another worker took it over: nothing was written */
  | { kind: 'lease_lost' };

/**
 * Writes one attempt's outcome in one short transaction, fenced by the claim's token (the
 * queue engine's commitFenced, which also reads a lost COMMIT back before writing again):
 * the delivery's new state (delivered; or the engine's retry with the next attempt's time,
 * or its dead letter), the attempt in the log, and the endpoint's health — a success
 * clears `failing_since`, a failure sets it if unset, and an endpoint failing without a
 * success for longer than `disableAfterMs` is disabled and an alert raised (once per disabling).
 */
export async function recordOutcome(
  pool: Pool,
  claim: ClaimedDelivery,
  attempt: AttemptResult,
  failure: AfterFailure | null,
  disableAfterMs: number,
  raiseAlert: RaiseAlert,
): Promise<RecordedOutcome> {
  const fenced = fencedDelivery(claim);
  const recorded = await commitFenced(pool, DELIVERIES_TABLE, fenced, async (tx): Promise<RecordedOutcome> => {
    const moved = attempt.delivered
      ? await writeFenced(tx, DELIVERIES_TABLE, fenced, { name: 'delivered', set: "state = 'delivered', delivered_at = now()" })
      : failure?.kind === 'retry'
        ? await retryLater(tx, DELIVERIES_TABLE, fenced, failure.delayMs, null)
        : await deadLetter(tx, DELIVERIES_TABLE, fenced, null);
    if (!moved) throw new LeaseLost(`outbound delivery ${claim.id}`);
    await insertAttempt(tx, claim, attempt);
    if (attempt.delivered) {
      await tx.query({
        name: 'endpoint_answers',
        text: `update webhook_endpoints set failing_since = null where id = $1 and failing_since is not null`,
        values: [claim.endpoint_id],
      });
      return { kind: 'delivered' };
    }
    const endpointDisabled = await noteFailure(tx, claim, attempt, disableAfterMs, raiseAlert);
    return failure?.kind === 'retry' ? { kind: 'retry', delayMs: failure.delayMs, endpointDisabled } : { kind: 'dead', endpointDisabled };
  });
  return recorded === 'lease_lost' ? { kind: 'lease_lost' } : recorded;
}

async function insertAttempt(tx: PoolClient, claim: ClaimedDelivery, attempt: AttemptResult): Promise<void> {
  await tx.query({
    name: 'insert_outbound_attempt',
    text: `insert into outbound_attempts (id, delivery_id, endpoint_id, started_at, status, latency_ms, response_excerpt, error, tenant_id)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    values: [
      newId(),
      claim.id,
      claim.endpoint_id,
      attempt.startedAt,
      attempt.status,
      attempt.latencyMs,
      attempt.excerpt,
      attempt.error?.slice(0, 1000) ?? null,
      claim.tenant_id,
    ],
  });
}

/** Marks the endpoint failing; disables it (with an alert) once it has failed for too long. True when this disabled it. */
async function noteFailure(
  tx: PoolClient,
  claim: ClaimedDelivery,
  attempt: AttemptResult,
  disableAfterMs: number,
  raiseAlert: RaiseAlert,
): Promise<boolean> {
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
  await raiseAlert(tx, {
    tenantId: row.tenant_id,
    class: ENDPOINT_DISABLED_ALERT,
    source: `webhook_endpoint:${claim.endpoint_id}:${row.disabled_at.toISOString()}`,
    detail: {
      endpoint_id: claim.endpoint_id,
      url: row.url,
      failing_since: row.failing_since.toISOString(),
      last_status: attempt.status,
      last_error: attempt.error,
    },
  });
  return true;
}
