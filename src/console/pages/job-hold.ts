import { html, type Html } from '../html.js';
import { money, when } from '../layout.js';

/**
 * A long-running job's hold, as the person watching it wants to see it (CONTRACT.md
 * "Long-running jobs"): whether it ran out and why, the usage reported so far against the
 * limits (and the ceiling automatic extensions stop at), and each extension. Nothing is
 * shown for a job that never reported usage, has no auto_extend and never grew.
 */

export interface JobHold {
  currency: string;
  state: string;
  limits: Record<string, number>;
  reserved: string;
  auto_extend: { step: Record<string, number>; max_limits: Record<string, number> } | null;
  usage_so_far: Record<string, number> | null;
  hold_exhausted: { reason: string | null; reserved: string; usage_price: string; at: string } | null;
  extensions: {
    version: number;
    settlement_key: string;
    amount: string;
    limits: Record<string, number>;
    source: string;
    created_at: string;
  }[];
}

const REASONS: Record<string, string> = {
  max_limits: 'automatic extensions reached max_limits',
  insufficient_funds: 'the wallet could not fund the next extension (nothing was extended)',
  spend_limit: "the next extension would pass the tenant's spend limit (nothing was extended)",
};

export function holdSection(job: JobHold): Html {
  if (job.auto_extend === null && job.usage_so_far === null && job.extensions.length === 0 && job.hold_exhausted === null) return html``;
  const exhausted = job.hold_exhausted;
  return html`<h2>Hold</h2>
    ${
      exhausted
        ? html`<div class="warning" role="status">
            <strong>Hold exhausted</strong> since ${when(exhausted.at)}:
            ${exhausted.reason ? (REASONS[exhausted.reason] ?? exhausted.reason) : 'the usage so far is priced above the hold (no auto_extend)'}.
            The usage so far prices at ${money(exhausted.usage_price, job.currency)} against ${money(exhausted.reserved, job.currency)}
            held. Extend the hold, fund the wallet, or cancel the job.
          </div>`
        : ''
    }
    <p class="muted legend">
      ${job.auto_extend ? 'Grows by itself, step by step, as progress reports near the limits.' : 'Grows only when the tenant extends it.'}
      <span class="key hold-used">usage so far</span> <span class="key hold-limit">limit</span>
      ${job.auto_extend ? html`<span class="key hold-max">up to max_limits</span>` : ''}
    </p>
    ${usageTable(job)} ${extensionsTable(job)}`;
}

function usageTable(job: JobHold): Html {
  const dimensions = [
    ...new Set([...Object.keys(job.limits), ...Object.keys(job.auto_extend?.step ?? {}), ...Object.keys(job.usage_so_far ?? {})]),
  ];
  return html`<table class="hold-usage">
    <thead>
      <tr>
        <th>Dimension</th>
        <th class="num">Usage so far</th>
        <th class="num">Limit</th>
        <th class="num">Step</th>
        <th class="num">Max (auto)</th>
        <th>Headroom</th>
      </tr>
    </thead>
    <tbody>
      ${dimensions.map((d) => {
        const used = job.usage_so_far?.[d];
        const step = job.auto_extend?.step[d];
        const max = job.auto_extend?.max_limits[d];
        return html`<tr>
          <td>${d}</td>
          <td class="num">${used === undefined ? html`<span class="muted">—</span>` : used}</td>
          <td class="num">${job.limits[d] ?? 0}</td>
          <td class="num">${step ?? html`<span class="muted">—</span>`}</td>
          <td class="num">${max ?? html`<span class="muted">—</span>`}</td>
          <td>${headroomBar(used ?? 0, job.limits[d] ?? 0, max)}</td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}

/** Usage, limit and ceiling on one scale (thousandths of the largest), as SVG rects: the CSP allows no inline style. */
function headroomBar(used: number, limit: number, max: number | undefined): Html {
  const scale = Math.max(used, limit, max ?? 0);
  if (scale === 0) return html`<span class="muted">—</span>`;
  const width = (value: number) => Math.round((value * 1000) / scale);
  return html`<svg
    class="hold-bar"
    viewBox="0 0 1000 10"
    preserveAspectRatio="none"
    role="img"
    aria-label="${used} used of ${limit}${max === undefined ? '' : `, up to ${max}`}"
  >
    ${max === undefined ? '' : html`<rect class="hold-max" x="0" y="0" width="${width(max)}" height="10"><title>max_limits ${max}</title></rect>`}
    <rect class="hold-limit" x="0" y="0" width="${width(limit)}" height="10"><title>limit ${limit}</title></rect>
    <rect class="hold-used" x="0" y="2" width="${width(Math.min(used, scale))}" height="6"><title>usage so far ${used}</title></rect>
  </svg>`;
}

function extensionsTable(job: JobHold): Html {
  return html`<h3>Extensions</h3>
    <table class="extensions">
      <thead>
        <tr>
          <th class="num">#</th>
          <th class="num">Held</th>
          <th>Limits after</th>
          <th>By</th>
          <th>When</th>
        </tr>
      </thead>
      <tbody>
        ${job.extensions.map(
          (x) =>
            html`<tr>
              <td class="num">${x.version}</td>
              <td class="num">${money(x.amount, job.currency)}</td>
              <td>
                ${Object.entries(x.limits)
                  .map(([k, v]) => `${k} ${v}`)
                  .join(', ')}
              </td>
              <td>${x.source === 'auto' ? 'automatic' : 'tenant'}</td>
              <td>${when(x.created_at)}</td>
            </tr>`,
        )}
        ${
          job.extensions.length === 0
            ? html`<tr>
                <td colspan="5" class="muted">Not extended: the hold is the first reservation.</td>
              </tr>`
            : ''
        }
      </tbody>
    </table>`;
}
