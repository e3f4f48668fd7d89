import type { DecisionLog } from '../ledger/index.js';

/** What the line tells of an exception (a ReconciliationException is one). */
interface RaisedException {
  id: string;
  class: string;
  objects: Record<string, unknown>;
  detail: Record<string, unknown>;
}

/**
 * One 'reconciliation exception' line per exception a run raised: found for the first
 * time, or found again after a run had seen it cleared. One still open from an earlier
 * run was logged then (the run's summary counts it), so a scheduled run every few
 * minutes does not repeat it. Written after the run's transaction committed. The
 * objects named (job_id, tenant_id, wallet_id, settlement_key, provider, event …) are
 * top-level fields, event_key spelled event_id as in the other decision lines.
 */
export function logRaisedExceptions(log: Pick<DecisionLog, 'warn'>, runId: string, raised: readonly RaisedException[]): void {
  for (const exception of raised) {
    const { event_key, ...objects } = exception.objects;
    log.warn(
      {
        class: exception.class,
        exception_id: exception.id,
        run_id: runId,
        ...objects,
        ...(event_key !== undefined ? { event_id: event_key } : {}),
        detail: exception.detail,
      },
      'reconciliation exception',
    );
  }
}
