import { NON_TERMINAL_STATES } from '../../lifecycle/index.js';
import { ConsoleApiError } from '../api.js';
import { html, jsonScript } from '../html.js';
import { badge, money, page, pager, when } from '../layout.js';
import type { PageHandler } from '../page-handler.js';
import { chartMicros, chartSeconds } from '../chart-values.js';
import { pageQuery, walletTable, type List } from './tenants.js';
import { grantsSection, type GrantSummary } from './grants.js';

interface Wallet {
  id: string;
  tenant_id: string;
  currency: string;
  balance: string;
  reserved: string;
  available: string;
  debt?: string;
  next_expiry?: { at: string; amount: string } | null;
  created_at: string;
  metadata?: Record<string, string>;
}
interface Entry {
  id: string;
  entry_type: string;
  amount: string;
  settlement_key: string;
  job_id: string | null;
  reference: string | null;
  grant_id?: string | null;
  created_at: string;
  balance_after?: string;
  available_after?: string;
}
interface AutoRecharge {
  enabled: boolean;
  threshold: string;
  target: string;
  monthly_limit: string | null;
  consecutive_failures: number;
  disabled_reason: string | null;
  in_flight: boolean;
  blocked_reason: string | null;
}

/** Why a recharge due now could not be made, in the words an operator acts on. */
const BLOCKED: Record<string, string> = {
  payments_not_configured: 'Stripe is not configured (PUT /v1/payment-settings/stripe): no recharge can be made.',
  no_payment_method: 'No card is known for this tenant yet: a recharge needs one successful Checkout first.',
  monthly_limit: "This month's recharges have reached the monthly limit: none more until next month (UTC).",
};

/** The wallet's auto-recharge: its settings, whether one is in flight, and why none can be made (blocked_reason). */
function autoRechargeSection(r: AutoRecharge, currency: string) {
  if (!r.enabled && r.disabled_reason === null && r.consecutive_failures === 0) return '';
  return html`<h2>Auto-recharge</h2>
    <dl class="facts">
      <dt>State</dt>
      <dd>${r.enabled ? badge('enabled') : badge('disabled')}${r.in_flight ? html` ${badge('in flight')}` : ''}</dd>
      <dt>Below</dt>
      <dd class="num">${money(r.threshold, currency)}</dd>
      <dt>Up to</dt>
      <dd class="num">${money(r.target, currency)}</dd>
      <dt>Monthly limit</dt>
      <dd class="num">${r.monthly_limit === null ? 'none' : money(r.monthly_limit, currency)}</dd>
      <dt>Failures in a row</dt>
      <dd>${String(r.consecutive_failures)}</dd>
      ${
        r.disabled_reason
          ? html`<dt>Disabled because</dt>
              <dd>${r.disabled_reason}</dd>`
          : ''
      }
      ${
        r.blocked_reason
          ? html`<dt>Blocked</dt>
              <dd class="blocked" data-reason="${r.blocked_reason}">${BLOCKED[r.blocked_reason] ?? r.blocked_reason}</dd>`
          : ''
      }
    </dl>`;
}

interface JobSummary {
  id: string;
  state: string;
  model: string;
  reserved: string;
  hold_expires_at: string;
  created_at: string;
}

export const walletsPage: PageHandler = async ({ api, request, context }) => {
  const query = request.query as Record<string, string | undefined>;
  const { params, direction } = pageQuery(query);
  const wallets = await api.get<List<Wallet>>(`/v1/wallets?${params}`);
  return page(
    'Wallets',
    context,
    html`${walletTable(wallets.data)}${pager('/console/wallets', query, wallets.data, wallets.has_more, direction)}`,
  );
};

