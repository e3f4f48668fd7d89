import { randomUUID } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import { Client, deliver, signDelivery, type Answer } from '../support/client.js';
import { freshDatabase } from '../support/database.js';
import { runTally, startServer, waitUntil, type TallyProcess } from '../support/server.js';
import { completion, createWorld, type World } from '../support/world.js';

/**
 * Hold extensions under concurrency and crashes (CONTRACT.md "Long-running jobs: hold
 * extensions", "Billing rules"), against a real `tally serve --workers 0` and standalone
 * `tally worker` processes, through the API and signed webhooks only. Every expected
 * amount is this file's own arithmetic from the contract, never the product's code.
 * Prices: 1.000000 per unit of gpu_seconds, so amounts read as units.
 */

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 0, env: { TALLY_OUTBOUND_ALLOW: '127.0.0.1' } });
const admin = new Client(server.url);
const PRICES = { gpu_seconds: '1000000.00', input_tokens: '0.10' };
const MICROS = 1_000_000n;
/** Alert classes the jobs of this file raise on purpose; reconciliation must find nothing else. */
const EXPECTED_ALERTS = ['usage_exceeds_reservation', 'wallet_overdrawn'];

// ---------------------------------------------------------------------------------------
// harness (as in hold-extensions.test.ts)

async function world(credit: string): Promise<World> {
  const w = await createWorld(admin, { credit, prices: PRICES });
  // the outbox keeps a tenant's messages only while an endpoint listens (nothing is sent: port 9 discards)
  expect((await w.tenant.post('/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks', events: ['*'] })).status).toBe(201);
  return w;
}

async function submit(w: World, limits: Record<string, number>, autoExtend?: unknown): Promise<string> {
  const answer = await w.tenant.post(
    '/v1/jobs',
    { wallet_id: w.walletId, model: w.model, provider: w.provider, limits, ...(autoExtend ? { auto_extend: autoExtend } : {}) },
    { 'idempotency-key': randomUUID() },
  );
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.id as string;
}

function extend(w: World, jobId: string, add: unknown, key = randomUUID()): Promise<Answer> {
  return w.tenant.post(`/v1/jobs/${jobId}/extensions`, { add }, { 'idempotency-key': key });
}

function progress(w: World, jobId: string, usage: Record<string, number>) {
  return completion(w, jobId, usage, 'job.progress');
}

async function job(w: World, id: string) {
  const view = await w.tenant.get(`/v1/jobs/${id}`);
  expect(view.status, JSON.stringify(view.body)).toBe(200);
  return view.body;
}

async function wallet(w: World) {
  const view = await w.tenant.get(`/v1/wallets/${w.walletId}`);
  expect(view.status).toBe(200);
  return view.body;
}

async function messages(w: World, type: string): Promise<Record<string, unknown>[]> {
  const rows = await db.pool.query<{ payload: { data: Record<string, unknown> } }>(
    'select payload from outbound_messages where tenant_id = $1 and type = $2 order by created_at, id',
    [w.tenantId, type],
  );
  return rows.rows.map((r) => r.payload.data);
}

/** A standalone `tally worker`, stopped after the test whatever happens. */
function startWorker(env: Record<string, string | undefined> = {}, concurrency = 2): TallyProcess {
  const worker = runTally(['worker', '--concurrency', String(concurrency)], {
    DATABASE_URL: db.url,
    TALLY_FAILPOINTS: undefined,
    TALLY_POLL_INTERVAL_MS: '20',
    ...env,
  });
  onTestFinished(async () => {
    if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
    await worker.exited;
  });
  return worker;
}

/** Waits until every job is terminal and none of its accepted events is left to settle. */
async function settled(jobIds: string[], timeoutMs = 30_000): Promise<void> {
  await waitUntil(async () => {
    const open = await db.pool.query<{ n: number }>(
      `select count(*)::int as n from webhook_events where job_id = any($1::uuid[]) and state in ('pending', 'processing')`,
      [jobIds],
    );
    const ended = await db.pool.query<{ n: number }>(
      `select count(*)::int as n from jobs where id = any($1::uuid[]) and state in ('captured', 'released')`,
      [jobIds],
    );
    return open.rows[0]!.n === 0 && ended.rows[0]!.n === jobIds.length;
  }, timeoutMs);
}

