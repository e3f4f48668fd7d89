import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { startServer } from '../support/server.js';
import { Client } from '../support/client.js';
import { createWorld, submitJob, type World } from '../support/world.js';
import { entriesOf, expectLedgerConsistent, providerEvent, send, settledJob, walletOf } from '../support/jobs.js';

/**
 * CONTRACT "Billing rules" and "Job states and events", row by row, over HTTP against
 * a real `tally serve` with its workers. Every world is a fresh tenant with a wallet
 * credited 10.00 and prices input 1.00 / output 2.00 per 1M units; the default limits
 * (10,000 in, 5,000 out) reserve 0.020000.
 */
const db = await freshDatabase();
const server = await startServer(db.url, { workers: 2 });
const admin = new Client(server.url);

const USAGE = { input_tokens: 1200, output_tokens: 340 }; // 0.001200 + 0.000680 = 0.001880

function newWorld(options: Parameters<typeof createWorld>[1] = {}): Promise<World> {
  return createWorld(admin, { credit: '10.00', ...options });
}

function eventId(): string {
  return `msg_${randomUUID()}`;
}

afterAll(async () => {
  await expectLedgerConsistent(db.pool);
});

describe('reordered, late and repeated events', () => {
  it('a started that arrives after the completion settled has no effect', async () => {
    const world = await newWorld();
    const job = await submitJob(world);
    const completed = eventId();
    await send(server.url, world, providerEvent(world, job.id, 'job.completed', { usage: USAGE }), completed);
    await settledJob(world, job.id, 'captured', { events: 1 });

    // The provider stamped it earlier; it reaches us last.
    const started = eventId();
    await send(server.url, world, providerEvent(world, job.id, 'job.started', {}, new Date(Date.now() - 60_000)), started);
    const view = await settledJob(world, job.id, 'captured', { events: 2 });

    expect(view).toMatchObject({ reserved: '0.020000', captured: '0.001880', released: '0.018120', adjusted: '0.000000' });
    expect(view.events.map((e) => [e.event_key, e.type, e.state, e.reason])).toEqual([
      [completed, 'job.completed', 'applied', null],
      [started, 'job.started', 'no_effect', 'job_already_captured'],
    ]);
    expect(view.settlements.map((s) => [s.charge_type, s.version, s.amount])).toEqual([['capture', 1, '0.001880']]);
    expect(await walletOf(world)).toMatchObject({ balance: '9.998120', reserved: '0.000000', available: '9.998120' });
  });

  it('a failure after the capture has no effect', async () => {
    const world = await newWorld();
    const job = await submitJob(world);
    const completed = eventId();
    const failed = eventId();
    await send(server.url, world, providerEvent(world, job.id, 'job.completed', { usage: USAGE }), completed);
    await send(server.url, world, providerEvent(world, job.id, 'job.failed', { usage: { input_tokens: 9000, output_tokens: 1 } }), failed);
    const view = await settledJob(world, job.id, 'captured', { events: 2 });

    expect(view).toMatchObject({ captured: '0.001880', released: '0.018120', adjusted: '0.000000' });
    expect(view.events.map((e) => [e.event_key, e.state, e.reason])).toEqual([
      [completed, 'applied', null],
      [failed, 'no_effect', 'job_already_captured'],
    ]);
    expect(view.settlements.map((s) => s.charge_type)).toEqual(['capture']);
    expect(view.alerts).toEqual([]);
    expect(await walletOf(world)).toMatchObject({ balance: '9.998120', reserved: '0.000000' });
  });

  it('a completion after a failure is not billed and raises late_success_after_release', async () => {
    const world = await newWorld();
    const job = await submitJob(world);
    const failed = eventId();
    const completed = eventId();
    await send(server.url, world, providerEvent(world, job.id, 'job.failed'), failed);
    await send(server.url, world, providerEvent(world, job.id, 'job.completed', { usage: USAGE }), completed);
    const view = await settledJob(world, job.id, 'released', { events: 2 });

    expect(view).toMatchObject({ reserved: '0.020000', captured: '0.000000', released: '0.020000', adjusted: '0.000000' });
    expect(view.events.map((e) => [e.event_key, e.state, e.reason])).toEqual([
      [failed, 'applied', 'job_failed'],
      [completed, 'no_effect', 'job_already_released'],
    ]);
    expect(view.settlements.map((s) => [s.charge_type, s.amount])).toEqual([['release', '0.020000']]);
    expect(view.alerts).toEqual(['late_success_after_release']);
    // the job view names what went unbilled: the usage reported late and what a capture would have charged
    expect(view.alert_details).toEqual([
      {
        class: 'late_success_after_release',
        source: `${world.provider}/${completed}`,
        detail: expect.objectContaining({ usage: USAGE, price: '0.001880', would_have_billed: '0.001880', billed: '0.000000', provider: world.provider, event_key: completed }),
        created_at: expect.any(String),
      },
    ]);
    expect(await walletOf(world)).toMatchObject({ balance: '10.000000', reserved: '0.000000', available: '10.000000' });
  });
});

