import { html } from '../html.js';
import { badge, page, pager, when } from '../layout.js';
import type { PageHandler } from '../page-handler.js';
import { detailLines } from './exceptions.js';
import { pageQuery, type List } from './tenants.js';

/** An alert as GET /v1/alerts answers it. */
interface Alert {
  id: string;
  tenant_id: string;
  job_id: string | null;
  class: string;
  source: string;
  detail: Record<string, unknown>;
  created_at: string;
}

/**
 * The alerts settlements and duties raised (the overview counts the last 24 hours of
 * them), newest first and paged like every list, through GET /v1/alerts: the operator
 * sees every tenant's, a tenant its own. A class or a job narrows the list (the API
 * checks the value); a class's badge links to its alerts.
 */
export const alertsPage: PageHandler = async ({ api, request, context }) => {
  const query = request.query as Record<string, string | undefined>;
  const { params, direction } = pageQuery(query);
  for (const filter of ['class', 'job_id']) if (query[filter]) params.set(filter, query[filter]!);
  const alerts = await api.get<List<Alert>>(`/v1/alerts?${params}`);
  const admin = context.role.kind === 'admin';
  const filtered = query.class || query.job_id;
  return page(
    'Alerts',
    context,
    html`<p class="muted">
        Raised by a settlement or a duty the moment it saw something: a wallet overdrawn, usage beyond the hold, usage after a release, a
        hold past its expiry, an endpoint disabled. Newest first.
      </p>
      ${
        filtered
          ? html`<p class="filters">
              Only ${query.class ? badge(query.class) : ''} ${query.job_id ? html`job <code>${query.job_id}</code>` : ''}
              <a href="/console/alerts">All alerts</a>
            </p>`
          : ''
      }
      <table class="alerts">
        <thead>
          <tr>
            <th>Raised</th>
            <th>Class</th>
            <th>Job</th>
            <th>Detail</th>
          </tr>
        </thead>
        <tbody>
          ${alerts.data.map(
            (a) =>
              html`<tr>
                <td>${when(a.created_at)}</td>
                <td><a href="/console/alerts?class=${encodeURIComponent(a.class)}">${badge(a.class)}</a></td>
                <td class="id">
                  ${a.job_id ? html`<a class="mono" href="/console/jobs/${a.job_id}">${a.job_id}</a>` : html`<span class="muted">—</span>`}
                  ${admin ? html`<br /><small>tenant <a class="mono" href="/console/tenants/${a.tenant_id}" title="${a.tenant_id}">${a.tenant_id.slice(0, 13)}…</a></small>` : ''}
                </td>
                <td class="detail">
                  ${detailLines(a.detail)}
                  <small>raised by <code>${a.source}</code></small>
                </td>
              </tr>`,
          )}
          ${
            alerts.data.length === 0
              ? html`<tr>
                  <td colspan="4" class="muted">No alerts.</td>
                </tr>`
              : ''
          }
        </tbody>
      </table>
      ${pager('/console/alerts', query, alerts.data, alerts.has_more, direction)}`,
  );
};
