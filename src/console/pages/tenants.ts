import { html } from '../html.js';
import { money, page, pager, when } from '../layout.js';
import type { PageHandler } from '../page-handler.js';

interface Tenant {
  id: string;
  name: string;
  created_at?: string;
  metadata?: Record<string, string>;
}
interface Wallet {
  id: string;
  currency: string;
  balance: string;
  reserved: string;
  available: string;
  created_at: string;
}
export interface List<T> {
  data: T[];
  has_more: boolean;
}

function pageQuery(query: Record<string, string | undefined>): { params: URLSearchParams; direction: 'after' | 'before' | null } {
  const params = new URLSearchParams();
  for (const key of ['limit', 'starting_after', 'ending_before']) if (query[key]) params.set(key, query[key]!);
  return { params, direction: query.starting_after ? 'after' : query.ending_before ? 'before' : null };
}

export { pageQuery };

export const tenantsPage: PageHandler = async ({ api, request, context }) => {
  const query = request.query as Record<string, string | undefined>;
  const { params, direction } = pageQuery(query);
  const tenants = await api.get<List<Tenant>>(`/v1/tenants?${params}`);
  return page(
    'Tenants',
    context,
    html`<table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Id</th>
            <th>Labels</th>
            <th>Created</th>
          </tr>
        </thead>
        <tbody>
          ${tenants.data.map(
            (t) =>
              html`<tr>
                <td><a href="/console/tenants/${t.id}">${t.name}</a></td>
                <td class="mono id">${t.id}</td>
                <td>${Object.entries(t.metadata ?? {}).map(([k, v]) => html`<span class="badge">${k}: ${v}</span> `)}</td>
                <td>${when(t.created_at)}</td>
              </tr>`,
          )}
          ${
            tenants.data.length === 0
              ? html`<tr>
                  <td colspan="4" class="muted">No tenants yet: <code>tally tenants create NAME</code></td>
                </tr>`
              : ''
          }
        </tbody>
      </table>
      ${pager('/console/tenants', query, tenants.data, tenants.has_more, direction)}`,
  );
};

export const tenantPage: PageHandler = async ({ api, request, context }) => {
  const { id } = request.params as { id: string };
  const tenant = await api.get<Tenant>(`/v1/tenants/${encodeURIComponent(id)}`);
  const wallets = await api.get<List<Wallet>>(`/v1/wallets?tenant_id=${encodeURIComponent(id)}&limit=100`);
  return page(
    `Tenant ${tenant.name}`,
    context,
    html`<dl class="facts">
        <dt>Id</dt>
        <dd class="mono">${tenant.id}</dd>
        <dt>Created</dt>
        <dd>${when(tenant.created_at)}</dd>
        ${Object.entries(tenant.metadata ?? {}).map(
          ([k, v]) =>
            html`<dt>${k}</dt>
              <dd>${v}</dd>`,
        )}
      </dl>
      <h2>Wallets</h2>
      ${walletTable(wallets.data)}
      <p><a href="/console/jobs?tenant_id=${tenant.id}">This tenant's jobs →</a></p>`,
  );
};

export function walletTable(wallets: Wallet[]) {
  return html`<table>
    <thead>
      <tr>
        <th>Wallet</th>
        <th>Currency</th>
        <th class="num">Balance</th>
        <th class="num">Reserved</th>
        <th class="num">Available</th>
        <th>Opened</th>
      </tr>
    </thead>
    <tbody>
      ${wallets.map(
        (w) =>
          html`<tr>
            <td class="id"><a class="mono" href="/console/wallets/${w.id}">${w.id}</a></td>
            <td>${w.currency}</td>
            <td class="num">${money(w.balance)}</td>
            <td class="num">${money(w.reserved)}</td>
            <td class="num">${money(w.available)}</td>
            <td>${when(w.created_at)}</td>
          </tr>`,
      )}
      ${
        wallets.length === 0
          ? html`<tr>
              <td colspan="6" class="muted">No wallets.</td>
            </tr>`
          : ''
      }
    </tbody>
  </table>`;
}
