import type { Check } from './check.js';

/**
 * Alerts a settlement raised (lifecycle's decisions, written by alerts/raise.ts): each
 * alert row is one finding. Its detail is the alert's own, worked out when it was raised
 * (ledger/alert-details.ts: the usage, its price, what was and was not billed), with the
 * instant it was raised. An alert raised before alerts kept their amounts has none: the
 * finding still stands, and says so.
 */
export const RAISED_BEFORE_DETAILS =
  'raised before alerts kept their amounts: read the usage and the amounts on the job (GET /v1/jobs/{id}: its events, settlements and their pricing)';

export const alertChecks: Check[] = (['late_success_after_release', 'late_usage_after_release', 'usage_exceeds_reservation'] as const).map(
  (alert): Check => ({
    class: alert,
    covers: 'alerts',
    sql: `select a.source as key, jsonb_build_object('job_id', a.job_id, 'tenant_id', a.tenant_id, 'source', a.source) as objects,
                 case when a.detail is null or a.detail = '{}'::jsonb
                      then jsonb_build_object('note', '${RAISED_BEFORE_DETAILS}')
                      else a.detail end
                 || jsonb_build_object('raised_at', a.created_at) as detail
          from alerts a where a.class = '${alert}'`,
  }),
);
