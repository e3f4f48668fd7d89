import { chartMicros } from '../chart-values.js';
import { html, jsonScript } from '../html.js';
import { page } from '../layout.js';
import type { PageHandler } from '../page-handler.js';

interface Overview {
  series: { at: string; captures: number; releases: number; captured: Record<string, string> }[];
  queue_depth: number;
  dead_letters: number;
  oldest_pending_seconds: number | null;
  open_exceptions: number | null;
  alerts_last_24h: number;
  jobs_open: number;
}


export const overviewPage: PageHandler = async ({ api, role, context }) => {
  const overview = await api.get<Overview>('/v1/overview?range=24h');
  const x = overview.series.map((b) => Math.floor(Date.parse(b.at) / 1000));
  const currencies = [...new Set(overview.series.flatMap((b) => Object.keys(b.captured)))].sort();
  const card = (label: string, value: string | number, attention = false, href?: string) =>
    html`<div class="card${attention ? ' attention' : ''}">
      <div class="label">${label}</div>
      <div class="value">${href ? html`<a href="${href}">${value}</a>` : value}</div>
    </div>`;
  const admin = role.kind === 'admin';
  return page(
    'Overview',
    context,
    html` <div class="cards">
        ${card(
          'Jobs captured, 24 h',
          overview.series.reduce((n, b) => n + b.captures, 0),
        )}
        ${card('Jobs open', overview.jobs_open, false, '/console/jobs')} ${card('Queue depth', overview.queue_depth)}
        ${card('Oldest pending', overview.oldest_pending_seconds === null ? '—' : `${Math.round(overview.oldest_pending_seconds)} s`, (overview.oldest_pending_seconds ?? 0) > 60)}
        ${card('Dead letters', overview.dead_letters, overview.dead_letters > 0, admin ? '/console/dead-letters' : undefined)}
        ${admin ? card('Open exceptions', overview.open_exceptions ?? 0, (overview.open_exceptions ?? 0) > 0, '/console/exceptions') : ''}
        ${card('Alerts, 24 h', overview.alerts_last_24h, overview.alerts_last_24h > 0, '/console/alerts')}
      </div>
      <h2>Last 24 hours</h2>
      <div class="charts">
        <div class="chart" data-series="jobs-series" role="img" aria-label="jobs settled per hour"></div>
        <div class="chart" data-series="money-series" role="img" aria-label="money captured per hour"></div>
      </div>
      ${jsonScript('jobs-series', {
        title: 'Jobs settled per hour',
        x,
        series: [
          { label: 'captured', values: overview.series.map((b) => b.captures) },
          { label: 'released', values: overview.series.map((b) => b.releases) },
        ],
      })}
      ${jsonScript('money-series', {
        title: `Money captured per hour${currencies.length ? ` (${currencies.join(', ')})` : ''}`,
        x,
        micros: true,
        series: (currencies.length ? currencies : ['—']).map((currency) => ({
          label: currency,
          values: overview.series.map((b) => chartMicros(b.captured[currency])),
        })),
      })}`,
    { scripts: ['/console/assets/uPlot.min.js', '/console/assets/charts.js'] },
  );
};
