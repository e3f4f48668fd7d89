import { html, type Html } from '../html.js';
import { badge, money, when } from '../layout.js';
import { parseAmount, type Micros } from '../../money/index.js';

/** A grant as GET /v1/wallets/{id}/grants answers it (the fields the console shows). */
export interface GrantSummary {
  id: string;
  category: string;
  priority: number;
  amount: string;
  remaining: string;
  held: string;
  status: string;
  effective_at: string;
  expires_at: string | null;
  expired_amount: string;
  voided_amount: string;
  source: string;
}

/** A share of a job's hold, as GET /v1/jobs/{id} answers it in `funding`. */
export interface FundingShare {
  grant_id: string;
  category: string;
  held: string;
  captured: string;
  returned: string;
  refunded: string;
  /** signed: the job's corrections on this grant, net of refunds (cost on the grant = captured + adjusted) */
  adjusted: string;
}

const NOT_ENTERED = new Set(['scheduled', 'awaiting_payment', 'canceled']);

/**
 * Exact micro-units of an amount as the API writes it ("12.500000" → 12500000n), read by
 * money/'s one parser: the bar's widths are integer shares of the amount.
 */
function micros(amount: string): Micros {
  return parseAmount(amount, { allowZero: true, allowNegative: true });
}

/**
 * A grant's burn-down as one bar: what jobs used (amount − remaining − lapsed), what open
 * holds reserve, what is still free, and what lapsed (expired or voided), each as a
 * share of the grant's amount in thousandths — integer arithmetic on micro-units, drawn as
 * SVG rects (their widths are attributes: the console's CSP allows no inline style).
 */
function burnDown(grant: GrantSummary): Html {
  const amount = micros(grant.amount);
  // a grant whose money has not entered (not yet effective, awaiting or canceled payment) has nothing to burn
  if (NOT_ENTERED.has(grant.status)) return html`<span class="muted">not in the wallet yet</span>`;
  if (amount <= 0n) return html`<span class="muted">—</span>`;
  const remaining = micros(grant.remaining);
  const held = micros(grant.held);
  const lapsed = micros(grant.expired_amount) + micros(grant.voided_amount);
  const parts: [string, bigint][] = [
    ['used', amount - remaining - lapsed],
    ['held', held],
    ['free', remaining - held],
    ['lapsed', lapsed],
  ];
  let x = 0n;
  const rects = parts.map(([kind, value]) => {
    const width = value > 0n ? (value * 1000n) / amount : 0n;
    const rect = html`<rect class="burn-${kind}" x="${x}" y="0" width="${width}" height="10"><title>${kind}</title></rect>`;
    x += width;
    return rect;
  });
  return html`<svg
    class="burn-down"
    viewBox="0 0 1000 10"
    preserveAspectRatio="none"
    role="img"
    aria-label="${grant.remaining} of ${grant.amount} left"
  >
    ${rects}
  </svg>`;
}

export function grantsSection(grants: GrantSummary[], currency: string, more: boolean): Html {
  return html`<h2>Grants</h2>
    <p class="muted legend">
      Newest first. Jobs draw on grants lowest priority first, then soonest expiry, promotional before paid.
      <span class="key burn-used">used</span> <span class="key burn-held">held for jobs</span> <span class="key burn-free">free</span>
      <span class="key burn-lapsed">expired or voided</span>
    </p>
    <table class="grants">
      <thead>
        <tr>
          <th>Grant</th>
          <th>Status</th>
          <th>Category</th>
          <th class="num">Priority</th>
          <th class="num">Amount</th>
          <th class="num">Remaining</th>
          <th class="num">Held</th>
          <th>Burn-down</th>
          <th>Expires</th>
        </tr>
      </thead>
      <tbody>
        ${grants.map(
          (g) =>
            html`<tr>
              <td class="mono short-id" title="${g.id}">${g.id.slice(0, 13)}…<br /><small class="muted">${g.source}</small></td>
              <td>${badge(g.status)}</td>
              <td>${g.category}</td>
              <td class="num">${g.priority}</td>
              <td class="num">${money(g.amount, currency)}</td>
              <td class="num">${money(g.remaining)}</td>
              <td class="num">${money(g.held)}</td>
              <td>${burnDown(g)}</td>
              <td>${g.expires_at ? when(g.expires_at) : html`<span class="muted">never</span>`}</td>
            </tr>`,
        )}
        ${
          grants.length === 0
            ? html`<tr>
                <td colspan="9" class="muted">No grants yet: a credit or a grant brings money into the wallet.</td>
              </tr>`
            : ''
        }
      </tbody>
    </table>
    ${more ? html`<p class="muted">Showing the newest ${grants.length} grants.</p>` : ''}`;
}

export function fundingSection(funding: FundingShare[], currency: string): Html {
  return html`<h2>Funding</h2>
    <table class="funding">
      <thead>
        <tr>
          <th>Grant</th>
          <th>Category</th>
          <th class="num">Held</th>
          <th class="num">Captured</th>
          <th class="num">Returned</th>
          <th class="num">Refunded</th>
          <th class="num" title="the job's corrections on this grant, net of refunds: its cost on the grant is captured + adjusted">
            Adjusted
          </th>
        </tr>
      </thead>
      <tbody>
        ${funding.map(
          (s) =>
            html`<tr>
              <td class="mono id">${s.grant_id}</td>
              <td>${s.category}</td>
              <td class="num">${money(s.held, currency)}</td>
              <td class="num">${money(s.captured)}</td>
              <td class="num">${money(s.returned)}</td>
              <td class="num">${money(s.refunded)}</td>
              <td class="num">${money(s.adjusted)}</td>
            </tr>`,
        )}
        ${
          funding.length === 0
            ? html`<tr>
                <td colspan="7" class="muted">This job holds nothing.</td>
              </tr>`
            : ''
        }
      </tbody>
    </table>`;
}
