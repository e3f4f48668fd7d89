import { formatAmount } from '../money/index.js';
import type { SettleResult } from './write-decision.js';

/** What the decision logs need of a logger (pino's and Fastify's loggers are ones). */
export interface DecisionLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** The webhook event a settlement came from, when one did (duties and repairs have none). */
export interface SettledEvent {
  provider: string;
  eventKey: string;
}

/**
 * One line per settlement this call wrote: 'settlement written'. Call it only with what
 * settle() or settleBatch() returned — that is, after COMMIT (or after a lost COMMIT was
 * read back as committed) — so a line never claims a settlement that rolled back. A
 * result that found an equal event's earlier settlement (replayed) wrote nothing and
 * logs nothing; that settlement's own line was written when it committed.
 */
export function logSettlementWritten(log: Pick<DecisionLog, 'info'>, result: SettleResult, event?: SettledEvent): void {
  const settlement = result.settlement;
  if (!settlement || result.replayed) return;
  log.info(
    {
      settlement_key: settlement.settlement_key,
      charge_type: settlement.charge_type,
      // capture: the amount charged, its hold's remainder released; release: the hold voided;
      // adjustment: signed from the wallet's side (negative refunds).
      amount: formatAmount(settlement.amount),
      ...(settlement.charge_type === 'capture' ? { released: formatAmount(settlement.remainder) } : {}),
      ...(settlement.snapshot ? { currency: settlement.snapshot.currency } : {}),
      job_id: settlement.job_id,
      tenant_id: settlement.tenant_id,
      job_state: result.jobState,
      ...(event ? { provider: event.provider, event_id: event.eventKey } : {}),
      ...(settlement.reason ? { reason: settlement.reason } : {}),
      ...(result.alerts.length > 0 ? { alerts: result.alerts } : {}),
    },
    'settlement written',
  );
}
