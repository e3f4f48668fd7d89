import { formatAmount } from '../money/index.js';
import { walletBalances, type AccountRow, type WalletEntry } from '../funds/index.js';
import { changeView } from './entry-changes.js';
import type { SettlementRow } from '../ledger/index.js';
import type { JobRow } from '../jobs/rows.js';
import type { JobDetails } from '../jobs/view.js';

/** What clients see. Amounts are decimal strings; field names as in CONTRACT.md. */

export function walletView(row: AccountRow) {
  const b = walletBalances(row);
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    currency: row.currency,
    metadata: row.metadata,
    balance: formatAmount(b.balance),
    reserved: formatAmount(b.reserved),
    available: formatAmount(b.available),
    created_at: row.created_at.toISOString(),
  };
}

export function entryView(entry: WalletEntry) {
  return {
    id: entry.id,
    entry_type: entry.entryType,
    amount: formatAmount(entry.amount),
    settlement_key: entry.settlementKey,
    job_id: entry.jobId,
    grant_id: entry.grantId,
    reference: entry.reference,
    created_at: entry.createdAt,
    sequence: Number(entry.sequence),
    balance_after: formatAmount(entry.balanceAfter),
    reserved_after: formatAmount(entry.reservedAfter),
    available_after: formatAmount(entry.balanceAfter - entry.reservedAfter),
    ...changeView(entry.change),
  };
}

export function settlementView(s: SettlementRow) {
  return {
    key: s.settlement_key,
    charge_type: s.charge_type,
    version: s.version,
    amount: formatAmount(s.amount),
    status: 'posted' as const,
    created_at: s.created_at.toISOString(),
    ...(s.charge_type === 'capture' ? { released_remainder: formatAmount(s.remainder) } : {}),
    ...(s.reason ? { reason: s.reason } : {}),
    ...(s.snapshot ? { pricing: { ...s.snapshot, lines: [...s.snapshot.lines] } } : {}),
  };
}

export function jobSummaryView(job: JobRow, priceVersion: number) {
  return {
    id: job.id,
    state: job.state,
    wallet_id: job.wallet_id,
    provider: job.provider,
    provider_job_ref: job.provider_job_ref,
    model: job.model,
    currency: job.currency,
    limits: job.limits,
    metadata: job.metadata,
    price_version: priceVersion,
    reserved: formatAmount(job.reserved),
    captured: formatAmount(job.captured ?? 0n),
    released: formatAmount(job.released ?? 0n),
    adjusted: formatAmount(job.adjusted),
    cancel_requested_at: job.cancel_requested_at?.toISOString() ?? null,
    hold_expires_at: job.hold_expires_at.toISOString(),
    created_at: job.created_at.toISOString(),
    auto_extend: job.auto_extend,
    usage_so_far: job.usage_so_far,
    hold_exhausted: job.hold_exhausted
      ? {
          reason: job.hold_exhausted.reason,
          reserved: formatAmount(BigInt(job.hold_exhausted.reserved)),
          usage_price: formatAmount(BigInt(job.hold_exhausted.usage_price)),
          at: new Date(job.hold_exhausted.at).toISOString(),
        }
      : null,
  };
}

type EventFields = JobDetails['events'][number];

/** A provider event as its reader may see it (the job view's events, and the events list). */
export function eventView(e: EventFields, audience: 'tenant' | 'admin') {
  return {
    event_key: e.event_key,
    provider: e.provider,
    type: e.type,
    state: e.state,
    reason: e.reason,
    attempts: e.attempts,
    error_code: e.error_code,
    ...(audience === 'admin'
      ? {
          last_error: e.last_error,
          ...(e.state === 'discarded'
            ? { discarded_by: e.discarded_by, discarded_at: e.discarded_at?.toISOString() ?? null, discard_note: e.discard_note }
            : {}),
        }
      : {}),
    received_at: e.received_at.toISOString(),
    processed_at: e.processed_at?.toISOString() ?? null,
  };
}

/**
 * A job as its reader may see it: a tenant gets each event's stable `error_code`; the
 * raw `last_error` (which can name an operator's private provider URL) only the admin.
 */
export function jobView(
  { job, priceVersion, settlements, events, alerts, alertDetails, deliveries, funding, fundingDebt, extensions }: JobDetails,
  audience: 'tenant' | 'admin',
) {
  return {
    ...jobSummaryView(job, priceVersion),
    settlements: settlements.map(settlementView),
    events: events.map((e) => eventView(e, audience)),
    alerts,
    alert_details: alertDetails.map((a) => ({ ...a, detail: a.detail ?? {}, created_at: a.created_at.toISOString() })),
    deliveries: deliveries.map((d) => ({ ...d, received_at: d.received_at.toISOString() })),
    funding: funding.map((s) => ({
      grant_id: s.grant_id,
      category: s.category,
      held: formatAmount(s.held),
      captured: formatAmount(s.captured),
      returned: formatAmount(s.returned),
      refunded: formatAmount(s.refunded),
      adjusted: formatAmount(s.adjusted),
    })),
    extensions: extensions.map((x) => ({
      version: x.version,
      settlement_key: x.settlement_key,
      amount: formatAmount(x.amount),
      limits: x.limits,
      source: x.source,
      created_at: x.created_at.toISOString(),
    })),
    funding_debt: formatAmount(fundingDebt),
  };
}