describe('usage corrections', () => {
  it('corrections delivered several times each, N=2 before N=1: the net charge is billable(correction 2)', async () => {
    const world = await newWorld();
    const job = await submitJob(world);
    const completed = eventId();
    const second = eventId();
    const secondAgain = eventId(); // the provider re-emits correction 2 under a new event id
    const first = eventId();
    const firstAgain = eventId();
    const correction2 = providerEvent(world, job.id, 'job.usage_corrected', { usage: { input_tokens: 2000, output_tokens: 500 }, correction: 2 });
    const correction1 = providerEvent(world, job.id, 'job.usage_corrected', { usage: { input_tokens: 1500, output_tokens: 400 }, correction: 1 });

    await send(server.url, world, providerEvent(world, job.id, 'job.completed', { usage: USAGE }), completed);
    await send(server.url, world, correction2, second);
    await send(server.url, world, correction2, second, 'already_accepted');
    await send(server.url, world, correction2, secondAgain);
    await send(server.url, world, correction1, first);
    await send(server.url, world, correction1, first, 'already_accepted');
    await send(server.url, world, correction1, firstAgain);
    await send(server.url, world, correction2, second, 'already_accepted');
    const view = await settledJob(world, job.id, 'captured', { events: 5 });

    // billable(correction 2) = 2000 × 1.00/1M + 500 × 2.00/1M = 0.003000 = 0.001880 + 0.001120
    expect(view).toMatchObject({ captured: '0.001880', released: '0.018120', adjusted: '0.001120' });
    expect(view.settlements.map((s) => [s.charge_type, s.version, s.amount])).toEqual([
      ['capture', 1, '0.001880'],
      ['adjustment', 2, '0.001120'],
    ]);
    expect(view.settlements[1]!.key).toBe(`${world.tenantId}:${job.id}:adjustment:2`);
    expect(view.events.map((e) => [e.event_key, e.state, e.reason])).toEqual([
      [completed, 'applied', null],
      [second, 'applied', null],
      [secondAgain, 'stale', 'correction_not_newer'],
      [first, 'stale', 'correction_not_newer'],
      [firstAgain, 'stale', 'correction_not_newer'],
    ]);
    expect(await walletOf(world)).toMatchObject({ balance: '9.997000', reserved: '0.000000' });
    expect(await entriesOf(world, job.id)).toEqual([
      ['reserve', '-0.020000'],
      ['capture', '-0.001880'],
      ['release_remainder', '0.018120'],
      ['adjustment', '-0.001120'],
    ]);
  });

  it('a correction before any completion is the completion', async () => {
    const world = await newWorld();
    const job = await submitJob(world);
    const corrected = eventId();
    const completed = eventId();
    await send(server.url, world, providerEvent(world, job.id, 'job.usage_corrected', { usage: { input_tokens: 1500, output_tokens: 400 }, correction: 1 }), corrected);
    await send(server.url, world, providerEvent(world, job.id, 'job.completed', { usage: USAGE }), completed);
    const view = await settledJob(world, job.id, 'captured', { events: 2 });

    // 1500 × 1.00/1M + 400 × 2.00/1M = 0.002300, captured (not adjusted) from the correction's usage
    expect(view).toMatchObject({ captured: '0.002300', released: '0.017700', adjusted: '0.000000' });
    expect(view.settlements.map((s) => [s.charge_type, s.version, s.amount])).toEqual([['capture', 1, '0.002300']]);
    expect(view.settlements[0]!.pricing.usage).toEqual({ input_tokens: 1500, output_tokens: 400 });
    expect(view.events.map((e) => [e.event_key, e.state, e.reason])).toEqual([
      [corrected, 'applied', null],
      [completed, 'no_effect', 'job_already_captured'],
    ]);
    expect(await walletOf(world)).toMatchObject({ balance: '9.997700', reserved: '0.000000' });

    // Correction 1 is recorded as applied: a repeat of N=1 is stale, N=2 adjusts.
    const again = eventId();
    const next = eventId();
    await send(server.url, world, providerEvent(world, job.id, 'job.usage_corrected', { usage: { input_tokens: 1, output_tokens: 1 }, correction: 1 }), again);
    await send(server.url, world, providerEvent(world, job.id, 'job.usage_corrected', { usage: { input_tokens: 2000, output_tokens: 500 }, correction: 2 }), next);
    const corrected2 = await settledJob(world, job.id, 'captured', { events: 4 });
    expect(corrected2.events.slice(2).map((e) => [e.event_key, e.state, e.reason])).toEqual([
      [again, 'stale', 'correction_not_newer'],
      [next, 'applied', null],
    ]);
    expect(corrected2).toMatchObject({ captured: '0.002300', adjusted: '0.000700' });
    expect(await walletOf(world)).toMatchObject({ balance: '9.997000' });
  });

  it('a correction that lowers usage refunds: a negative adjustment, a positive wallet entry', async () => {
    const world = await newWorld();
    const job = await submitJob(world);
    const completed = eventId();
    const corrected = eventId();
    await send(server.url, world, providerEvent(world, job.id, 'job.completed', { usage: USAGE }), completed);
    await send(server.url, world, providerEvent(world, job.id, 'job.usage_corrected', { usage: { input_tokens: 600, output_tokens: 100 }, correction: 1 }), corrected);
    const view = await settledJob(world, job.id, 'captured', { events: 2 });

    // billable(corrected) = 0.000600 + 0.000200 = 0.000800; refund 0.001880 − 0.000800 = 0.001080
    expect(view).toMatchObject({ captured: '0.001880', released: '0.018120', adjusted: '-0.001080' });
    expect(view.settlements.map((s) => [s.charge_type, s.version, s.amount])).toEqual([
      ['capture', 1, '0.001880'],
      ['adjustment', 1, '-0.001080'],
    ]);
    expect(view.events.map((e) => [e.event_key, e.state])).toEqual([
      [completed, 'applied'],
      [corrected, 'applied'],
    ]);
    expect(await entriesOf(world, job.id)).toEqual([
      ['reserve', '-0.020000'],
      ['capture', '-0.001880'],
      ['release_remainder', '0.018120'],
      ['adjustment', '0.001080'],
    ]);
    expect(await walletOf(world)).toMatchObject({ balance: '9.999200', reserved: '0.000000', available: '9.999200' });
  });
});

