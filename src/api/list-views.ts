import { Type, type TSchema } from '@sinclair/typebox';
import { ALERT_CLASSES, type AlertRow } from '../alerts/index.js';
import type { SettlementRow } from '../ledger/index.js';
import type { ListedJob } from '../jobs/list.js';
import type { ListedEvent } from '../queue/event-list.js';
import { EVENT_STATES } from '../queue/index.js';
import type { ListedPriceVersion } from '../catalog/price-list.js';
import type { TenantRow } from '../catalog/tenant-list.js';
import { EXCEPTION_STATUSES, type ListedException } from '../reconcile/exception-list.js';
import { Metadata } from './schemas.js';
import { JobEventView, JobSummaryView, ReconciliationExceptionView, SettlementView } from './view-schemas.js';
import { eventView, jobSummaryView, settlementView } from './views.js';

/**
 * The items of the list APIs (GET /v1/jobs, /v1/settlements, /v1/events, …): each is the
 * object's usual view with what a list across jobs or tenants needs besides — its id (the
 * cursor), its tenant, its job. Schemas and the functions that fill them side by side, as
 * in view-schemas.ts and views.ts; every answer is checked against these in tests.
 */

const Instant = Type.String({ format: 'date-time', description: 'RFC 3339, UTC' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));
const iso = (at: Date | null) => at?.toISOString() ?? null;

export const TenantView = Type.Object({ id: Type.String(), name: Type.String(), metadata: Metadata, created_at: Instant });

export function tenantView(row: TenantRow) {
  return { id: row.id, name: row.name, metadata: row.metadata, created_at: row.created_at.toISOString() };
}

export const JobListItem = Type.Object(
  { ...JobSummaryView.properties, tenant_id: Type.String() },
  { description: 'a job without its settlements and events (GET /v1/jobs/{id} has them)' },
);

export function jobListItem(job: ListedJob) {
  return { ...jobSummaryView(job, job.price_version), tenant_id: job.tenant_id };
}

export const SettlementListItem = Type.Object(
  {
    id: Type.String(),
    tenant_id: Type.String(),
    job_id: Type.String(),
    ...SettlementView.properties,
    event_id: Nullable(Type.String({ description: 'the event that caused it, as in GET /v1/events (provider/event_key); null for an API cancel, a duty or a repair' })),
  },
  { description: 'one financial effect, with its pricing snapshot' },
);

export function settlementListItem(row: SettlementRow) {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    job_id: row.job_id,
    ...settlementView(row),
    event_id: row.event_provider && row.event_key ? `${row.event_provider}/${row.event_key}` : null,
  };
}

export const EventListItem = Type.Object(
  {
    id: Type.String({ description: 'provider/event_key: the event\'s path under /v1/events/ (the cursor of this list)' }),
    ...JobEventView.properties,
    state: literals(EVENT_STATES),
    tenant_id: Type.String(),
    job_id: Type.String(),
    settlement_key: Nullable(Type.String({ description: 'the settlement it applied (or the equal earlier one it found)' })),
    dead_lettered_at: Nullable(Instant),
  },
  { description: 'a provider event: where it is in the queue and what settling made of it' },
);

/** As in the job view: the raw error text and discard details are the admin's only. */
export function eventListItem(e: ListedEvent, audience: 'tenant' | 'admin') {
  return {
    id: `${e.provider}/${e.event_key}`,
    ...eventView(e, audience),
    state: e.state,
    tenant_id: e.tenant_id,
    job_id: e.job_id,
    settlement_key: e.settlement_key,
    dead_lettered_at: iso(e.dead_lettered_at),
  };
}

export const AlertView = Type.Object(
  {
    id: Type.String(),
    tenant_id: Type.String(),
    job_id: Nullable(Type.String()),
    class: literals(ALERT_CLASSES),
    source: Type.String({ description: 'what raised it: a settlement key, or provider/event_key' }),
    detail: Type.Object({}, { additionalProperties: true, description: 'what was seen, per class' }),
    created_at: Instant,
  },
  { description: 'a condition a settlement or duty raised as it happened' },
);

export function alertView(row: AlertRow) {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    job_id: row.job_id,
    class: row.class,
    source: row.source,
    detail: row.detail ?? {},
    created_at: row.created_at.toISOString(),
  };
}

export const ExceptionListItem = Type.Object(
  {
    ...ReconciliationExceptionView.properties,
    status: literals(EXCEPTION_STATUSES),
    tenant_id: Nullable(Type.String({ description: 'the tenant of the job, wallet or account it names; null for one about no tenant' })),
    cleared_at: Nullable(Instant),
  },
  { description: 'an inconsistency reconciliation found: open, resolved by an operator, or cleared (no longer found)' },
);

export function exceptionListItem(row: ListedException) {
  return {
    id: row.id,
    class: row.class,
    objects: row.objects,
    detail: row.detail ?? {},
    first_seen_at: row.first_seen_at.toISOString(),
    last_seen_at: row.last_seen_at.toISOString(),
    resolved: row.resolved_at !== null,
    resolution_note: row.resolution_note,
    status: row.status,
    tenant_id: row.tenant_id,
    cleared_at: iso(row.cleared_at),
  };
}

export const PriceVersionItem = Type.Object(
  {
    id: Type.String(),
    model: Type.String(),
    currency: Type.String(),
    version: Type.Integer(),
    unit_prices: Type.Record(Type.String(), Type.String(), { description: 'price per 1,000,000 units of each dimension' }),
    created_at: Instant,
    current: Type.Boolean({ description: 'the highest version of its model and currency: the one a job submitted now pins' }),
  },
  { description: 'one immutable version of a model\'s unit prices in a currency' },
);

export function priceVersionItem(row: ListedPriceVersion) {
  return {
    id: row.id,
    model: row.model,
    currency: row.currency,
    version: row.version,
    unit_prices: row.unit_prices,
    created_at: row.created_at.toISOString(),
    current: row.current,
  };
}
