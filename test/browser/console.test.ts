import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { refuseCapturesOnDemand } from '../support/refused-captures.js';
import { ADMIN_TOKEN, startServer, waitUntil } from '../support/server.js';
import { Client, deliver, signDelivery } from '../support/client.js';
import { completion, createWorld, submitJob, type World } from '../support/world.js';

/**
 * The operator console as a person uses it, in a real browser: Debian's Chromium driven
 * by playwright-core against a real `tally serve` with data made through the API. Each
 * page's screenshot is kept in test-artifacts/console/ (ignored by git) to look at.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/console/', import.meta.url));

const db = await freshDatabase();
// A permanent failure on demand: the capture of a listed job is refused, so its
// completion is dead-lettered after one attempt; unlisting it lets a retry succeed.
const refusals = await refuseCapturesOnDemand(db.pool);

const server = await startServer(db.url, {
  workers: 1,
  env: { TALLY_MAX_ATTEMPTS: '1', TALLY_RECONCILE_INTERVAL_SECONDS: '0', TALLY_POLL_INTERVAL_MS: '100' },
});
const admin = new Client(server.url);

let browser: Browser;
let acme: World;
let globex: World;
let initech: World;
let capturedJobId: string;
let deadJobId: string;
/** jobs whose usage went past their hold, each raising usage_exceeds_reservation: oldest first */
const overrunJobIds: string[] = [];
const weights: Record<string, number> = {};

