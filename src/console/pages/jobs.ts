import { JOB_STATES } from '../../lifecycle/index.js';
import { html, type Html } from '../html.js';
import { badge, money, page, pager, when } from '../layout.js';
import type { PageHandler } from '../page-handler.js';
import { pageQuery, type List } from './tenants.js';
import { fundingSection, type FundingShare } from './grants.js';
import { holdSection, type JobHold } from './job-hold.js';

interface JobSummary {
  id: string;
  state: string;
  wallet_id: string;
  provider: string;
  model: string;
  currency: string;
  reserved: string;
  captured: string;
  released: string;
  created_at: string;
}
interface Settlement {
  key: string;
  charge_type: string;
  amount: string;
  created_at: string;
  released_remainder?: string;
  reason?: string;
  pricing?: {
    priceVersion: number;
    unitPrices: Record<string, string>;
    lines: { dimension: string; units: number; unitPrice: string; amount: string }[];
    price: string;
    billable: string;
    cap?: string;
  };
}
interface JobEvent {
  event_key: string;
  provider: string;
  type: string;
  state: string;
  reason: string | null;
  attempts: number;
  error_code: string | null;
  last_error?: string | null;
  received_at: string;
  processed_at: string | null;
}
interface Job extends JobSummary, JobHold {
  provider_job_ref: string | null;
  limits: Record<string, number>;
  price_version: number;
  adjusted: string;
  hold_expires_at: string;
  cancel_requested_at: string | null;
  metadata?: Record<string, string>;
  settlements: Settlement[];
  funding: FundingShare[];
  events: JobEvent[];
  alerts: string[];
  deliveries?: { provider: string; event_key: string; outcome: string; received_at: string }[];
}

export const jobsPage: PageHandler = async ({ api, request, context }) => {
  const query = request.query as Record<string, string | undefined>;
  const { params, direction } = pageQuery(query);
  for (const filter of ['state', 'tenant_id', 'wallet_id', 'model', 'provider']) if (query[filter]) params.set(filter, query[filter]!);
  const jobs = await api.get<List<JobSummary>>(`/v1/jobs?${params}`);
  return page(
    'Jobs',
    context,
    html`<form class="filters" method="get" action="/console/jobs">
        <label
          >State
          <select name="state">
            <option value="">any</option>
            ${JOB_STATES.map((s) => html`<option${query.state === s ? html` selected` : ''}>${s}</option>`)}
          </select></label
        >
        ${query.tenant_id ? html`<input type="hidden" name="tenant_id" value="${query.tenant_id}" />` : ''}
        <button type="submit">Filter</button>
      </form>
      <table>
        <thead>
          <tr>
            <th>Job</th>
            <th>State</th>
            <th>Model</th>
            <th>Provider</th>
            <th class="num">Reserved</th>
            <th class="num">Captured</th>
            <th>Created</th>
          </tr>
        </thead>
        <tbody>
          ${jobs.data.map(
            (j) =>
              html`<tr>
                <td class="id"><a class="mono" href="/console/jobs/${j.id}">${j.id}</a></td>
                <td>${badge(j.state)}</td>
                <td>${j.model}</td>
                <td>${j.provider}</td>
                <td class="num">${money(j.reserved)}</td>
                <td class="num">${money(j.captured)}</td>
                <td>${when(j.created_at)}</td>
              </tr>`,
          )}
          ${
            jobs.data.length === 0
              ? html`<tr>
                  <td colspan="7" class="muted">No jobs.</td>
                </tr>`
              : ''
          }
        </tbody>
      </table>
      ${pager('/console/jobs', query, jobs.data, jobs.has_more, direction)}`,
  );
};

function pricingTable(pricing: NonNullable<Settlement['pricing']>): Html {
  return html`<details class="pricing" open>
    <summary>
      Pricing snapshot: price version ${pricing.priceVersion}, billable
      ${money(pricing.billable)}${pricing.cap ? html` (cap ${money(pricing.cap)})` : ''}
    </summary>
    <table>
      <thead>
        <tr>
          <th>Dimension</th>
          <th class="num">Units</th>
          <th class="num">Unit price / 10⁶</th>
          <th class="num">Amount</th>
        </tr>
      </thead>
      <tbody>
        ${pricing.lines.map(
          (l) =>
            html`<tr>
              <td>${l.dimension}</td>
              <td class="num">${l.units}</td>
              <td class="num">${money(l.unitPrice)}</td>
              <td class="num">${money(l.amount)}</td>
            </tr>`,
        )}
        <tr>
          <td colspan="3"><strong>Price</strong></td>
          <td class="num"><strong>${money(pricing.price)}</strong></td>
        </tr>
      </tbody>
    </table>
  </details>`;
}

