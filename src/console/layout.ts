import { SCALE } from '../money/index.js';
import { html, type Html } from './html.js';
import type { Role } from './api.js';

export interface PageContext {
  role: Role;
  /** the path of the page, for the current nav item */
  path: string;
}

function navItems(role: Role): [href: string, label: string][] {
  const common: [string, string][] = [
    ['/console', 'Overview'],
    ['/console/wallets', 'Wallets'],
    ['/console/jobs', 'Jobs'],
    ['/console/alerts', 'Alerts'],
  ];
  if (role.kind !== 'admin') return common;
  return [
    ['/console', 'Overview'],
    ['/console/tenants', 'Tenants'],
    ['/console/wallets', 'Wallets'],
    ['/console/jobs', 'Jobs'],
    ['/console/alerts', 'Alerts'],
    ['/console/exceptions', 'Exceptions'],
    ['/console/dead-letters', 'Dead letters'],
  ];
}

/** What every console page's head links: the icon (a page without one logs a 404 for /favicon.ico) and the stylesheet. */
export function head(): Html {
  return html`<link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml" />
    <link rel="stylesheet" href="/console/assets/console.css" />`;
}

/** The headers of every console page. No inline script runs; pages pass data to charts.js in JSON blocks. */
export const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

export function errorPage(context: PageContext | null, status: number, message: string): Html {
  const title = status === 404 ? 'Not found' : status === 403 ? 'Refused' : status === 429 ? 'Too many attempts' : 'Something went wrong';
  return page(
    title,
    context,
    html`<div class="error">${message}</div>
      <p><a href="${context ? '/console' : '/console/sign-in'}">${context ? 'Back to the overview' : 'Back to sign-in'}</a></p>`,
  );
}

export function page(title: string, context: PageContext | null, body: Html, options: { scripts?: string[] } = {}): Html {
  const nav = context
    ? html`<nav>
        <span class="brand">Tally</span>
        ${navItems(context.role).map(([href, label]) => html`<a href="${href}" ${(href === '/console' ? context.path === href : context.path.startsWith(href)) ? html` aria-current="page"` : ''}>${label}</a>`)}
        <span class="who">${context.role.kind === 'admin' ? 'operator' : 'tenant'}</span>
        <form method="post" action="/console/sign-out"><button type="submit" class="link">Sign out</button></form>
      </nav>`
    : html`<nav><span class="brand">Tally</span></nav>`;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Tally</title>
        ${head()} ${(options.scripts ?? []).length > 0 ? html`<link rel="stylesheet" href="/console/assets/uPlot.min.css" />` : ''}
      </head>
      <body>
        ${nav}
        <main>
          <h1>${title}</h1>
          ${body}
        </main>
        ${(options.scripts ?? []).map((src) => html`<script src="${src}" defer></script>`)}
      </body>
    </html>`;
}

/**
 * A money amount for display: the API's exact decimal string at the currency's full scale
 * (SCALE decimals, as on the wire), never trimmed — trimmed amounts had as many decimals
 * as they had digits (0.03489 above 0.088419) and a column of them could not line up.
 * Right-aligned in tabular numerals where they stand in columns (console.css: .amount).
 * In a stat card too narrow for them, the currency goes under the digits first, and
 * only digits wider than the card break.
 */
export function money(amount: string | null | undefined, currency = ''): Html {
  if (amount === null || amount === undefined) return html`<span class="muted">—</span>`;
  const [whole, fraction = ''] = amount.split('.');
  return html`<span class="amount${amount.startsWith('-') ? ' negative' : ''}"
    ><span class="digits">${whole}.${fraction.padEnd(SCALE, '0')}</span
    >${currency ? html` <small class="currency">${currency}</small>` : ''}</span
  >`;
}

export function when(instant: string | null | undefined): Html {
  if (!instant) return html`<span class="muted">—</span>`;
  return html`<time datetime="${instant}">${instant.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`;
}

export function badge(text: string): Html {
  return html`<span class="badge badge-${text.replace(/[^a-z_]/g, '')}">${text}</span>`;
}

/** Previous / next links of a Stripe-style list page. */
export function pager(
  basePath: string,
  query: Record<string, string | undefined>,
  items: { id: string }[],
  hasMore: boolean,
  direction: 'after' | 'before' | null,
): Html {
  const keep = Object.entries(query).filter(([k, v]) => v !== undefined && v !== '' && k !== 'starting_after' && k !== 'ending_before') as [
    string,
    string,
  ][];
  const link = (param: string, id: string) => `${basePath}?${new URLSearchParams([...keep, [param, id]]).toString()}`;
  const first = items[0];
  const last = items.at(-1);
  const newer = first && (direction === 'after' || (direction === 'before' && hasMore));
  const older = last && (direction !== 'before' ? hasMore : true);
  return html`<p class="pager">
    ${newer ? html`<a href="${link('ending_before', first.id)}" rel="prev">← Newer</a>` : ''}
    ${older ? html`<a href="${link('starting_after', last.id)}" rel="next">Older →</a>` : ''}
  </p>`;
}