/** Micros as the wire writes them ("12.500000", "-3.000000"). */
function money(micros: bigint): string {
  const sign = micros < 0n ? '-' : '';
  const abs = micros < 0n ? -micros : micros;
  return `${sign}${abs / MICROS}.${(abs % MICROS).toString().padStart(6, '0')}`;
}

/** The price of gpu_seconds units at 1,000,000.00 per 1,000,000 units: one unit is 1.000000. */
const price = (units: number): bigint => BigInt(units) * MICROS;
const micros = (amount: string): bigint => {
  const negative = amount.startsWith('-');
  const [whole, fraction = ''] = amount.replace('-', '').split('.');
  const value = BigInt(whole!) * MICROS + BigInt(fraction.padEnd(6, '0'));
  return negative ? -value : value;
};

/** mulberry32: a small deterministic PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The reconciliation run's exceptions other than the alert classes these tests raise on purpose. */
async function unexpectedExceptions(): Promise<unknown[]> {
  const run = await admin.post('/v1/reconciliation/runs', {});
  expect(run.status, JSON.stringify(run.body)).toBe(201);
  return (run.body.exceptions as { class: string }[]).filter((e) => !EXPECTED_ALERTS.includes(e.class));
}

// ---------------------------------------------------------------------------------------
// The contract's automatic extension, as this file reads it (one dimension: gpu_seconds).

interface Rule {
  step: number;
  max: number;
}

/** limits[d] < target → max(limits, min(max_limits, the smallest limits + k × step ≥ target)), k ≥ 1. */
function grow(limits: number, target: number, rule: Rule): number {
  if (limits >= target) return limits;
  const k = Math.ceil((target - limits) / rule.step);
  return Math.max(limits, Math.min(rule.max, limits + k * rule.step));
}

interface Model {
  limits: number;
  reserved: bigint;
  soFar: number;
  extensions: { version: number; amount: bigint; limits: number }[];
  /** the `reserved` of every check that found the hold short, in order */
  exhaustedAt: bigint[];
  captured: bigint;
  released: bigint;
}

/** Replays progress reports in their accepted order, then the completion. */
function replay(limits: number, rule: Rule, reports: number[], completed: number): Model {
  const m: Model = { limits, reserved: price(limits), soFar: 0, extensions: [], exhaustedAt: [], captured: 0n, released: 0n };
  const extendTo = (to: number) => {
    if (to <= m.limits) return;
    const amount = price(to) - price(m.limits);
    m.extensions.push({ version: m.extensions.length + 1, amount, limits: to });
    m.limits = to;
    m.reserved += amount;
  };
  for (const usage of reports) {
    m.soFar = Math.max(m.soFar, usage);
    const target = m.soFar + rule.step; // running: one step of headroom
    extendTo(grow(m.limits, target, rule));
    if (m.limits < target) m.exhaustedAt.push(m.reserved);
  }
  // the completion's target is its own usage; the capture bills up to the (grown) hold
  extendTo(grow(m.limits, completed, rule));
  m.captured = price(completed) < m.reserved ? price(completed) : m.reserved;
  m.released = m.reserved - m.captured;
  return m;
}

// ---------------------------------------------------------------------------------------

