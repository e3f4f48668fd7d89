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
import { completion, createWorld, type World } from '../support/world.js';

/**
 * A long-running job's page in the console, in Chromium, as the tenant and the operator see
 * it: the hold that grew twice and then ran out at max_limits (the warning says why and
 * what it costs), usage so far against the limit and the ceiling, each extension, and the
 * extensions in the timeline; a phone-width view too. No console error and no failed
 * request; screenshots in test-artifacts/console/ to look at.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/console/', import.meta.url));

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 1, env: { TALLY_RECONCILE_INTERVAL_SECONDS: '0', TALLY_POLL_INTERVAL_MS: '100' } });
const admin = new Client(server.url);

let browser: Browser;
let world: World;
let jobId: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: install Debian's chromium (.ci/run does) or set CHROMIUM_PATH`);
  await mkdir(ARTIFACTS, { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  // 0.002 per GPU-second, as docs/long-running-jobs.md prices it
  world = await createWorld(admin, { credit: '10.00', prices: { gpu_seconds: '2000.00' } });
  const job = await world.tenant.post(
    '/v1/jobs',
    {
      wallet_id: world.walletId,
      model: world.model,
      provider: world.provider,
      limits: { gpu_seconds: 600 },
      auto_extend: { step: { gpu_seconds: 300 }, max_limits: { gpu_seconds: 1200 } },
    },
    { 'idempotency-key': randomUUID() },
  );
  expect(job.status, JSON.stringify(job.body)).toBe(201);
  jobId = job.body.id;
  // 400 → limits 900 (extension 1); 750 → 1200 (extension 2); 1000 → target 1300, capped: exhausted
  for (const gpu of [400, 750, 1000]) {
    await deliver(server.url, world.provider, signDelivery(completion(world, jobId, { gpu_seconds: gpu }, 'job.progress')));
    await waitUntil(async () => (await world.tenant.get(`/v1/jobs/${jobId}`)).body.usage_so_far?.gpu_seconds === gpu);
  }
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server.stop();
});

const visit = (page: Page, path: string, name: string) =>
  visitWithoutProblems(page, `${server.url}${path}`, `${ARTIFACTS}${name}.png`);
const signIn = (page: Page, credential: string) => signInAt(page, server.url, credential);

describe("a long-running job's hold in the console", () => {
  for (const who of ['tenant', 'operator'] as const) {
    it(`shows the ${who} that the hold ran out, why, the usage against limit and ceiling, and each extension`, async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await signIn(page, who === 'operator' ? ADMIN_TOKEN : world.apiKey);
      await visit(page, `/console/jobs/${jobId}`, `hold-job-${who}`);
      const warning = page.locator('.warning');
      await expect.poll(() => warning.count()).toBe(1);
      const text = (await warning.textContent())!.replace(/\s+/g, ' ');
      expect(text).toContain('Hold exhausted');
      expect(text).toContain('max_limits');
      expect(text).toContain('2.000000'); // the usage so far's price
      expect(text).toContain('2.400000'); // what is held
      const usage = (await page.locator('table.hold-usage tbody tr td').allTextContents()).map((c) => c.trim());
      expect(usage.slice(0, 5)).toEqual(['gpu_seconds', '1000', '1200', '300', '1200']);
      // usage 1000 of a 1200 ceiling, in thousandths: 833; the limit reaches the ceiling
      expect(await page.locator('rect.hold-used').getAttribute('width')).toBe('833');
      expect(await page.locator('rect.hold-limit').getAttribute('width')).toBe('1000');
      const extensions = page.locator('table.extensions tbody tr');
      await expect.poll(() => extensions.count()).toBe(2);
      expect((await extensions.nth(1).locator('td').allTextContents()).map((c) => c.trim())).toEqual(
        expect.arrayContaining(['2', '0.600000 USD', 'gpu_seconds 1200', 'automatic']),
      );
      expect(await page.locator('ol.timeline li', { hasText: 'Hold extended' }).count()).toBe(2);
      await page.close();
    });
  }

  it('reads at phone width: the warning and the usage table fit the screen', async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await signIn(page, world.apiKey);
    await visit(page, `/console/jobs/${jobId}`, 'hold-job-phone');
    const box = await page.locator('.warning').boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    await page.close();
  });
});
