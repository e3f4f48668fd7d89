import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { ADMIN_TOKEN, startServer, waitUntil } from '../support/server.js';
import { Client, deliver, signDelivery } from '../support/client.js';
import { completion, createWorld, submitJob, type World } from '../support/world.js';

/**
 * Issue 24, items 1 and 5, in Chromium against a real `tally serve`: every console page,
 * signed in as the operator and as a tenant, loads with no console error and no failed
 * request (the favicon among them); the session cookie holds no credential, expires, and
 * opens nothing once signed out, even put back by hand. Screenshots go to /tmp/screens/.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENS = '/tmp/screens/';
const ABSOLUTE_SECONDS = 12 * 60 * 60;

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 1, env: { TALLY_RECONCILE_INTERVAL_SECONDS: '0', TALLY_POLL_INTERVAL_MS: '100' } });
const admin = new Client(server.url);

let browser: Browser;
let acme: World;
let jobId: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`);
  await mkdir(SCREENS, { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  acme = await createWorld(admin, { credit: '100.00' });
  const job = await submitJob(acme, { input_tokens: 20_000, output_tokens: 8_000 });
  await deliver(server.url, acme.provider, signDelivery(completion(acme, job.id, { input_tokens: 12_000, output_tokens: 3_000 })));
  await waitUntil(async () => (await acme.tenant.get(`/v1/jobs/${job.id}`)).body.state === 'captured');
  jobId = job.id;
  expect((await admin.post('/v1/reconciliation/runs', {})).status).toBe(201);
});

afterAll(async () => {
  await browser?.close();
});

/** A page that records every console error, uncaught script error, failed request and 4xx/5xx answer. */
async function watchedPage(context: BrowserContext) {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error on ${page.url()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`script error on ${page.url()}: ${error.message}`));
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()} (${request.failure()?.errorText})`));
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} for ${response.url()}`);
  });
  return { page, problems };
}

/**
 * Each navigation waits for its page to settle before the next one: leaving a page while
 * its icon still loads aborts that request, which would count as a failure of the test's
 * making.
 */
async function settle(page: Page) {
  await page.waitForLoadState('networkidle');
}

async function signIn(page: Page, credential: string) {
  await page.goto(`${server.url}/console/sign-in`);
  await settle(page);
  await page.fill('#token', credential);
  await Promise.all([page.waitForURL(`${server.url}/console`), page.click('button[type=submit]')]);
  await settle(page);
}

/** Opens each page and waits for it to settle (charts drawn, every file loaded). */
async function visitAll(page: Page, paths: string[], prefix: string) {
  for (const path of paths) {
    const response = await page.goto(`${server.url}${path}`);
    await settle(page);
    expect(response?.status(), path).toBe(200);
    expect(page.url(), path).toBe(`${server.url}${path}`);
    expect(await page.locator('link[rel=icon]').getAttribute('href'), path).toBe('/console/assets/favicon.svg');
    const name =
      path
        .replace(/^\/console\/?/, '')
        .replace(/[0-9a-f-]{36}/, 'one')
        .replace(/\//g, '-') || 'overview';
    await page.screenshot({ path: `${SCREENS}${prefix}${name}.png`, fullPage: true });
  }
}

/** The session cookie as the browser keeps it, checked to hold nothing of the credential. */
async function sessionCookie(context: BrowserContext, credential: string) {
  const cookies = await context.cookies();
  expect(cookies.map((c) => c.name)).toEqual(['tally_console']);
  const cookie = cookies[0]!;
  for (const form of [
    credential,
    Buffer.from(credential).toString('base64'),
    Buffer.from(credential).toString('base64url'),
    encodeURIComponent(credential),
  ]) {
    expect(cookie.value).not.toContain(form);
    expect(form).not.toContain(cookie.value);
  }
  expect(cookie.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(cookie).toMatchObject({ path: '/console', httpOnly: true, sameSite: 'Strict', secure: false });
  // An expiry (not a browser-session cookie): the absolute lifetime from now.
  const left = cookie.expires - Date.now() / 1000;
  expect(left).toBeGreaterThan(ABSOLUTE_SECONDS - 600);
  expect(left).toBeLessThanOrEqual(ABSOLUTE_SECONDS + 5);
  return cookie;
}

/** Signs out with the nav's button, puts the old cookie back, and finds it opens nothing. */
async function signOutAndReplay(context: BrowserContext, page: Page, cookie: Awaited<ReturnType<typeof sessionCookie>>) {
  await Promise.all([page.waitForURL(`${server.url}/console/sign-in`), page.click('button:has-text("Sign out")')]);
  await settle(page);
  expect(await context.cookies()).toEqual([]);
  await context.addCookies([cookie]);
  await page.goto(`${server.url}/console/wallets`);
  await settle(page);
  expect(page.url()).toBe(`${server.url}/console/sign-in`);
  expect(await page.textContent('main, form')).not.toContain(acme.walletId);
  // And outside the browser: the old value gets the sign-in page, not data.
  const replay = await fetch(`${server.url}/console/wallets/${acme.walletId}`, {
    headers: { cookie: `tally_console=${cookie.value}` },
    redirect: 'manual',
  });
  expect(replay.status).toBe(303);
  expect(replay.headers.get('location')).toBe('/console/sign-in');
  expect(await replay.text()).not.toContain(acme.walletId);
}

describe('every console page in Chromium', () => {
  it('serves an icon: declared by every page, and at /favicon.ico', async () => {
    for (const path of ['/favicon.ico', '/console/assets/favicon.svg']) {
      const answer = await fetch(`${server.url}${path}`);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get('content-type'), path).toContain('image/svg+xml');
      expect(await answer.text()).toContain('<svg');
    }
  });

  it('loads for the operator with no console error and no failed request; the cookie holds no credential, expires, and dies at sign-out', async () => {
    const context = await browser.newContext();
    const { page, problems } = await watchedPage(context);
    await signIn(page, ADMIN_TOKEN);
    const cookie = await sessionCookie(context, ADMIN_TOKEN);
    await visitAll(
      page,
      [
        '/console',
        '/console/tenants',
        `/console/tenants/${acme.tenantId}`,
        '/console/wallets',
        `/console/wallets/${acme.walletId}`,
        '/console/jobs',
        `/console/jobs/${jobId}`,
        '/console/exceptions',
        '/console/repair',
        '/console/dead-letters',
      ],
      'admin-',
    );
    expect(problems).toEqual([]);
    await signOutAndReplay(context, page, cookie);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('loads for a tenant with no console error and no failed request; the cookie holds no API key, expires, and dies at sign-out', async () => {
    const context = await browser.newContext();
    const { page, problems } = await watchedPage(context);
    await signIn(page, acme.apiKey);
    const cookie = await sessionCookie(context, acme.apiKey);
    await visitAll(
      page,
      ['/console', '/console/wallets', `/console/wallets/${acme.walletId}`, '/console/jobs', `/console/jobs/${jobId}`],
      'tenant-',
    );
    expect(problems).toEqual([]);
    await signOutAndReplay(context, page, cookie);
    expect(problems).toEqual([]);
    await context.close();
  });
});