describe('automatic extensions from duplicated, reordered progress reports', () => {
  it('bills exactly what replaying the accepted order says: extensions 1..N, their amounts, exhaustion at the cap announced once per reserved', async () => {
    const CREDIT = 10_000;
    const rule: Rule = { step: 100, max: 3000 };
    const w = await world(`${CREDIT}.00`);
    const id = await submit(w, { gpu_seconds: 100 }, { step: { gpu_seconds: rule.step }, max_limits: { gpu_seconds: rule.max } });

    // 50 cumulative reports, strictly increasing, ending at 2960 (past 2900: the cap stops a step)
    const random = prng(0x7a11e);
    const weights = Array.from({ length: 50 }, () => 1 + Math.floor(random() * 100));
    const total = weights.reduce((a, b) => a + b, 0);
    const usages: number[] = [];
    let cumulative = 0;
    for (const weight of weights) {
      cumulative += weight;
      usages.push(Math.max((usages.at(-1) ?? 0) + 1, Math.round((cumulative * 2960) / total)));
    }
    expect(usages.at(-1)!).toBeGreaterThan(2900);
    const final = usages.at(-1)! + 25;

    // each report 1–3 deliveries of one signed body under one webhook-id, all shuffled
    const reports = usages.map((gpu) => {
      const eventKey = `msg_${randomUUID()}`;
      return { eventKey, usage: gpu, delivery: signDelivery(progress(w, id, { gpu_seconds: gpu }), { id: eventKey }) };
    });
    const deliveries = shuffle(
      reports.flatMap((r) => Array.from({ length: 1 + Math.floor(random() * 3) }, () => r)),
      random,
    );
    expect(deliveries.length).toBeGreaterThan(reports.length);

    // a worker settles while the deliveries arrive
    const worker = startWorker({}, 2);
    const accepted: typeof reports = [];
    const seen = new Set<string>();
    for (const r of deliveries) {
      const answer = await deliver(server.url, w.provider, r.delivery);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const first = !seen.has(r.eventKey);
      expect(answer.body).toEqual({ status: first ? 'accepted' : 'already_accepted', event_key: r.eventKey });
      if (first) {
        seen.add(r.eventKey);
        accepted.push(r);
      }
    }
    const completionKey = `msg_${randomUUID()}`;
    const done = signDelivery(completion(w, id, { gpu_seconds: final }), { id: completionKey });
    expect((await deliver(server.url, w.provider, done)).body).toEqual({ status: 'accepted', event_key: completionKey });
    expect((await deliver(server.url, w.provider, done)).body).toEqual({ status: 'already_accepted', event_key: completionKey });
    await settled([id]);
    await worker.stop();

    // intake numbered the events in the order they were first delivered
    const numbered = await db.pool.query<{ event_key: string }>('select event_key from webhook_events where job_id = $1 order by seq', [
      id,
    ]);
    expect(numbered.rows.map((r) => r.event_key)).toEqual([...accepted.map((r) => r.eventKey), completionKey]);

    const model = replay(
      100,
      rule,
      accepted.map((r) => r.usage),
      final,
    );
    expect(model.limits).toBe(rule.max); // the design reached the cap
    expect(model.exhaustedAt.length).toBeGreaterThan(0);
    const announcements = model.exhaustedAt.filter((r, i) => model.exhaustedAt.indexOf(r) === i);

    const view = await job(w, id);
    expect(view.events).toHaveLength(51);
    expect(view.events.filter((e: { state: string }) => !['applied', 'no_effect'].includes(e.state))).toEqual([]);
    expect([view.state, view.reserved, view.captured, view.released]).toEqual([
      'captured',
      money(model.reserved),
      money(model.captured),
      money(model.released),
    ]);
    expect(micros(view.captured) + micros(view.released)).toBe(micros(view.reserved));
    expect(view.limits).toEqual({ gpu_seconds: model.limits });
    expect(view.usage_so_far).toEqual({ gpu_seconds: Math.max(...usages) });
    expect(view.hold_exhausted).toBeNull();

    // extensions 1..N without gaps, each the price difference of its limits
    const extensions = view.extensions as {
      version: number;
      amount: string;
      limits: { gpu_seconds: number };
      source: string;
      settlement_key: string;
    }[];
    expect(extensions.map((x) => x.version)).toEqual(model.extensions.map((_, i) => i + 1));
    expect(extensions.map((x) => [x.version, x.amount, x.limits, x.source, x.settlement_key])).toEqual(
      model.extensions.map((x) => [
        x.version,
        money(x.amount),
        { gpu_seconds: x.limits },
        'auto',
        `${w.tenantId}:${id}:extension:${x.version}`,
      ]),
    );
    let before = 100;
    for (const x of extensions) {
      expect(micros(x.amount)).toBe(price(x.limits.gpu_seconds) - price(before));
      before = x.limits.gpu_seconds;
    }
    expect(price(100) + extensions.reduce((sum, x) => sum + micros(x.amount), 0n)).toBe(micros(view.reserved));
    expect((await messages(w, 'job.hold_extended')).map((m) => m.version)).toEqual(model.extensions.map((x) => x.version));

    // job.hold_exhausted once per distinct exhausted `reserved` (none for the completion)
    const exhausted = await messages(w, 'job.hold_exhausted');
    expect(exhausted.map((m) => [m.reason, m.reserved])).toEqual(announcements.map((r) => ['max_limits', money(r)]));

    const after = await wallet(w);
    expect([after.balance, after.reserved, after.available, after.debt]).toEqual([
      money(price(CREDIT) - model.captured),
      '0.000000',
      money(price(CREDIT) - model.captured),
      '0.000000',
    ]);
    console.log(
      `test 1: ${deliveries.length} deliveries of 50 reports; ${model.extensions.length} extensions; reserved ${money(model.reserved)}, captured ${money(model.captured)}; ${announcements.length} exhausted announcement(s)`,
    );
  });
});

