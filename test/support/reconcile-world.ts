import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, expect, inject } from 'vitest';
import { createPool, type Pool } from '../../src/db/pool.js';
import { withTransaction } from '../../src/db/transaction.js';
import { receiveWebhook, type IntakeResult } from '../../src/intake/receive.js';
import { submitJob as submit } from '../../src/jobs/submit.js';
import type { JobRow } from '../../src/jobs/rows.js';
import type { ExceptionClass } from '../../src/reconcile/checks.js';
import type { ReconciliationException, ReconciliationRun } from '../../src/reconcile/run.js';
import { reconcile } from '../../src/reconcile/run.js';
import { claimEvents } from '../../src/queue/index.js';
import { settleEvent, type EventOutcome } from '../../src/worker/settle-event.js';
import { WebhookRefused } from '../../src/webhooks/errors.js';
import { TEST_SECRET, signDelivery } from './client.js';
import { TEST_SERVER_SECRET, createWorld as createFixtureWorld, type World as FixtureWorld } from './fixtures.js';
import { withDatabase } from './global-setup.js';
import { TEMPLATE_DATABASE } from './names.js';
import { uncachedProviders } from '../../src/catalog/provider-cache.js';

/**
 * Helpers for the reconciliation tests. Reconciliation reads the whole database, so a
 * test that asserts "this run reports exactly this class" needs a database nobody else
 * writes to: databasePerTest() clones the migrated template before each test and drops
 * it after.
 */
export interface ScratchDatabase {
  name: string;
  url: string;
  pool: Pool;
}

export function databasePerTest(options: { max?: number } = {}): { readonly current: ScratchDatabase } {
  let current: ScratchDatabase | null = null;
  beforeEach(async () => {
    const serverUrl = inject('databaseUrl');
    const name = `tally_rec_${randomBytes(6).toString('hex')}`;
    const admin = createPool(withDatabase(serverUrl, 'postgres'), { max: 1 });
    try {
      await admin.query(`create database ${name} template ${TEMPLATE_DATABASE}`);
    } finally {
      await admin.end();
    }
    const url = withDatabase(serverUrl, name);
    current = { name, url, pool: createPool(url, { max: options.max ?? 10 }) };
  });
  afterEach(async () => {
    if (!current) return;
    const { name, pool } = current;
    current = null;
    await pool.end();
    const admin = createPool(withDatabase(inject('databaseUrl'), 'postgres'), { max: 1 });
    try {
      await admin.query(`drop database if exists ${name} with (force)`);
    } finally {
      await admin.end();
    }
  });
  return {
    get current() {
      if (!current) throw new Error('no database: databasePerTest() gives one only inside a test');
      return current;
    },
  };
}

export interface World extends FixtureWorld {
  /** the provider's signing secret, so tests can send it signed webhooks */
  secret: string;
}

/**
 * fixtures.createWorld (a tenant, a USD wallet credited through creditWallet, a generic
 * provider, a priced model) with the provider's secret set to TEST_SECRET, so webhooks
 * go through the real intake path. A provider row carries no money.
 */
export async function createWorld(pool: Pool, options: Parameters<typeof createFixtureWorld>[1] = {}): Promise<World> {
  const world = await createFixtureWorld(pool, options);
  await pool.query('update providers set secrets = $2 where name = $1', [world.provider.name, [TEST_SECRET]]);
  return { ...world, secret: TEST_SECRET };
}

/** A job through the real submitJob (reserveHold), optionally with a provider job ref. */
export async function submitJob(pool: Pool, world: World, options: { limits?: Record<string, number>; ref?: string } = {}): Promise<JobRow> {
  return withTransaction(pool, (tx) =>
    submit(tx, {
      tenantId: world.tenantId,
      wallet: world.wallet,
      provider: { name: world.provider.name, policies: world.provider.policies },
      model: world.model,
      providerJobRef: options.ref ?? null,
      limits: options.limits ?? { input_tokens: 1000, output_tokens: 1000 },
    }),
  );
}

/** A generic-provider webhook body for `job`. */
export function event(world: World, job: Pick<JobRow, 'id'>, type: string, data: Record<string, unknown> = {}) {
  return {
    type,
    timestamp: new Date().toISOString(),
    data: { job_id: job.id, tenant_id: world.tenantId, model: world.model, currency: 'USD', ...data },
  };
}

/** Delivers a signed webhook through the real intake (receiveWebhook), as the HTTP route does. */
export async function deliver(pool: Pool, world: World, body: unknown, options: { id?: string } = {}): Promise<IntakeResult & { id: string }> {
  const signed = signDelivery(body, { secret: world.secret, ...(options.id ? { id: options.id } : {}) });
  const result = await receiveWebhook(pool, uncachedProviders(pool, TEST_SERVER_SECRET), world.provider.name, Buffer.from(signed.body), signed.headers);
  return { ...result, id: signed.headers['webhook-id']! };
}