async function settled(world: World, jobId: string, check: (view: any) => boolean) {
  await waitUntil(async () => check((await world.tenant.get(`/v1/jobs/${jobId}`)).body));
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install chromium; .ci/run does) or set CHROMIUM_PATH`);
  await mkdir(ARTIFACTS, { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });

  acme = await createWorld(admin, { credit: '250.00' });
  globex = await createWorld(admin, { credit: '40.00' });
  for (let i = 0; i < 3; i++) {
    const job = await submitJob(acme, { input_tokens: 20_000, output_tokens: 8_000 });
    await deliver(
      server.url,
      acme.provider,
      signDelivery(completion(acme, job.id, { input_tokens: 12_000 + i * 1000, output_tokens: 3_000 })),
    );
    await settled(acme, job.id, (v) => v.state === 'captured');
    capturedJobId = job.id;
  }
  // A duplicate delivery of the last completion: the timeline shows it, nothing is billed twice.
  const last = await submitJob(acme);
  const body = completion(acme, last.id, { input_tokens: 900, output_tokens: 100 });
  const first = signDelivery(body, { id: `msg_${randomUUID()}` });
  await deliver(server.url, acme.provider, first);
  await deliver(server.url, acme.provider, first);
  await settled(acme, last.id, (v) => v.state === 'captured');
  capturedJobId = last.id;

  const dead = await submitJob(acme);
  await refusals.refuse(dead.id);
  await deliver(server.url, acme.provider, signDelivery(completion(acme, dead.id, { input_tokens: 500, output_tokens: 50 })));
  await settled(acme, dead.id, (v) => v.events[0]?.state === 'dead');
  deadJobId = dead.id;

  // Two jobs used more than they reserved: two alerts, for the alerts page and its pages.
  for (let i = 0; i < 2; i++) {
    const overrun = await submitJob(acme, { input_tokens: 1_000, output_tokens: 100 });
    await deliver(server.url, acme.provider, signDelivery(completion(acme, overrun.id, { input_tokens: 40_000, output_tokens: 9_000 })));
    await settled(acme, overrun.id, (v) => v.alerts.includes('usage_exceeds_reservation'));
    overrunJobIds.push(overrun.id);
  }
  // A balance with every decimal taken: its card must hold "998.960935 USD".
  initech = await createWorld(admin, { credit: '998.960935' });

  // A drifted projection, found by reconciliation: an open exception to resolve.
  await db.pool.query('update accounts set credits_posted = credits_posted + 1234567 where id = $1', [globex.walletId]);
  expect((await admin.post('/v1/reconciliation/runs', {})).status).toBe(201);
});

afterAll(async () => {
  await browser?.close();
  const lines = Object.entries(weights).map(([name, bytes]) => `${name}: ${(bytes / 1024).toFixed(1)} KiB`);
  if (lines.length) console.log(`console page weights on a first visit (HTML + CSS + JS, uncompressed): ${lines.join('; ')}`);
});

/**
 * Opens a page, records what it weighs on a first visit (its HTML plus every stylesheet
 * and script it loads, uncompressed), keeps a screenshot.
 */
async function visit(page: Page, path: string, name: string) {
  const response = await page.goto(`${server.url}${path}`);
  await page.waitForLoadState('networkidle');
  const assets = await page.$$eval('link[rel=stylesheet], script[src]', (elements) =>
    elements.map((e) => e.getAttribute('href') ?? e.getAttribute('src') ?? ''),
  );
  let bytes = (await response!.body()).length;
  for (const url of assets) bytes += (await (await fetch(new URL(url, server.url))).arrayBuffer()).byteLength;
  weights[name] = bytes;
  await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
  return response;
}

/** Each test signs in once (only failed sign-ins are limited, console/sign-in-limit.ts). */
async function signIn(page: Page, credential: string) {
  await page.goto(`${server.url}/`);
  await expect.poll(() => page.url()).toContain('/console/sign-in');
  await page.fill('#token', credential);
  await Promise.all([page.waitForURL(`${server.url}/console`), page.click('button[type=submit]')]);
}

/** The widths a person opens the console at: a laptop and a phone. */
const WIDE = { width: 1280, height: 900 };
const NARROW = { width: 390, height: 800 };

/** How many lines each element of `selector` takes (its line boxes); elements without text are left out. */
async function linesOf(page: Page, selector: string): Promise<{ text: string; lines: number }[]> {
  return page.$$eval(selector, (elements) =>
    elements.map((e) => ({
      text: (e.textContent ?? '').trim(),
      lines: new Set([...e.getClientRects()].map((r) => Math.round(r.top))).size,
    })),
  );
}

describe('the operator console', () => {
  it('refuses a wrong token and signs the operator in with the admin token', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/console/jobs`);
    expect(page.url()).toContain('/console/sign-in');
    await page.fill('#token', 'not-a-token');
    await page.click('button[type=submit]');
    await expect.poll(() => page.textContent('.error')).toContain('not accepted');
    await page.screenshot({ path: `${ARTIFACTS}sign-in-refused.png` });
    await signIn(page, ADMIN_TOKEN);
    await visit(page, '/console', 'overview');
    expect(await page.textContent('h1')).toBe('Overview');
    expect(await page.textContent('.cards')).toContain('Dead letters');
    await expect.poll(() => page.locator('.chart canvas').count()).toBe(2);
    await page.close();
  });

  it('shows tenants → wallets → a wallet with its entries, holds, balance chart and a statement to download', async () => {
    const page = await browser.newPage({ acceptDownloads: true });
    await signIn(page, ADMIN_TOKEN);
    await visit(page, '/console/tenants', 'tenants');
    await page.click(`a[href="/console/tenants/${acme.tenantId}"]`);
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: `${ARTIFACTS}tenant.png`, fullPage: true });
    await page.click(`a[href="/console/wallets/${acme.walletId}"]`);
    await page.waitForLoadState('networkidle');
    const wallet = (await acme.tenant.get(`/v1/wallets/${acme.walletId}`)).body;
    await visit(page, `/console/wallets/${acme.walletId}`, 'wallet');
    expect(await page.textContent('.cards')).toContain(wallet.balance.replace(/0{1,4}$/, ''));
    expect(await page.locator('h2:has-text("Entries") + table tbody tr').count()).toBeGreaterThanOrEqual(8);
    expect(await page.textContent('h2:has-text("Open holds") + table')).toContain(deadJobId);
    await expect.poll(() => page.locator('.chart canvas').count()).toBe(1);

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('button:has-text("Download CSV")')]);
    const csv = await readFile((await download.path())!, 'utf8');
    await writeFile(`${ARTIFACTS}statement.csv`, csv);
    expect(csv.split('\n')[0]).toMatch(/^row,created_at,entry_type,job_id,settlement_key,.*balance_after/);
    expect(csv).toContain(capturedJobId);
    // The statement closes on the wallet's balance now.
    expect(csv.split('\n').find((line) => line.startsWith('closing,'))).toContain(`,${wallet.balance},`);
    await page.close();
  });

  it('shows a job as a timeline of deliveries, events and settlements with the pricing snapshot', async () => {
    const page = await browser.newPage();
    await signIn(page, ADMIN_TOKEN);
    await visit(page, '/console/jobs', 'jobs');
    await visit(page, `/console/jobs/${capturedJobId}`, 'job');
    const timeline = await page.textContent('.timeline');
    expect(timeline).toContain('Submitted');
    expect(timeline).toContain('already_accepted');
    expect(timeline).toContain('Settlement: capture');
    expect(await page.textContent('details.pricing')).toContain('input_tokens');
    await page.close();
  });

  it('resolves a reconciliation exception, and runs a repair only after a confirmation', async () => {
    const page = await browser.newPage();
    await signIn(page, ADMIN_TOKEN);
    await visit(page, '/console/exceptions', 'exceptions');
    const row = page.locator('tr', { hasText: 'projection_drift' }).first();
    await row.locator('input[name=note]').fill('checked by hand: a test drifted it on purpose');
    await row.locator('button:has-text("Resolve")').click();
    await expect.poll(() => page.textContent('.notice')).toContain('resolved');
    await page.screenshot({ path: `${ARTIFACTS}exception-resolved.png`, fullPage: true });
    const resolved = (await admin.get('/v1/reconciliation/exceptions?status=resolved')).body.data;
    expect(resolved.map((e: any) => e.resolution_note)).toContain('checked by hand: a test drifted it on purpose');

    await page.click('a:has-text("Run reconciliation with repair")');
    expect(await page.textContent('h1')).toBe('Run reconciliation with repair');
    await page.screenshot({ path: `${ARTIFACTS}repair-confirm.png`, fullPage: true });
    await page.click('button:has-text("Yes, run and repair")');
    await expect.poll(() => page.textContent('h1')).toBe('Reconciliation run');
    expect(await page.textContent('main')).toContain('rebuild_projection');
    await page.screenshot({ path: `${ARTIFACTS}repair-run.png`, fullPage: true });
    await page.close();
  });

  it('retries a dead letter, which then settles', async () => {
    const page = await browser.newPage();
    await signIn(page, ADMIN_TOKEN);
    await visit(page, '/console/dead-letters', 'dead-letters');
    expect(await page.textContent('main table')).toContain(deadJobId);
    await refusals.allow(deadJobId);
    await page.locator('tr', { hasText: deadJobId }).locator('button:has-text("Retry")').click();
    await expect.poll(() => page.textContent('.notice')).toContain('queued again');
    await settled(acme, deadJobId, (v) => v.state === 'captured');
    await page.close();
  });

  it('shows a tenant its own pages only', async () => {
    const page = await browser.newPage();
    await signIn(page, acme.apiKey);
    await visit(page, '/console', 'tenant-overview');
    expect(await page.textContent('nav')).not.toContain('Tenants');
    await visit(page, '/console/wallets', 'tenant-wallets');
    expect(await page.textContent('main')).toContain(acme.walletId);
    expect(await page.textContent('main')).not.toContain(globex.walletId);
    for (const path of [
      `/console/wallets/${globex.walletId}`,
      '/console/tenants',
      `/console/tenants/${globex.tenantId}`,
      '/console/exceptions',
      '/console/dead-letters',
      '/console/no-such-page',
    ]) {
      const response = await page.goto(`${server.url}${path}`);
      expect(response?.status(), path).toBe(404);
    }
    await page.screenshot({ path: `${ARTIFACTS}tenant-refused.png`, fullPage: true });
    const job = await submitJob(globex);
    expect((await page.goto(`${server.url}/console/jobs/${job.id}`))?.status()).toBe(404);
    await page.close();
  });

  it('stays readable in a narrow window, with long names and empty lists', async () => {
    const tenant = await admin.post('/v1/tenants', { name: `A tenant with a very long name, ${'x'.repeat(120)}` });
    const page = await browser.newPage({ viewport: { width: 390, height: 800 } });
    await signIn(page, ADMIN_TOKEN);
    await visit(page, `/console/tenants/${tenant.body.id}`, 'narrow-empty-tenant');
    expect(await page.textContent('main')).toContain('No wallets.');
    await visit(page, `/console/wallets/${acme.walletId}`, 'narrow-wallet');
    // Nothing wider than the window: wide tables scroll inside their own box.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await visit(page, `/console/jobs/${capturedJobId}`, 'narrow-job');
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.close();
  });

  it('answers an unknown console path with a console page (404, the nav, a link home), and a signed-out browser with the sign-in', async () => {
    const page = await browser.newPage();
    const signedOut = await page.goto(`${server.url}/console/no-such-page/at-all`);
    expect(page.url()).toContain('/console/sign-in');
    expect(signedOut?.headers()['content-type']).toContain('text/html');
    await signIn(page, ADMIN_TOKEN);
    const response = await visit(page, '/console/no-such-page/at-all', 'not-found');
    expect(response?.status()).toBe(404);
    expect(response?.headers()['content-type']).toContain('text/html');
    expect(await page.textContent('h1')).toBe('Not found');
    expect(await page.locator('nav a[href="/console/jobs"]').count()).toBe(1);
    await page.click('main a[href="/console"]');
    await expect.poll(() => page.textContent('h1')).toBe('Overview');
    await page.close();
  });

  it('shows every amount at the full scale of its currency, right-aligned in tabular numerals', async () => {
    const page = await browser.newPage({ viewport: WIDE });
    await signIn(page, ADMIN_TOKEN);
    for (const path of ['/console/jobs', `/console/wallets/${acme.walletId}`, `/console/jobs/${capturedJobId}`]) {
      await page.goto(`${server.url}${path}`);
      const amounts = await page.$$eval('.amount', (elements) => elements.map((e) => (e.textContent ?? '').replace(/\s+/g, ' ').trim()));
      expect(amounts.length, path).toBeGreaterThan(3);
      // As the API writes them: six decimals, none trimmed (0.018000, not 0.018).
      for (const amount of amounts) expect(amount, path).toMatch(/^-?\d+\.\d{6}( [A-Z]{3})?$/);
      const cells = await page.$$eval('td.num .amount', (elements) =>
        elements.map((e) => {
          const cell = e.closest('td')!;
          const style = cell.ownerDocument.defaultView!.getComputedStyle(cell);
          return {
            align: style.textAlign,
            numerals: cell.ownerDocument.defaultView!.getComputedStyle(e).fontVariantNumeric,
            right: cell.getBoundingClientRect().right - e.getBoundingClientRect().right,
          };
        }),
      );
      expect(cells.length, path).toBeGreaterThan(0);
      for (const cell of cells) {
        expect(cell.align, path).toBe('right');
        expect(cell.numerals, path).toContain('tabular-nums');
      }
    }
    // One column's amounts end at one edge, so their decimal points line up.
    await page.goto(`${server.url}/console/wallets/${acme.walletId}`);
    const rights = await page.$$eval('h2:has-text("Entries") + table tbody tr td:nth-child(3) .amount', (elements) =>
      elements.map((e) => Math.round(e.getBoundingClientRect().right)),
    );
    expect(rights.length).toBeGreaterThanOrEqual(8);
    expect(new Set(rights).size).toBe(1);
    await page.close();
  });

  it("keeps a wallet's amounts inside their stat cards, wide and narrow", async () => {
    for (const viewport of [WIDE, { width: 1024, height: 800 }, { width: 700, height: 800 }, NARROW]) {
      const page = await browser.newPage({ viewport });
      await signIn(page, ADMIN_TOKEN);
      await visit(page, `/console/wallets/${initech.walletId}`, `wallet-cards-${viewport.width}`);
      expect(await page.textContent('.cards')).toContain('998.960935');
      const overflows = await page.$$eval('.card', (cards) =>
        cards.flatMap((card) => {
          const box = card.getBoundingClientRect();
          return [...card.querySelectorAll('.value, .value *')]
            .map((e) => ({ text: e.textContent, box: e.getBoundingClientRect() }))
            .filter(({ box: inner }) => inner.left < box.left || inner.right > box.right - 1)
            .map(({ text, box: inner }) => `${text}: ${inner.left}–${inner.right} outside ${box.left}–${box.right}`);
        }),
      );
      expect(overflows, `at ${viewport.width} px`).toEqual([]);
      await page.close();
    }
  });

  it('lists the alerts, newest first and paged, reached from the overview', async () => {
    const page = await browser.newPage({ viewport: WIDE });
    await signIn(page, ADMIN_TOKEN);
    await visit(page, '/console', 'overview-alerts');
    const stat = page.locator('.card', { hasText: 'Alerts, 24 h' });
    expect((await stat.locator('.value').textContent())?.trim()).toBe('2');
    await Promise.all([page.waitForURL(`${server.url}/console/alerts`), stat.locator('a').click()]);
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: `${ARTIFACTS}alerts.png`, fullPage: true });
    expect(await page.textContent('h1')).toBe('Alerts');
    const rows = page.locator('table.alerts tbody tr');
    expect(await rows.count()).toBe(2);
    // Newest first: the later overrun on top.
    expect(await rows.nth(0).textContent()).toContain(overrunJobIds[1]);
    expect(await rows.nth(1).textContent()).toContain(overrunJobIds[0]);
    expect(await rows.nth(0).textContent()).toContain('usage_exceeds_reservation');

    // Paged like every list: one a page, older and newer.
    await page.goto(`${server.url}/console/alerts?limit=1`);
    expect(await rows.count()).toBe(1);
    expect(await rows.nth(0).textContent()).toContain(overrunJobIds[1]);
    await page.click('a[rel=next]');
    await expect.poll(async () => rows.nth(0).textContent()).toContain(overrunJobIds[0]);
    expect(await page.locator('a[rel=prev]').count()).toBe(1);

    // A class's badge narrows the list to that class.
    await page.goto(`${server.url}/console/alerts`);
    await page.click('table.alerts tbody tr:first-child a:has(.badge)');
    await expect.poll(() => page.url()).toContain('class=usage_exceeds_reservation');
    expect(await rows.count()).toBe(2);
    await page.close();

    // A tenant sees its own alerts only.
    const tenantPage = await browser.newPage({ viewport: WIDE });
    await signIn(tenantPage, globex.apiKey);
    await tenantPage.goto(`${server.url}/console/alerts`);
    expect(await tenantPage.textContent('main table')).toContain('No alerts.');
    await tenantPage.close();
  });

  it('lays the open exceptions out with room for their detail at 1280 px', async () => {
    // Open exceptions of several classes beside their resolve forms: a drift found now,
    // the overruns' usage_exceeds_reservation, a sum that is not zero.
    const drifted = await createWorld(admin, { credit: '5.00' });
    await db.pool.query('update accounts set credits_posted = credits_posted + 7654321 where id = $1', [drifted.walletId]);
    expect((await admin.post('/v1/reconciliation/runs', {})).status).toBe(201);
    const page = await browser.newPage({ viewport: WIDE });
    await signIn(page, ADMIN_TOKEN);
    await visit(page, '/console/exceptions', 'exceptions-wide');
    const widths = await page.$$eval('table tbody tr td:nth-child(3)', (cells) => cells.map((c) => c.getBoundingClientRect().width));
    expect(widths.length).toBeGreaterThanOrEqual(3);
    // It was squeezed to 40–200 px (a letter, or a word, per line) by the columns beside it.
    for (const width of widths) expect(width).toBeGreaterThanOrEqual(300);
    for (const { text, lines } of await linesOf(page, 'dl.detail dt')) expect(lines, text).toBe(1);
    // Nothing wider than the window, the resolve forms included.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(WIDE.width);
    await page.close();
  });

  it('keeps ids on one line in a narrow window: the tables scroll inside their box instead', async () => {
    const page = await browser.newPage({ viewport: NARROW });
    await signIn(page, ADMIN_TOKEN);
    for (const path of ['/console/jobs', `/console/wallets/${acme.walletId}`, '/console/alerts', '/console/wallets']) {
      await page.goto(`${server.url}${path}`);
      const idCells = 'td:has(> a.mono[href^="/console/jobs/"]), td:has(> a.mono[href^="/console/wallets/"])';
      const ids = await linesOf(page, `${idCells} > a.mono`);
      expect(ids.length, path).toBeGreaterThan(0);
      // A job id broken at every few letters made each row a dozen lines tall.
      for (const { text, lines } of ids) expect(lines, `${path}: ${text}`).toBe(1);
      // The id itself, not its cell: a cell is as tall as its row, and an alert's detail beside
      // it (the usage, its price, what went unbilled) is rightly several lines.
      const heights = await page.$$eval(`${idCells} > a.mono`, (ids) =>
        ids.map((id) => {
          const text = id.ownerDocument.createRange();
          text.selectNodeContents(id);
          return text.getBoundingClientRect().height;
        }),
      );
      for (const height of heights) expect(height, path).toBeLessThan(80);
      expect(await page.evaluate('document.documentElement.scrollWidth'), path).toBeLessThanOrEqual(NARROW.width);
    }
    // A job's funding names each grant by its whole id: one line too.
    await page.goto(`${server.url}/console/jobs/${capturedJobId}`);
    const grantCells = await page.$$eval('table.funding tbody td:first-child', (cells) =>
      cells.map((c) => c.getBoundingClientRect().height),
    );
    expect(grantCells.length).toBeGreaterThan(0);
    for (const height of grantCells) expect(height).toBeLessThan(40);
    await page.close();
  });

  it('keeps a screenshot of each page, wide and narrow', async () => {
    const pages = {
      overview: '/console',
      jobs: '/console/jobs',
      job: `/console/jobs/${capturedJobId}`,
      wallet: `/console/wallets/${acme.walletId}`,
      'wallet-998': `/console/wallets/${initech.walletId}`,
      alerts: '/console/alerts',
      exceptions: '/console/exceptions',
      'dead-letters': '/console/dead-letters',
      'not-found': '/console/no-such-page',
    };
    for (const viewport of [WIDE, NARROW]) {
      const page = await browser.newPage({ viewport });
      await signIn(page, ADMIN_TOKEN);
      for (const [name, path] of Object.entries(pages)) {
        await page.goto(`${server.url}${path}`);
        await page.waitForLoadState('networkidle');
        await page.screenshot({ path: `${ARTIFACTS}${viewport.width}-${name}.png`, fullPage: true });
        expect(await page.evaluate('document.documentElement.scrollWidth'), `${path} at ${viewport.width} px`).toBeLessThanOrEqual(
          viewport.width,
        );
      }
      await page.close();
    }
  });

  it('signs out, and a signed-out browser sees nothing', async () => {
    const page = await browser.newPage();
    await signIn(page, ADMIN_TOKEN);
    await page.click('button:has-text("Sign out")');
    await expect.poll(() => page.url()).toContain('/console/sign-in');
    await page.goto(`${server.url}/console/wallets/${acme.walletId}`);
    expect(page.url()).toContain('/console/sign-in');
    await page.close();
  });
});