describe('concurrent extensions on one job', () => {
  it('20 at once, funds for 12: exactly 12 extensions 1..12, 8 refused with 402, available never below zero', async () => {
    // the first hold (100) and twelve extensions of 10
    const w = await world('220.00');
    const id = await submit(w, { gpu_seconds: 100 });

    // watch the wallet (its view and its accounts row) while the extensions race
    let racing = true;
    const seen: { view: bigint[]; account: bigint[] } = { view: [], account: [] };
    const watcher = (async () => {
      while (racing) {
        const account = await db.pool.query<{ available: string }>(
          'select (credits_posted - debits_posted - debits_pending)::text as available from accounts where id = $1',
          [w.walletId],
        );
        seen.account.push(BigInt(account.rows[0]!.available));
        seen.view.push(micros((await wallet(w)).available));
      }
    })();

    const keys = Array.from({ length: 20 }, () => randomUUID());
    const answers = await Promise.all(keys.map((key) => extend(w, id, { gpu_seconds: 10 }, key)));
    racing = false;
    await watcher;

    const statuses = answers.map((a) => a.status);
    expect(
      answers.filter((a) => a.status !== 201 && a.status !== 402).map((a) => [a.status, a.body]),
      'answers other than 201 and 402',
    ).toEqual([]);
    expect(statuses.filter((s) => s === 201)).toHaveLength(12);
    expect(statuses.filter((s) => s === 402)).toHaveLength(8);
    for (const refused of answers.filter((a) => a.status === 402)) expect(refused.body.error.code).toBe('insufficient_funds');
    // each success answers the job just after its own extension: 110, 120, … 220, each once
    const reservedAfter = answers
      .filter((a) => a.status === 201)
      .map((a) => micros(a.body.reserved))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(reservedAfter).toEqual(Array.from({ length: 12 }, (_, i) => price(110 + 10 * i)));

    const view = await job(w, id);
    expect(view.state).toBe('reserved');
    expect(view.reserved).toBe('220.000000');
    expect(view.limits).toEqual({ gpu_seconds: 220 });
    expect(view.extensions.map((x: { version: number; amount: string; limits: unknown }) => [x.version, x.amount, x.limits])).toEqual(
      Array.from({ length: 12 }, (_, i) => [i + 1, '10.000000', { gpu_seconds: 110 + 10 * i }]),
    );
    // every share is on a grant: nothing held against a debt
    const held = (view.funding as { held: string }[]).reduce((sum, f) => sum + micros(f.held), 0n);
    expect(held).toBe(micros(view.reserved));
    expect(view.funding_debt).toBe('0.000000');

    const after = await wallet(w);
    expect([after.balance, after.reserved, after.available, after.debt]).toEqual(['220.000000', '220.000000', '0.000000', '0.000000']);
    const account = await db.pool.query<{ balance: string; reserved: string }>(
      'select (credits_posted - debits_posted)::text as balance, debits_pending::text as reserved from accounts where id = $1',
      [w.walletId],
    );
    expect(account.rows[0]).toEqual({ balance: String(price(220)), reserved: String(price(220)) });
    expect(seen.account.length).toBeGreaterThan(0);
    expect(seen.account.filter((a) => a < 0n)).toEqual([]);
    expect(seen.view.filter((a) => a < 0n)).toEqual([]);
    expect((await messages(w, 'job.hold_extended')).map((m) => m.version).sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: 12 }, (_, i) => i + 1),
    );

    // a 402 stored nothing under its key: the same key is refused again, not replayed
    const refusedKey = keys[statuses.indexOf(402)]!;
    const again = await extend(w, id, { gpu_seconds: 10 }, refusedKey);
    expect(again.status).toBe(402);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe("a completion's extension the grants cannot hold", () => {
  it('bills up to max_limits, what the grants could not hold becomes debt, and the overrun raises usage_exceeds_reservation', async () => {
    const w = await world('150.00');
    const id = await submit(w, { gpu_seconds: 100 }, { step: { gpu_seconds: 100 }, max_limits: { gpu_seconds: 500 } });
    const worker = startWorker({}, 1);
    const key = `msg_${randomUUID()}`;
    expect((await deliver(server.url, w.provider, signDelivery(completion(w, id, { gpu_seconds: 700 }), { id: key }))).status).toBe(200);
    await settled([id]);
    await worker.stop();

    const view = await job(w, id);
    // 700 is beyond max_limits 500: the hold grows to 500 (extension 1 of 400: 50 on the grant, 350 against the debt)
    expect([view.state, view.reserved, view.captured, view.released]).toEqual(['captured', '500.000000', '500.000000', '0.000000']);
    expect(view.limits).toEqual({ gpu_seconds: 500 });
    expect(view.extensions).toEqual([
      expect.objectContaining({ version: 1, amount: '400.000000', source: 'auto', limits: { gpu_seconds: 500 } }),
    ]);
    expect(view.funding).toEqual([expect.objectContaining({ held: '150.000000', captured: '150.000000', returned: '0.000000' })]);
    expect(view.funding_debt).toBe('350.000000');
    expect(view.alerts).toContain('usage_exceeds_reservation');
    expect(view.alerts).toContain('wallet_overdrawn');
    expect(view.hold_exhausted).toBeNull();

    const after = await wallet(w);
    expect([after.balance, after.reserved, after.available, after.debt]).toEqual(['-350.000000', '0.000000', '-350.000000', '350.000000']);
    // a terminal event's overrun is an alert, not an exhausted hold
    expect(await messages(w, 'job.hold_exhausted')).toEqual([]);
    expect((await messages(w, 'job.hold_extended')).map((m) => [m.version, m.amount, m.reserved])).toEqual([
      [1, '400.000000', '500.000000'],
    ]);
  });
});

describe('an extension racing the completion', () => {
  it('100 times: either the extension commits first and the capture bills from it, or it answers 409 job_terminal and the first hold is billed', async () => {
    const CREDIT = 20_000;
    const w = await world(`${CREDIT}.00`);
    const worker = startWorker({}, 4);
    const USAGE = 130; // above the first hold (100), within the extended one (150)
    type Run = { id: string; variant: 'together' | 'after_accept'; extension: Answer };
    const runs: Run[] = [];

    for (let wave = 0; wave < 4; wave++) {
      const ids = await Promise.all(Array.from({ length: 25 }, () => submit(w, { gpu_seconds: 100 })));
      const waveRuns = await Promise.all(
        ids.map(async (id, i): Promise<Run> => {
          const completed = () =>
            deliver(server.url, w.provider, signDelivery(completion(w, id, { gpu_seconds: USAGE }))).then((answer) => {
              expect(answer.status, JSON.stringify(answer.body)).toBe(200);
              expect(answer.body.status).toBe('accepted');
            });
          // both at once; or the extension as soon as intake accepted the completion, racing the worker's settle
          if (i % 2 === 0) {
            const [extension] = await Promise.all([extend(w, id, { gpu_seconds: 50 }), completed()]);
            return { id, variant: 'together', extension };
          }
          await completed();
          return { id, variant: 'after_accept', extension: await extend(w, id, { gpu_seconds: 50 }) };
        }),
      );
      runs.push(...waveRuns);
    }
    await settled(runs.map((r) => r.id));
    await worker.stop();

    let capturedTotal = 0n;
    const split = { extended: { together: 0, after_accept: 0 }, terminal: { together: 0, after_accept: 0 } };
    for (const run of runs) {
      const view = await job(w, run.id);
      const where = `job ${run.id}: extension ${run.extension.status} ${JSON.stringify(run.extension.body?.error ?? '')}, job ${JSON.stringify({ reserved: view.reserved, captured: view.captured, released: view.released, extensions: view.extensions })}`;
      expect([201, 409], where).toContain(run.extension.status);
      expect(view.state, where).toBe('captured');
      expect(
        view.settlements.map((s: { charge_type: string }) => s.charge_type),
        where,
      ).toEqual(['capture']);
      expect(micros(view.captured) + micros(view.released), where).toBe(micros(view.reserved));
      if (run.extension.status === 201) {
        split.extended[run.variant]++;
        expect(run.extension.body.reserved, where).toBe('150.000000');
        expect(
          view.extensions.map((x: { version: number; amount: string }) => [x.version, x.amount]),
          where,
        ).toEqual([[1, '50.000000']]);
        // min(price(130), 100 + 50)
        expect([view.reserved, view.captured, view.released], where).toEqual(['150.000000', '130.000000', '20.000000']);
        expect(view.alerts, where).not.toContain('usage_exceeds_reservation');
      } else {
        split.terminal[run.variant]++;
        expect(run.extension.body.error.code, where).toBe('job_terminal');
        expect(view.extensions, where).toEqual([]);
        // min(price(130), 100)
        expect([view.reserved, view.captured, view.released], where).toEqual(['100.000000', '100.000000', '0.000000']);
        expect(view.alerts, where).toContain('usage_exceeds_reservation');
      }
      capturedTotal += micros(view.captured);
    }
    const extended = split.extended.together + split.extended.after_accept;
    console.log(
      `test 4: extension first (201) ${extended} [together ${split.extended.together}, after accept ${split.extended.after_accept}]; ` +
        `completion first (409) ${100 - extended} [together ${split.terminal.together}, after accept ${split.terminal.after_accept}]`,
    );
    expect((await messages(w, 'job.hold_extended')).length).toBe(extended);
    const after = await wallet(w);
    expect([after.balance, after.reserved]).toEqual([money(price(CREDIT) - capturedTotal), '0.000000']);
  });
});

describe('SIGKILL between an automatic extension and its capture', () => {
  it('commits nothing of the extension; the next worker holds it once and captures once', async () => {
    const w = await world('1000.00');
    const id = await submit(w, { gpu_seconds: 100 }, { step: { gpu_seconds: 100 }, max_limits: { gpu_seconds: 1000 } });
    const key = `msg_${randomUUID()}`;
    // 250 needs the limits at 300: an automatic extension of 200 before the capture
    expect((await deliver(server.url, w.provider, signDelivery(completion(w, id, { gpu_seconds: 250 }), { id: key }))).body).toEqual({
      status: 'accepted',
      event_key: key,
    });

    const doomed = startWorker({ TALLY_FAILPOINTS: 'settle.after_extension' }, 1);
    await waitUntil(() => doomed.child.exitCode !== null || doomed.child.signalCode !== null, 30_000);
    expect(await doomed.exited).toBe('SIGKILL');

    const crashed = await job(w, id);
    expect([crashed.state, crashed.reserved, crashed.captured, crashed.limits, crashed.extensions]).toEqual([
      'reserved',
      '100.000000',
      '0.000000',
      { gpu_seconds: 100 },
      [],
    ]);
    expect([crashed.events.length, crashed.events[0].state]).toEqual([1, 'pending']);
    expect([(await wallet(w)).balance, (await wallet(w)).reserved]).toEqual(['1000.000000', '100.000000']);
    expect((await db.pool.query('select 1 from job_extensions where job_id = $1', [id])).rowCount).toBe(0);
    expect((await db.pool.query('select 1 from settlements where job_id = $1', [id])).rowCount).toBe(0);
    const keys = await db.pool.query<{ settlement_key: string }>('select distinct settlement_key from ledger_entries where job_id = $1', [
      id,
    ]);
    expect(keys.rows.filter((r) => /:extension:|:capture:/.test(r.settlement_key))).toEqual([]);
    expect(await messages(w, 'job.hold_extended')).toEqual([]);

    const worker = startWorker({}, 1);
    await settled([id]);
    await worker.stop();

    const view = await job(w, id);
    expect([view.state, view.reserved, view.captured, view.released, view.limits]).toEqual([
      'captured',
      '300.000000',
      '250.000000',
      '50.000000',
      { gpu_seconds: 300 },
    ]);
    expect(view.extensions).toEqual([
      expect.objectContaining({
        version: 1,
        amount: '200.000000',
        source: 'auto',
        limits: { gpu_seconds: 300 },
        settlement_key: `${w.tenantId}:${id}:extension:1`,
      }),
    ]);
    expect(
      view.settlements.map((s: { charge_type: string; version: number; amount: string }) => [s.charge_type, s.version, s.amount]),
    ).toEqual([['capture', 1, '250.000000']]);
    expect(view.events.map((e: { event_key: string; state: string }) => [e.event_key, e.state])).toEqual([[key, 'applied']]);
    expect(view.funding).toEqual([expect.objectContaining({ held: '300.000000', captured: '250.000000', returned: '50.000000' })]);
    expect(view.funding_debt).toBe('0.000000');
    const after = await wallet(w);
    expect([after.balance, after.reserved, after.available, after.debt]).toEqual(['750.000000', '0.000000', '750.000000', '0.000000']);
    expect((await messages(w, 'job.hold_extended')).map((m) => [m.version, m.amount])).toEqual([[1, '200.000000']]);

    const unexpected = await unexpectedExceptions();
    expect(unexpected, JSON.stringify(unexpected, null, 1)).toEqual([]);
  });
});
