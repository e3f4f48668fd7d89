import type { Check } from './check.js';

/** Alerts a settlement raised (lifecycle's decisions, written by ledger/alerts.ts): each alert row is one finding. */
export const alertChecks: Check[] = (['late_success_after_release', 'late_usage_after_release', 'usage_exceeds_reservation'] as const).map(
  (alert): Check => ({
    class: alert,
    covers: 'alerts',
    sql: `select a.source as key, jsonb_build_object('job_id', a.job_id, 'tenant_id', a.tenant_id, 'source', a.source) as objects,
                 coalesce(a.detail, '{}') as detail
          from alerts a where a.class = '${alert}'`,
  }),
);