type Moment = { at: string; kind: 'delivery' | 'event' | 'settlement'; body: Html };

export const jobPage: PageHandler = async ({ api, request, context }) => {
  const { id } = request.params as { id: string };
  const job = await api.get<Job>(`/v1/jobs/${encodeURIComponent(id)}`);
  const moments: Moment[] = [
    {
      at: job.created_at,
      kind: 'event' as const,
      body: html`<strong>Submitted</strong>: reserved ${money(job.reserved, job.currency)} at price version ${job.price_version}`,
    },
    ...(job.deliveries ?? []).map((d) => ({
      at: d.received_at,
      kind: 'delivery' as const,
      body: html`Delivery of <code>${d.event_key}</code> from ${d.provider}: ${badge(d.outcome)}`,
    })),
    ...job.events.map((e) => ({
      at: e.processed_at ?? e.received_at,
      kind: 'event' as const,
      body: html`<strong>${e.type}</strong> ${badge(e.state)}
        <small
          >event <code>${e.event_key}</code>, received ${when(e.received_at)}, ${e.attempts}
          attempt${e.attempts === 1 ? '' : 's'}${e.reason ? `, ${e.reason}` : ''}</small
        >
        ${e.error_code ? html`<div class="error">${e.error_code}${e.last_error ? html`: <code>${e.last_error}</code>` : ''}</div>` : ''}`,
    })),
    ...job.extensions.map((x) => ({
      at: x.created_at,
      kind: 'settlement' as const,
      body: html`<strong>Hold extended</strong> (#${x.version}, ${x.source === 'auto' ? 'automatic' : 'by the tenant'}) by
        ${money(x.amount, job.currency)} <small class="mono">${x.settlement_key}</small>`,
    })),
    ...job.settlements.map((s) => ({
      at: s.created_at,
      kind: 'settlement' as const,
      body: html`<strong>Settlement: ${s.charge_type}</strong>
        ${money(s.amount, job.currency)}${s.released_remainder ? html`, released ${money(s.released_remainder)}` : ''}
        <small class="mono">${s.key}</small>${s.reason ? html` <small>(${s.reason})</small>` : ''}
        ${s.pricing ? pricingTable(s.pricing) : ''}`,
    })),
  ].sort((a, b) => a.at.localeCompare(b.at));
  return page(
    `Job ${job.id}`,
    context,
    html`<dl class="facts">
        <dt>State</dt>
        <dd>${badge(job.state)}</dd>
        <dt>Wallet</dt>
        <dd><a class="mono" href="/console/wallets/${job.wallet_id}">${job.wallet_id}</a></dd>
        <dt>Model</dt>
        <dd>
          ${job.model} <small>via ${job.provider}${job.provider_job_ref ? html`, ref <code>${job.provider_job_ref}</code>` : ''}</small>
        </dd>
        <dt>Limits</dt>
        <dd>
          ${Object.entries(job.limits)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}
        </dd>
        <dt>Reserved</dt>
        <dd>${money(job.reserved, job.currency)}</dd>
        <dt>Captured</dt>
        <dd>${money(job.captured, job.currency)}</dd>
        <dt>Released</dt>
        <dd>${money(job.released, job.currency)}</dd>
        <dt>Adjusted</dt>
        <dd>${money(job.adjusted, job.currency)}</dd>
        <dt>Hold expires</dt>
        <dd>${when(job.hold_expires_at)}</dd>
        ${
          job.alerts.length > 0
            ? html`<dt>Alerts</dt>
                <dd>${job.alerts.map((a) => html`${badge(a)} `)}</dd>`
            : ''
        }
        ${Object.entries(job.metadata ?? {}).map(
          ([k, v]) =>
            html`<dt>${k}</dt>
              <dd>${v}</dd>`,
        )}
      </dl>
      ${holdSection(job)} ${fundingSection(job.funding, job.currency)}
      <h2>Timeline</h2>
      <ol class="timeline">
        ${moments.map(
          (m) =>
            html`<li class="${m.kind}">
              ${when(m.at)}
              <div>${m.body}</div>
            </li>`,
        )}
      </ol>`,
  );
};