export const walletPage: PageHandler = async ({ api, request, context }) => {
  const { id } = request.params as { id: string };
  const query = request.query as Record<string, string | undefined>;
  const wallet = await api.get<Wallet>(`/v1/wallets/${encodeURIComponent(id)}`);
  const { params, direction } = pageQuery({ ...query, limit: query.limit ?? '50' });
  const entries = await api.get<List<Entry>>(`/v1/wallets/${wallet.id}/entries?${params}`);
  const grants = await api.get<List<GrantSummary>>(`/v1/wallets/${wallet.id}/grants?limit=100`);
  const recharge = await api.get<AutoRecharge>(`/v1/wallets/${wallet.id}/auto-recharge`);
  const holds = (
    await Promise.all(
      NON_TERMINAL_STATES.map((state) => api.get<List<JobSummary>>(`/v1/jobs?wallet_id=${wallet.id}&state=${state}&limit=100`)),
    )
  ).flatMap((list) => list.data);
  // The chart: the balance after each entry on this page, oldest first.
  const points = entries.data.filter((e) => e.balance_after !== undefined).reverse();
  // A statement ends at an instant not in the future: by default the last 30 days up to now.
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const monthAgo = `${new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10)}T00:00:00Z`;
  return page(
    `Wallet ${wallet.currency}`,
    context,
    html`<div class="cards">
        <div class="card">
          <div class="label">Balance</div>
          <div class="value">${money(wallet.balance, wallet.currency)}</div>
        </div>
        <div class="card">
          <div class="label">Reserved</div>
          <div class="value">${money(wallet.reserved, wallet.currency)}</div>
        </div>
        <div class="card">
          <div class="label">Available</div>
          <div class="value">${money(wallet.available, wallet.currency)}</div>
        </div>
        ${
          wallet.debt && wallet.debt !== '0.000000'
            ? html`<div class="card">
                <div class="label">Debt</div>
                <div class="value">${money(wallet.debt, wallet.currency)}</div>
              </div>`
            : ''
        }
        ${
          wallet.next_expiry
            ? html`<div class="card">
                <div class="label">Next expiry</div>
                <div class="value">${money(wallet.next_expiry.amount, wallet.currency)}</div>
                <small>${when(wallet.next_expiry.at)}</small>
              </div>`
            : ''
        }
      </div>
      <dl class="facts after-cards">
        <dt>Wallet</dt>
        <dd class="mono">${wallet.id}</dd>
        <dt>Tenant</dt>
        <dd class="mono">
          ${context.role.kind === 'admin' ? html`<a href="/console/tenants/${wallet.tenant_id}">${wallet.tenant_id}</a>` : wallet.tenant_id}
        </dd>
        <dt>Opened</dt>
        <dd>${when(wallet.created_at)}</dd>
      </dl>
      ${grantsSection(grants.data, wallet.currency, grants.has_more)} ${autoRechargeSection(recharge, wallet.currency)}
      <h2>Balance over time</h2>
      <div class="chart" data-series="balance-series" role="img" aria-label="balance after each entry"></div>
      ${jsonScript('balance-series', {
        title: `Balance after each entry (${wallet.currency})`,
        x: points.map((e) => chartSeconds(e.created_at)),
        micros: true,
        steps: true,
        series: [{ label: 'balance', values: points.map((e) => chartMicros(e.balance_after)) }],
      })}
      <h2>Open holds</h2>
      <table>
        <thead>
          <tr>
            <th>Job</th>
            <th>State</th>
            <th>Model</th>
            <th class="num">Reserved</th>
            <th>Hold expires</th>
          </tr>
        </thead>
        <tbody>
          ${holds.map(
            (j) =>
              html`<tr>
                <td class="id"><a class="mono" href="/console/jobs/${j.id}">${j.id}</a></td>
                <td>${badge(j.state)}</td>
                <td>${j.model}</td>
                <td class="num">${money(j.reserved)}</td>
                <td>${when(j.hold_expires_at)}</td>
              </tr>`,
          )}
          ${
            holds.length === 0
              ? html`<tr>
                  <td colspan="5" class="muted">No open holds.</td>
                </tr>`
              : ''
          }
        </tbody>
      </table>
      <h2>Statement</h2>
      <form class="filters" method="get" action="/console/wallets/${wallet.id}/statement.csv">
        <label>From <input type="text" name="from" value="${monthAgo}" size="22" /></label>
        <label>To <input type="text" name="to" value="${now}" size="22" /></label>
        <button type="submit">Download CSV</button>
      </form>
      <h2>Entries</h2>
      <table>
        <thead>
          <tr>
            <th>Time</th>
            <th>Type</th>
            <th class="num">Amount</th>
            <th class="num">Balance after</th>
            <th>Grant</th>
            <th>Job</th>
            <th>Settlement key</th>
          </tr>
        </thead>
        <tbody>
          ${entries.data.map(
            (e) =>
              html`<tr>
                <td>${when(e.created_at)}</td>
                <td>${badge(e.entry_type)}</td>
                <td class="num">${money(e.amount)}</td>
                <td class="num">${money(e.balance_after)}</td>
                <td class="mono short-id" title="${e.grant_id ?? ''}">
                  ${e.grant_id ? `${e.grant_id.slice(0, 13)}…` : html`<span class="muted">—</span>`}
                </td>
                <td class="short-id">
                  ${e.job_id ? html`<a class="mono" href="/console/jobs/${e.job_id}">${e.job_id.slice(0, 13)}…</a>` : html`<span class="muted">${e.reference ?? '—'}</span>`}
                </td>
                <td class="mono settlement-key">${e.settlement_key}</td>
              </tr>`,
          )}
          ${
            entries.data.length === 0
              ? html`<tr>
                  <td colspan="7" class="muted">No entries yet.</td>
                </tr>`
              : ''
          }
        </tbody>
      </table>
      ${pager(`/console/wallets/${wallet.id}`, query, entries.data, entries.has_more, direction)}`,
    { scripts: ['/console/assets/uPlot.min.js', '/console/assets/charts.js'] },
  );
};

/** The API's CSV statement, as a file download. */
export const statementDownload: PageHandler = async ({ api, request, reply }) => {
  const { id } = request.params as { id: string };
  const query = request.query as { from?: string; to?: string };
  const params = new URLSearchParams();
  if (query.from) params.set('from', query.from);
  if (query.to) params.set('to', query.to);
  const answer = await api.call('GET', `/v1/wallets/${encodeURIComponent(id)}/statement?${params}`, undefined, { accept: 'text/csv' });
  if (answer.status !== 200) throw new ConsoleApiError(answer);
  await reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="statement-${id}.csv"`).send(answer.text);
};
