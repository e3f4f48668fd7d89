import type { Queryable } from '../db/pool.js';
import { newId } from '../ids.js';

export type AlertClass =
  | 'usage_exceeds_reservation'
  | 'late_success_after_release'
  | 'late_usage_after_release'
  | 'wallet_overdrawn'
  | 'hold_open_past_expiry'
  /** an outbound webhook endpoint failing for days, disabled (src/outbound/) */
  | 'webhook_endpoint_disabled';

/**
 * Records conditions a settlement noticed, for reconciliation to report. Keyed by
 * (class, source) — the intended constraint — so a retried settlement records once.
 */
export async function raiseAlerts(
  tx: Queryable,
  alerts: { class: AlertClass; detail?: Record<string, unknown> }[],
  context: { tenantId: string; jobId: string; source: string },
): Promise<void> {
  await raiseEachAlert(
    tx,
    alerts.map((a) => ({ ...a, ...context })),
  );
}

export interface RaisedAlert {
  class: AlertClass;
  detail?: Record<string, unknown>;
  tenantId: string;
  /** null for an alert about no job (an endpoint disabled) */
  jobId: string | null;
  source: string;
}

/** raiseAlerts for alerts of several jobs (a batch), in one statement. */
export async function raiseEachAlert(tx: Queryable, alerts: readonly RaisedAlert[]): Promise<void> {
  if (alerts.length === 0) return;
  await tx.query({
    name: 'raise_alerts',
    text: `insert into alerts (id, tenant_id, job_id, class, source, detail)
     select * from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::jsonb[])
     on conflict on constraint alerts_class_source_key do nothing`,
    values: [
      alerts.map(() => newId()),
      alerts.map((a) => a.tenantId),
      alerts.map((a) => a.jobId),
      alerts.map((a) => a.class),
      alerts.map((a) => a.source),
      alerts.map((a) => JSON.stringify(a.detail ?? {})),
    ],
  });
}
