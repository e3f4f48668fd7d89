import type { Alert, Decision, Intent, LifecycleEvent } from '../lifecycle/index.js';
import { formatAmount } from '../money/index.js';
import { billable, type Usage } from '../pricing/index.js';
import type { LockedJob } from './locked-job.js';

/**
 * What an alert a decision raised must say for an operator to act on it, worked out when
 * it is raised (the job, its price and the usage are at hand then, and later only the
 * stored settlements and events are) and stored with the alert: GET /v1/alerts and the
 * reconciliation's exception show it as it is. Amounts are the wire's decimal strings,
 * priced with the job's pinned price (pricing's billable(): the same arithmetic the
 * capture used). Pure.
 *
 * - usage_exceeds_reservation: the usage billed, its `price`, the `reserved` hold, what
 *   the job is `billed` for it in all (min(price, reserved)), what went `unbilled`, what
 *   this settlement itself `charged` (the capture, or the adjustment's signed
 *   difference), and its `settlement_key`.
 * - late_success_after_release, late_usage_after_release: the `usage` reported after the
 *   release, its `price`, and `would_have_billed` (what a capture would have charged:
 *   min(price, reserved)); nothing was billed (`billed` 0).
 */

export interface AlertContext {
  job: LockedJob;
  decision: Decision;
  event: LifecycleEvent;
  /** the provider's event that raised it; null for the API's or a duty's */
  source: { provider: string; eventKey: string } | null;
}

export function decisionAlertDetail(alert: Alert, context: AlertContext): Record<string, unknown> {
  const { job, event, source } = context;
  const common = {
    currency: job.row.currency,
    price_version: job.view.priceBook.version,
    event_type: event.type,
    ...(source ? { provider: source.provider, event_key: source.eventKey } : {}),
  };
  try {
    return { ...common, ...(alert === 'usage_exceeds_reservation' ? exceeded(context) : late(context)) };
  } catch (error) {
    // A detail that cannot be worked out must not stop the settlement that raises it:
    // the alert is still recorded, saying why its amounts are missing.
    return { ...common, detail_error: error instanceof Error ? error.message : String(error) };
  }
}

function exceeded({ job, decision }: AlertContext): Record<string, unknown> {
  const intent = decision.intents.find((i): i is Extract<Intent, { kind: 'capture' | 'adjustment' }> => i.kind === 'capture' || i.kind === 'adjustment');
  if (!intent) throw new Error('usage_exceeds_reservation raised by a decision that billed no usage');
  // the reservation the capture billed from: grown first by the event's own extension, if any
  const reserved = decision.growth.reserved;
  const charge = billable(job.view.priceBook, intent.snapshot.usage, reserved);
  return {
    settlement_key: intent.key,
    charge_type: intent.kind,
    usage: intent.snapshot.usage,
    price: formatAmount(charge.price),
    reserved: formatAmount(reserved),
    billed: formatAmount(charge.amount),
    unbilled: formatAmount(charge.price - charge.amount),
    charged: formatAmount(intent.amount),
  };
}

function late({ job, event }: AlertContext): Record<string, unknown> {
  const usage: Usage | undefined = 'usage' in event ? event.usage : undefined;
  const correction = event.type === 'job.usage_corrected' ? { correction: event.correction } : {};
  if (usage === undefined) return { usage: null, ...correction };
  const charge = billable(job.view.priceBook, usage, job.view.reserved);
  return {
    usage,
    ...correction,
    price: formatAmount(charge.price),
    reserved: formatAmount(job.view.reserved),
    would_have_billed: formatAmount(charge.amount),
    billed: formatAmount(0n),
  };
}