/** Like deliver(), for a delivery intake must refuse: returns the refusal. */
export async function deliverRefused(pool: Pool, world: World, body: unknown, options: { id?: string } = {}): Promise<WebhookRefused> {
  const error = await deliver(pool, world, body, options).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, 'intake should have refused this delivery').toBeInstanceOf(WebhookRefused);
  return error as WebhookRefused;
}

/**
 * Settles every ready event the way a worker does (claimEvents, then settleEvent under
 * the claim's fencing token) until none is ready. Events put back with a backoff are
 * not ready, so this ends.
 */
export async function drain(pool: Pool, leaseSeconds = 60): Promise<EventOutcome[]> {
  const outcomes: EventOutcome[] = [];
  for (;;) {
    const claimed = await claimEvents(pool, 10, leaseSeconds);
    if (claimed.length === 0) return outcomes;
    for (const claim of claimed) outcomes.push(await settleEvent(pool, claim));
  }
}

export function classesOf(exceptions: ReconciliationException[]): ExceptionClass[] {
  return [...new Set(exceptions.map((e) => e.class))].sort();
}

/** A run that found exactly `cls` (one or more exceptions of it, nothing else) and is not clean. */
export function expectOnly(run: ReconciliationRun, cls: ExceptionClass): ReconciliationException[] {
  expect(classesOf(run.exceptions), JSON.stringify(run.exceptions, null, 2)).toEqual([cls]);
  expect(run.clean).toBe(false);
  return run.exceptions;
}

export function expectClean(run: ReconciliationRun): void {
  expect(run.exceptions, JSON.stringify(run.exceptions, null, 2)).toEqual([]);
  expect(run.clean).toBe(true);
}

/**
 * The first run finds exactly `cls`; a second run finds the same exceptions again (same
 * ids, same first_seen_at), not new ones. Returns the second run's exceptions.
 */
export async function expectFoundTwice(pool: Pool, cls: ExceptionClass): Promise<ReconciliationException[]> {
  const first = expectOnly(await reconcile(pool), cls);
  const second = expectOnly(await reconcile(pool), cls);
  expect(second.map((e) => e.id).sort()).toEqual(first.map((e) => e.id).sort());
  for (const e of second) {
    const before = first.find((f) => f.id === e.id)!;
    expect(e.first_seen_at).toBe(before.first_seen_at);
    expect(e.resolved).toBe(false);
  }
  const stored = await pool.query<{ n: number }>('select count(*)::int as n from reconciliation_exceptions where cleared_at is null');
  expect(stored.rows[0]!.n).toBe(first.length);
  return second;
}

/** A class without a repair: a repair run changes nothing and still reports it. */
export async function expectNoRepair(pool: Pool, exceptions: ReconciliationException[]): Promise<void> {
  const before = await ledgerFingerprint(pool);
  const run = await reconcile(pool, { repair: true });
  expect(run.repairs).toEqual([]);
  expect(run.exceptions.map((e) => e.id).sort()).toEqual(exceptions.map((e) => e.id).sort());
  expect(await ledgerFingerprint(pool)).toEqual(before);
}

/** Resolving every exception with a note makes the next run clean; the run still lists them as reviewed. */
export async function expectResolvedMakesClean(
  pool: Pool,
  exceptions: ReconciliationException[],
  resolve: (id: string, note: string) => Promise<unknown>,
): Promise<void> {
  for (const e of exceptions) await resolve(e.id, `reviewed ${e.class}`);
  const run = await reconcile(pool);
  expectClean(run);
  expect(run.resolved_exceptions.map((e) => e.id).sort()).toEqual(exceptions.map((e) => e.id).sort());
  for (const e of run.resolved_exceptions) {
    expect(e).toMatchObject({ resolved: true, resolution_note: `reviewed ${e.class}` });
  }
}

/** Everything money-bearing, to show a run changed nothing. */
export async function ledgerFingerprint(pool: Pool): Promise<unknown> {
  const result = await pool.query(
    `select (select count(*) from ledger_entries)::int as entries,
            (select count(*) from settlements)::int as settlements,
            (select coalesce(jsonb_agg(jsonb_build_array(id, debits_pending::text, debits_posted::text, credits_pending::text, credits_posted::text) order by id), '[]') from accounts) as accounts,
            (select coalesce(jsonb_agg(jsonb_build_array(id, state, captured::text, released::text, adjusted::text) order by id), '[]') from jobs) as jobs,
            (select coalesce(jsonb_agg(jsonb_build_array(job_id, resolved_by) order by job_id), '[]') from holds) as holds,
            (select coalesce(jsonb_agg(jsonb_build_array(provider, event_key, state, fencing_token::text) order by provider, event_key), '[]') from webhook_events) as events`,
  );
  return result.rows[0];
}

export async function count(pool: Pool, sql: string, params: unknown[] = []): Promise<number> {
  const result = await pool.query<{ n: number }>(`select count(*)::int as n from (${sql}) x`, params);
  return result.rows[0]!.n;
}