describe('terminal events and what they charge', () => {
  it('a provider cancel with usage captures it; without usage it releases', async () => {
    const world = await newWorld();
    const withUsage = await submitJob(world);
    const withoutUsage = await submitJob(world);
    const a = eventId();
    const b = eventId();
    await send(server.url, world, providerEvent(world, withUsage.id, 'job.canceled', { usage: USAGE }), a);
    await send(server.url, world, providerEvent(world, withoutUsage.id, 'job.canceled'), b);

    const captured = await settledJob(world, withUsage.id, 'captured', { events: 1 });
    expect(captured).toMatchObject({ captured: '0.001880', released: '0.018120' });
    expect(captured.settlements.map((s) => [s.charge_type, s.amount])).toEqual([['capture', '0.001880']]);
    expect(captured.events.map((e) => [e.event_key, e.state, e.reason])).toEqual([[a, 'applied', null]]);

    const released = await settledJob(world, withoutUsage.id, 'released', { events: 1 });
    expect(released).toMatchObject({ captured: '0.000000', released: '0.020000' });
    expect(released.settlements.map((s) => [s.charge_type, s.amount])).toEqual([['release', '0.020000']]);
    expect(released.events.map((e) => [e.event_key, e.state, e.reason])).toEqual([[b, 'applied', 'job_canceled']]);

    expect(await walletOf(world)).toMatchObject({ balance: '9.998120', reserved: '0.000000', available: '9.998120' });
  });

  it('usage above the reservation captures the reservation and raises usage_exceeds_reservation', async () => {
    const world = await newWorld();
    const job = await submitJob(world);
    const completed = eventId();
    // 20,000 × 1.00/1M + 10,000 × 2.00/1M = 0.040000 > 0.020000 reserved
    await send(server.url, world, providerEvent(world, job.id, 'job.completed', { usage: { input_tokens: 20_000, output_tokens: 10_000 } }), completed);
    const view = await settledJob(world, job.id, 'captured', { events: 1 });

    expect(view).toMatchObject({ reserved: '0.020000', captured: '0.020000', released: '0.000000' });
    expect(view.settlements.map((s) => [s.charge_type, s.amount])).toEqual([['capture', '0.020000']]);
    expect(view.settlements[0]!.pricing).toMatchObject({ price: '0.040000', billable: '0.020000' });
    expect(view.alerts).toEqual(['usage_exceeds_reservation']);
    expect(await walletOf(world)).toMatchObject({ balance: '9.980000', reserved: '0.000000' });
  });

  it('a price published between submission and completion does not change the charge', async () => {
    const world = await newWorld();
    const job = await submitJob(world);
    expect(job.price_version).toBe(1);
    const newer = await admin.request('PUT', `/v1/prices/${encodeURIComponent(world.model)}`, {
      currency: 'USD',
      unit_prices: { input_tokens: '10.00', output_tokens: '20.00' },
    });
    expect(newer.status).toBe(201);
    expect(newer.body.version).toBe(2);

    await send(server.url, world, providerEvent(world, job.id, 'job.completed', { usage: USAGE }), eventId());
    const view = await settledJob(world, job.id, 'captured', { events: 1 });
    expect(view).toMatchObject({ price_version: 1, captured: '0.001880', released: '0.018120' });
    expect(view.settlements[0]!.pricing).toMatchObject({
      priceVersion: 1,
      unitPrices: { input_tokens: '1.000000', output_tokens: '2.000000' },
      billable: '0.001880',
    });
    expect(await walletOf(world)).toMatchObject({ balance: '9.998120', reserved: '0.000000' });

    // A job submitted now pins the new version.
    const later = await submitJob(world);
    expect(later).toMatchObject({ price_version: 2, reserved: '0.200000' });
  });

  it('job.failed with usage: released by default, captured under failed_with_usage "capture"', async () => {
    const released = await newWorld();
    const captured = await newWorld({ policies: { failed_with_usage: 'capture' } });
    const releasedJob = await submitJob(released);
    const capturedJob = await submitJob(captured);
    const noUsageJob = await submitJob(captured);
    const a = eventId();
    const b = eventId();
    const c = eventId();
    await send(server.url, released, providerEvent(released, releasedJob.id, 'job.failed', { usage: USAGE }), a);
    await send(server.url, captured, providerEvent(captured, capturedJob.id, 'job.failed', { usage: USAGE }), b);
    await send(server.url, captured, providerEvent(captured, noUsageJob.id, 'job.failed'), c);

    const r = await settledJob(released, releasedJob.id, 'released', { events: 1 });
    expect(r).toMatchObject({ captured: '0.000000', released: '0.020000' });
    expect(r.settlements.map((s) => [s.charge_type, s.amount])).toEqual([['release', '0.020000']]);
    expect(r.events.map((e) => [e.state, e.reason])).toEqual([['applied', 'job_failed']]);
    expect(await walletOf(released)).toMatchObject({ balance: '10.000000', reserved: '0.000000' });

    const cap = await settledJob(captured, capturedJob.id, 'captured', { events: 1 });
    expect(cap).toMatchObject({ captured: '0.001880', released: '0.018120' });
    expect(cap.settlements.map((s) => [s.charge_type, s.amount])).toEqual([['capture', '0.001880']]);
    expect(cap.events.map((e) => e.state)).toEqual(['applied']);

    // The capture policy still releases a failure that reports no usage.
    const none = await settledJob(captured, noUsageJob.id, 'released', { events: 1 });
    expect(none.settlements.map((s) => [s.charge_type, s.amount])).toEqual([['release', '0.020000']]);
    expect(await walletOf(captured)).toMatchObject({ balance: '9.998120', reserved: '0.000000' });
  });
});
