import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * What the console's browser tests share: signing in, and opening a page that must load
 * without a console error, a failed request or a 4xx/5xx answer.
 *
 * Every navigation waits for the page it leaves to settle first: leaving a page while its
 * icon still loads aborts that request (net::ERR_ABORTED), a failure of the test's making
 * that once failed CI.
 */

/** Signs in through the form and waits until the overview has loaded everything it asks for. */
export async function signIn(page: Page, baseUrl: string, credential: string): Promise<void> {
  await page.goto(`${baseUrl}/console/sign-in`);
  await page.waitForLoadState('networkidle');
  await page.fill('#token', credential);
  await Promise.all([page.waitForURL(`${baseUrl}/console`), page.click('button[type=submit]')]);
  await page.waitForLoadState('networkidle');
}

/** Opens `url`, waits for it to settle, keeps a full-page screenshot at `screenshot`, fails on any problem. */
export async function visitWithoutProblems(page: Page, url: string, screenshot: string): Promise<void> {
  const problems: string[] = [];
  const onConsole = (m: { type(): string; text(): string }) => m.type() === 'error' && problems.push(`console: ${m.text()}`);
  const onPageError = (e: Error) => problems.push(`script error: ${e.message}`);
  const onFailed = (r: { url(): string; failure(): { errorText: string } | null }) =>
    problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
  const onResponse = (r: { status(): number; url(): string }) => r.status() >= 400 && problems.push(`${r.status()} ${r.url()}`);
  page.on('console', onConsole);
  page.on('pageerror', onPageError);
  page.on('requestfailed', onFailed);
  page.on('response', onResponse);
  try {
    await page.goto(url);
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: screenshot, fullPage: true });
  } finally {
    page.off('console', onConsole);
    page.off('pageerror', onPageError);
    page.off('requestfailed', onFailed);
    page.off('response', onResponse);
  }
  expect(problems).toEqual([]);
}
