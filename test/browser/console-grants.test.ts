import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn as signInAt, visitWithoutProblems } from '../support/console-browser.js';
import { freshDatabase } from '../support/database.js';
import { ADMIN_TOKEN, startServer, waitUntil } from '../support/server.js';
import { Client, deliver, signDelivery } from '../support/client.js';
import { completion, createWorld, submitJob, type World } from '../support/world.js';

/**
 * A wallet's grants and a job's funding in the console, in Chromium, as the operator and
 * the tenant see them: the grants in draw-down order with their status and burn-down,
 * the job's shares across two grants. No console error and no failed request on either
 * page; screenshots in test-artifacts/console/ to look at.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/console/', import.meta.url));

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 1, env: { TALLY_RECONCILE_INTERVAL_SECONDS: '0', TALLY_POLL_INTERVAL_MS: '100' } });
const admin = new Client(server.url);

let browser: Browser;
let world: World;
let jobId: string;
const grantIds: Record<string, string> = {};

async function grant(name: string, body: Record<string, unknown>) {
  const answer = await admin.post(`/v1/wallets/${world.walletId}/grants`, body, { 'idempotency-key': randomUUID() });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  grantIds[name] = answer.body.id;
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: install Debian's chromium (.ci/run does) or set CHROMIUM_PATH`);
  await mkdir(ARTIFACTS, { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  world = await createWorld(admin, { credit: '100.00' });
  await grant('trial', {
    amount: '20.00',
    category: 'promotional',
    priority: 10,
    expires_at: new Date(Date.now() + 14 * 86_400_000).toISOString(),
    reference: 'free trial',
  });
  await grant('annual', {
    amount: '50.00',
    category: 'paid',
    priority: 40,
    expires_at: new Date(Date.now() + 365 * 86_400_000).toISOString(),
  });
  await grant('mistake', { amount: '5.00', category: 'promotional', priority: 90 });
  expect((await admin.post(`/v1/grants/${grantIds.mistake}/void`, { note: 'issued twice' })).status).toBe(200);
  await grant('later', { amount: '10.00', category: 'promotional', effective_at: new Date(Date.now() + 7 * 86_400_000).toISOString() });
  // 25.00 reserved: 20.00 from the trial, 5.00 from the annual grant; 15.00 captured.
  const job = await submitJob(world, { input_tokens: 25_000_000 });
  await deliver(server.url, world.provider, signDelivery(completion(world, job.id, { input_tokens: 15_000_000 })));
  await waitUntil(async () => (await world.tenant.get(`/v1/jobs/${job.id}`)).body.state === 'captured');
  jobId = job.id;
  // One more job still holding part of the annual grant.
  await submitJob(world, { input_tokens: 8_000_000 });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server.stop();
});

const visit = (page: Page, path: string, name: string) =>
  visitWithoutProblems(page, `${server.url}${path}`, `${ARTIFACTS}${name}.png`);
const signIn = (page: Page, credential: string) => signInAt(page, server.url, credential);

describe("a wallet's grants and a job's funding in the console", () => {
  for (const who of ['operator', 'tenant'] as const) {
    it(`shows the ${who} every grant with its status and burn-down, and the job's shares`, async () => {
      const page = await browser.newPage();
      await signIn(page, who === 'operator' ? ADMIN_TOKEN : world.apiKey);
      await visit(page, `/console/wallets/${world.walletId}`, `grants-wallet-${who}`);
      const rows = page.locator('table.grants tbody tr');
      await expect.poll(() => rows.count()).toBe(5);
      const statuses = await page.locator('table.grants tbody tr td:nth-child(2)').allTextContents();
      expect(statuses.map((s) => s.trim()).sort()).toEqual(['active', 'active', 'active', 'scheduled', 'voided'].sort());
      // Each grant's bar: used, held, free and lapsed, in thousandths of its amount. The first
      // job held 20.00 of the trial and 5.00 of the annual grant and captured 15.00, all from
      // the trial; the second holds the trial's last 5.00 and 3.00 of the annual grant.
      const row = (name: string) => page.locator('table.grants tbody tr', { has: page.locator(`td[title="${grantIds[name]}"]`) });
      const widths = async (name: string) =>
        Promise.all(['used', 'held', 'free', 'lapsed'].map((kind) => row(name).locator(`rect.burn-${kind}`).getAttribute('width')));
      expect(await widths('trial')).toEqual(['750', '250', '0', '0']);
      expect(await widths('annual')).toEqual(['0', '60', '940', '0']);
      expect(await widths('mistake')).toEqual(['0', '0', '0', '1000']);

      await visit(page, `/console/jobs/${jobId}`, `grants-job-funding-${who}`);
      const shares = page.locator('table.funding tbody tr');
      await expect.poll(() => shares.count()).toBe(2);
      const first = await shares.nth(0).locator('td').allTextContents();
      expect(first[0]).toBe(grantIds.trial);
      await page.close();
    });
  }
});

describe("a job's corrections and a wallet's auto-recharge in the console", () => {
  it('shows each grant’s adjusted column (a correction drawn past the used-up trial) and why a recharge cannot be made', async () => {
    // +1.00: the trial is fully held or used, so the correction draws from the annual grant.
    const correction = {
      ...completion(world, jobId, { input_tokens: 16_000_000 }, 'job.usage_corrected'),
      data: { ...completion(world, jobId, { input_tokens: 16_000_000 }).data, correction: 1 },
    };
    await deliver(server.url, world.provider, signDelivery(correction));
    await waitUntil(async () => (await world.tenant.get(`/v1/jobs/${jobId}`)).body.adjusted === '1.000000');
    const recharge = await world.tenant.request('PUT', `/v1/wallets/${world.walletId}/auto-recharge`, {
      enabled: true,
      threshold: '10.00',
      target: '50.00',
    });
    expect(recharge.status, JSON.stringify(recharge.body)).toBe(200);
    expect(recharge.body.blocked_reason).toBe('payments_not_configured');

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signIn(page, ADMIN_TOKEN);
    await visit(page, `/console/jobs/${jobId}`, 'funding-adjusted');
    const header = await page.locator('table.funding thead th').allTextContents();
    expect(header.map((h) => h.trim())).toContain('Adjusted');
    const annual = page.locator('table.funding tbody tr', { has: page.locator(`td:text-is("${grantIds.annual}")`) });
    const cells = (await annual.locator('td').allTextContents()).map((c) => c.trim());
    expect(cells.at(-1)).toBe('1.000000');
    await visit(page, `/console/wallets/${world.walletId}`, 'wallet-auto-recharge');
    await expect.poll(() => page.locator('dd.blocked').getAttribute('data-reason')).toBe('payments_not_configured');
    expect(await page.locator('dd.blocked').textContent()).toMatch(/Stripe is not configured/);
    await page.close();
  });
});
