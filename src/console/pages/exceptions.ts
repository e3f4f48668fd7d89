import { ConsoleApiError } from '../api.js';
import { html } from '../html.js';
import { badge, page, pager, when } from '../layout.js';
import type { PageHandler } from '../page-handler.js';
import { pageQuery, type List } from './tenants.js';

interface ReconciliationException {
  id: string;
  class: string;
  objects: Record<string, unknown>;
  detail: Record<string, unknown>;
  first_seen_at: string;
  last_seen_at: string;
  resolved: boolean;
  resolution_note: string | null;
}

function objectLinks(objects: Record<string, unknown>) {
  return Object.entries(objects).map(([key, value]) => {
    const id = String(value);
    if (key === 'job_id') return html`<div>job <a class="mono" href="/console/jobs/${id}">${id}</a></div>`;
    if (key === 'tenant_id') return html`<div>tenant <a class="mono" href="/console/tenants/${id}">${id}</a></div>`;
    if (key === 'wallet_id' || key === 'account_id')
      return html`<div>${key.replace('_id', '')} <a class="mono" href="/console/wallets/${id}">${id}</a></div>`;
    return html`<div>${key} <code>${id}</code></div>`;
  });
}

/** An exception's (or an alert's) detail as labelled lines rather than raw JSON. */
export function detailLines(detail: Record<string, unknown>) {
  const show = (value: unknown): string =>
    value === null || value === undefined
      ? '—'
      : Array.isArray(value)
        ? value.map(show).join(', ')
        : typeof value === 'object'
          ? Object.entries(value as Record<string, unknown>)
              .map(([k, v]) => `${k.replace(/_/g, ' ')} ${show(v)}`)
              .join('; ')
          : String(value);
  return html`<dl class="detail">
    ${Object.entries(detail ?? {}).map(
      ([key, value]) =>
        html`<dt>${key.replace(/_/g, ' ')}</dt>
          <dd>${show(value)}</dd>`,
    )}
  </dl>`;
}

export const exceptionsPage: PageHandler = async ({ api, request, context }) => {
  const query = request.query as Record<string, string | undefined>;
  const status = query.status === 'resolved' ? 'resolved' : 'open';
  const { params, direction } = pageQuery(query);
  params.set('status', status);
  const exceptions = await api.get<List<ReconciliationException>>(`/v1/reconciliation/exceptions?${params}`);
  const notice = query.done === 'resolved' ? 'The exception is resolved.' : null;
  return page(
    'Reconciliation exceptions',
    context,
    html`${notice ? html`<div class="notice">${notice}</div>` : ''}
      <p class="filters">
        <a href="/console/exceptions?status=open" ${status === 'open' ? html` aria-current="page"` : ''}>Open</a>
        <a href="/console/exceptions?status=resolved" ${status === 'resolved' ? html` aria-current="page"` : ''}>Resolved</a>
        <a class="button" href="/console/repair">Run reconciliation with repair…</a>
      </p>
      <table>
        <thead>
          <tr>
            <th>Class, seen</th>
            <th>About</th>
            <th>Detail</th>
            <th>${status === 'open' ? 'Resolve' : 'Note'}</th>
          </tr>
        </thead>
        <tbody>
          ${exceptions.data.map(
            (e) =>
              html`<tr>
                <td class="seen">
                  ${badge(e.class)}<br /><small>first ${when(e.first_seen_at)}</small>${
                    e.last_seen_at !== e.first_seen_at ? html`<br /><small>last ${when(e.last_seen_at)}</small>` : ''
                  }
                </td>
                <td class="about">${objectLinks(e.objects)}</td>
                <td class="detail">${detailLines(e.detail)}</td>
                <td class="resolve">
                  ${
                    e.resolved
                      ? html`${e.resolution_note}`
                      : html`<form class="inline" method="post" action="/console/exceptions/${e.id}/resolve">
                          <input
                            type="text"
                            name="note"
                            required
                            maxlength="2000"
                            placeholder="what was checked"
                            aria-label="resolution note"
                          />
                          <button type="submit">Resolve</button>
                        </form>`
                  }
                </td>
              </tr>`,
          )}
          ${
            exceptions.data.length === 0
              ? html`<tr>
                  <td colspan="4" class="muted">No ${status} exceptions.</td>
                </tr>`
              : ''
          }
        </tbody>
      </table>
      ${pager('/console/exceptions', query, exceptions.data, exceptions.has_more, direction)}`,
  );
};

export const resolveException: PageHandler = async ({ api, request, reply }) => {
  const { id } = request.params as { id: string };
  const note = String((request.body as { note?: string } | null)?.note ?? '');
  const answer = await api.call('POST', `/v1/reconciliation/exceptions/${encodeURIComponent(id)}/resolve`, { note });
  if (answer.status !== 200) throw new ConsoleApiError(answer);
  await reply.redirect('/console/exceptions?status=open&done=resolved', 303);
};

export const repairConfirmPage: PageHandler = async ({ context }) =>
  page(
    'Run reconciliation with repair',
    context,
    html`<p>
        This runs every reconciliation check now and repairs what has a keyed repair: stuck or dead events are settled the way a worker
        would, holds open past their expiry are released, drifted projections are rebuilt from the entries. Each repair goes through the
        normal keyed path, so running it twice does nothing the second time.
      </p>
      <form method="post" action="/console/repair">
        <input type="hidden" name="confirm" value="yes" />
        <button class="danger" type="submit">Yes, run and repair</button>
        <a class="button" href="/console/exceptions">Cancel</a>
      </form>`,
  );

export const repairRun: PageHandler = async (pageRequest) => {
  const { api, request, context } = pageRequest;
  // Without the confirmation page's field, ask again instead of repairing.
  if ((request.body as { confirm?: string } | null)?.confirm !== 'yes') return repairConfirmPage(pageRequest);
  const answer = await api.call<{
    id: string;
    clean: boolean;
    exceptions: ReconciliationException[];
    repairs: { class: string; action: string; result: string }[];
  }>('POST', '/v1/reconciliation/runs', { repair: true });
  if (answer.status !== 201) throw new ConsoleApiError(answer);
  const run = answer.body;
  return page(
    'Reconciliation run',
    context,
    html`<div class="${run.clean ? 'notice' : 'error'}">
        ${run.clean ? 'Clean: nothing left to reconcile.' : `${run.exceptions.length} open exception(s) remain.`} Run
        <code>${run.id}</code>.
      </div>
      <h2>Repairs</h2>
      <table>
        <thead>
          <tr>
            <th>Class</th>
            <th>Action</th>
            <th>Result</th>
          </tr>
        </thead>
        <tbody>
          ${run.repairs.map(
            (r) =>
              html`<tr>
                <td>${badge(r.class)}</td>
                <td>${r.action}</td>
                <td>${r.result}</td>
              </tr>`,
          )}
          ${
            run.repairs.length === 0
              ? html`<tr>
                  <td colspan="3" class="muted">Nothing needed repair.</td>
                </tr>`
              : ''
          }
        </tbody>
      </table>
      <p><a href="/console/exceptions">Back to the exceptions</a></p>`,
  );
};
