import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { runTally, startServer, waitUntil } from '../support/server.js';
import { Client, deliver, signDelivery, type Answer } from '../support/client.js';
import { mapConcurrent } from '../support/refusal.js';
import { completion, createWorld, submitJob, type World } from '../support/world.js';

/**
 * A wallet in time (CONTRACT extensions, "Wallets in time"): one hot wallet takes
 * reservations, captures, releases, corrections and top-ups at once — from the API and
 * from settlement workers in two processes, many connections each — and afterwards:
 * every entry's running balance is the sum of the entries before it in the wallet's
 * order (recomputed here from the raw ledger rows), ?at= at many instants equals that
 * recomputation, balances read live during the load never changed afterwards, and
 * statements add up and chain.
 */

const db = await freshDatabase({ max: 30 });
const server = await startServer(db.url, { workers: 2 });
const worker = runTally(['worker', '--concurrency', '6'], { DATABASE_URL: db.url });
afterAll(() => worker.stop('SIGKILL'));
const admin = new Client(server.url);

const JOBS = 150;
const CREDITS = 60;

interface Entry {
  id: string;
  entry_type: string;
  amount: string;
  settlement_key: string;
  job_id: string | null;
  reference: string | null;
  created_at: string;
  sequence: number;
  balance_after: string;
  reserved_after: string;
  available_after: string;
}
interface Held {
  balance: bigint;
  reserved: bigint;
}

function micros(decimal: string): bigint {
  const negative = decimal.startsWith('-');
  const [whole, fraction = ''] = decimal.replace('-', '').split('.');
  const value = BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
  return negative ? -value : value;
}
function formatMicros(value: bigint): string {
  const sign = value < 0n ? '-' : '';
  const abs = value < 0n ? -value : value;
  return `${sign}${abs / 1_000_000n}.${(abs % 1_000_000n).toString().padStart(6, '0')}`;
}
/** A canonical instant (…ss.uuuuuuZ) moved by some microseconds. */
function shifted(instant: string, deltaMicros: number): string {
  const ms = Date.parse(`${instant.slice(0, 23)}Z`);
  const total = BigInt(ms) * 1000n + BigInt(instant.slice(23, 26)) + BigInt(deltaMicros);
  const iso = new Date(Number(total / 1000n)).toISOString();
  return `${iso.slice(0, 23)}${(total % 1000n).toString().padStart(3, '0')}Z`;
}
const walletPath = (world: World, rest = '') => `/v1/wallets/${world.walletId}${rest}`;

/** Every entry of the wallet over the API, oldest first, paging back with starting_after. */
async function allEntries(client: Client, world: World): Promise<Entry[]> {
  const newestFirst: Entry[] = [];
  let after: string | null = null;
  for (;;) {
    const page: Answer = await client.get(walletPath(world, `/entries?limit=100${after ? `&starting_after=${after}` : ''}`));
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    newestFirst.push(...page.body.data);
    if (!page.body.has_more) break;
    expect(page.body.next_cursor).toBe(page.body.data.at(-1).id);
    after = page.body.next_cursor;
  }
  return newestFirst.reverse();
}

/**
 * The wallet's holdings after each entry, recomputed from the raw ledger rows (debit,
 * credit, flags, amount) in the wallet's order — not from the API's signed amounts.
 */
async function recomputed(walletId: string): Promise<{ sequence: number; createdAt: string; held: Held }[]> {
  const rows = await db.pool.query<{ wallet_seq: bigint; at: string; flags: string; amount: bigint; debit: string; credit: string }>(
    `select wallet_seq, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at, flags, amount,
            debit_account_id as debit, credit_account_id as credit
     from ledger_entries where $1 in (debit_account_id, credit_account_id) order by wallet_seq`,
    [walletId],
  );
  let held: Held = { balance: 0n, reserved: 0n };
  return rows.rows.map((r) => {
    const posts = r.flags === 'posted' || r.flags === 'post_pending';
    const balance = posts ? (r.credit === walletId ? r.amount : -r.amount) : 0n;
    const reserved = r.debit !== walletId ? 0n : r.flags === 'pending' ? r.amount : r.flags === 'posted' ? 0n : -r.amount;
    held = { balance: held.balance + balance, reserved: held.reserved + reserved };
    return { sequence: Number(r.wallet_seq), createdAt: r.at, held };
  });
}

function heldAt(chain: Awaited<ReturnType<typeof recomputed>>, instant: string): { held: Held; sequence: number } {
  const last = chain.filter((e) => e.createdAt <= instant).at(-1);
  return last ? { held: last.held, sequence: last.sequence } : { held: { balance: 0n, reserved: 0n }, sequence: 0 };
}

const held = (view: { balance: string; reserved: string }): Held => ({ balance: micros(view.balance), reserved: micros(view.reserved) });

describe('a hot wallet in time', () => {
  let world: World;
  let chain: Awaited<ReturnType<typeof recomputed>>;
  let entries: Entry[];
  const liveReads: { at: string; view: { balance: string; reserved: string; available: string; sequence: number } }[] = [];

  it(`${JOBS} jobs (captures, releases, corrections) and ${CREDITS} top-ups at once: every running balance is the prefix sum in the wallet's order`, { timeout: 120_000 }, async () => {
    world = await createWorld(admin, { credit: '500.00', prices: { input_tokens: '1.000001', output_tokens: '2.000003' } });
    let loading = true;
    const reader = (async () => {
      // Balances of an instant just passed, read while writers are in flight: each must
      // still be the answer once everything has committed.
      while (loading) {
        const at = new Date(Date.now() - 1).toISOString();
        const answer = await admin.get(walletPath(world, `?at=${at}`));
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        liveReads.push({ at: answer.body.at, view: answer.body });
      }
    })();
    const jobs = mapConcurrent(
      Array.from({ length: JOBS }, (_, i) => i),
      10,
      async (i) => {
        const job = await submitJob(world, { input_tokens: 20_000, output_tokens: 10_000 });
        const usage = { input_tokens: 1000 + i * 37, output_tokens: 500 + i * 11 };
        const type = i % 5 === 4 ? 'job.failed' : 'job.completed';
        const first = await deliver(server.url, world.provider, signDelivery(completion(world, job.id, type === 'job.failed' ? {} : usage, type)));
        expect(first.status, JSON.stringify(first.body)).toBe(200);
        if (type === 'job.completed' && i % 7 === 3) {
          const corrected = { input_tokens: usage.input_tokens + (i % 2 === 0 ? 400 : -400), output_tokens: usage.output_tokens };
          const again = await deliver(server.url, world.provider, signDelivery(completion(world, job.id, corrected, 'job.usage_corrected', { correction: 1 })));
          expect(again.status, JSON.stringify(again.body)).toBe(200);
        }
        return job.id;
      },
    );
    const credits = mapConcurrent(
      Array.from({ length: CREDITS }, (_, i) => i),
      6,
      async (i) => {
        const answer = await admin.post(walletPath(world, '/credits'), { amount: `0.${String(i + 1).padStart(6, '0')}`, reference: `pay,"${i}"` }, { 'idempotency-key': randomUUID() });
        expect(answer.status, JSON.stringify(answer.body)).toBe(201);
        return answer.body as Entry;
      },
    );
    const [jobIds, creditAnswers] = await Promise.all([jobs, credits]);
    await waitUntil(async () => {
      const open = await db.pool.query<{ n: number }>(
        `select count(*)::int as n from jobs where id = any($1::uuid[]) and state not in ('captured', 'released')
         or exists (select 1 from webhook_events where job_id = any($1::uuid[]) and state in ('pending', 'processing'))`,
        [jobIds],
      );
      return open.rows[0]!.n === 0;
    }, 60_000);
    loading = false;
    await reader;

    entries = await allEntries(world.tenant, world);
    chain = await recomputed(world.walletId);
    const types = new Set(entries.map((e) => e.entry_type));
    expect([...types].sort()).toEqual(['adjustment', 'capture', 'credit', 'release', 'release_remainder', 'reserve']);
    expect(entries.map((e) => e.sequence)).toEqual(chain.map((_, i) => i + 1));
    for (const [i, entry] of entries.entries()) {
      const expected = chain[i]!;
      expect({ seq: entry.sequence, at: entry.created_at, ...held({ balance: entry.balance_after, reserved: entry.reserved_after }) }, entry.id).toEqual({
        seq: expected.sequence,
        at: expected.createdAt,
        ...expected.held,
      });
      expect(micros(entry.available_after)).toBe(expected.held.balance - expected.held.reserved);
      if (i > 0) expect(entry.created_at >= entries[i - 1]!.created_at, `instants rise along the order at ${entry.sequence}`).toBe(true);
    }
    // A credit's answer is its entry, with its place and the holdings after it.
    for (const credit of creditAnswers) expect(entries[credit.sequence - 1]).toEqual(credit);
    const now = (await world.tenant.get(walletPath(world))).body;
    expect(held(now)).toEqual(chain.at(-1)!.held);
    // A job's reservation comes before what settles it.
    for (const jobId of jobIds) {
      const own = entries.filter((e) => e.job_id === jobId);
      expect(own[0]!.entry_type, jobId).toBe('reserve');
    }
    const run = await admin.post('/v1/reconciliation/runs', {});
    expect(run.body.exceptions, JSON.stringify(run.body.exceptions)).toEqual([]);
  });

  it('balances read live during the load are what the ledger says afterwards', () => {
    expect(liveReads.length).toBeGreaterThan(10);
    for (const read of liveReads) {
      const then = heldAt(chain, read.at);
      expect({ ...held(read.view), sequence: read.view.sequence }, read.at).toEqual({ ...then.held, sequence: then.sequence });
    }
  });

  it('?at= at 120 instants equals the recomputation from the entries', async () => {
    const first = entries[0]!.created_at;
    const last = entries.at(-1)!.created_at;
    const instants = new Set<string>([shifted(first, -1), first, last, shifted(last, 1)]);
    const step = Math.max(1, Math.floor(entries.length / 40));
    for (let i = 0; i < entries.length; i += step) {
      instants.add(entries[i]!.created_at);
      instants.add(shifted(entries[i]!.created_at, -1));
    }
    // More instants spread over [first, last] (a golden-ratio walk never leaves it: past the
    // last entry would be refused while its instant is still in the future).
    const spanMicros = (Date.parse(last) - Date.parse(first)) * 1000;
    for (let i = 1; instants.size < 120; i++) instants.add(shifted(first, Math.floor(spanMicros * ((i * 0.6180339887) % 1))));
    await mapConcurrent([...instants], 8, async (at) => {
      const answer = await world.tenant.get(walletPath(world, `?at=${encodeURIComponent(at)}`));
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const then = heldAt(chain, answer.body.at);
      expect(
        { balance: answer.body.balance, reserved: answer.body.reserved, available: answer.body.available, sequence: answer.body.sequence },
        at,
      ).toEqual({
        balance: formatMicros(then.held.balance),
        reserved: formatMicros(then.held.reserved),
        available: formatMicros(then.held.balance - then.held.reserved),
        sequence: then.sequence,
      });
    });
    // Offsets are honoured to the microsecond: the same instant written in another zone.
    const entry = entries[Math.floor(entries.length / 2)]!;
    const utc = Date.parse(entry.created_at);
    const local = new Date(utc + 2 * 3600_000).toISOString().slice(0, 19) + entry.created_at.slice(19, 26) + '+02:00';
    const answer = await world.tenant.get(walletPath(world, `?at=${encodeURIComponent(local)}`));
    expect(answer.body).toMatchObject({ at: entry.created_at, sequence: heldAt(chain, entry.created_at).sequence });
  });

  it('statements add up and chain: the closing of [a, b) is the opening of [b, c); the CSV says the same', async () => {
    const cuts = [shifted(entries[0]!.created_at, -5), ...[0.25, 0.5, 0.8].map((f) => entries[Math.floor(entries.length * f)]!.created_at), shifted(entries.at(-1)!.created_at, 1)];
    let previousClosing: unknown = { balance: '0.000000', reserved: '0.000000', available: '0.000000' };
    const lines: Entry[] = [];
    for (let i = 0; i + 1 < cuts.length; i++) {
      const [from, to] = [cuts[i]!, cuts[i + 1]!];
      const answer = await world.tenant.get(walletPath(world, `/statement?from=${from}&to=${to}`));
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const statement = answer.body;
      expect(statement.opening).toEqual(previousClosing);
      expect(statement.lines).toEqual(entries.filter((e) => e.created_at >= from && e.created_at < to));
      const change = statement.totals.reduce(
        (sum: Held, t: { balance_change: string; reserved_change: string }) => ({ balance: sum.balance + micros(t.balance_change), reserved: sum.reserved + micros(t.reserved_change) }),
        { balance: 0n, reserved: 0n },
      );
      expect(held(statement.closing)).toEqual({ balance: micros(statement.opening.balance) + change.balance, reserved: micros(statement.opening.reserved) + change.reserved });
      const last = statement.lines.at(-1) ?? null;
      if (last) expect(held(statement.closing)).toEqual(held({ balance: last.balance_after, reserved: last.reserved_after }));
      for (const t of statement.totals) {
        const own = statement.lines.filter((l: Entry) => l.entry_type === t.entry_type);
        expect({ count: t.count, amount: t.amount }).toEqual({ count: own.length, amount: formatMicros(own.reduce((s: bigint, l: Entry) => s + micros(l.amount), 0n)) });
      }
      lines.push(...statement.lines);
      previousClosing = statement.closing;

      const csv = await world.tenant.request('GET', walletPath(world, `/statement?from=${from}&to=${to}`), undefined, { accept: 'text/csv' });
      expect(csv.status).toBe(200);
      expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
      const rows = parse(csv.body as string, { columns: true }) as Record<string, string>[];
      expect(rows.map((r) => r.row)).toEqual(['opening', ...statement.lines.map(() => 'entry'), 'closing', ...statement.totals.map(() => 'total')]);
      expect(rows[0]).toMatchObject({ created_at: from, balance_after: statement.opening.balance, reserved_after: statement.opening.reserved });
      const csvLines = rows.filter((r) => r.row === 'entry');
      expect(csvLines.map((r) => [r.entry_id, r.created_at, r.entry_type, r.job_id, r.settlement_key, r.reference, r.amount, r.balance_after, r.sequence])).toEqual(
        statement.lines.map((l: Entry) => [l.id, l.created_at, l.entry_type, l.job_id ?? '', l.settlement_key, l.reference ?? '', l.amount, l.balance_after, String(l.sequence)]),
      );
      expect(rows.find((r) => r.row === 'closing')).toMatchObject({ created_at: to, balance_after: statement.closing.balance, available_after: statement.closing.available });
    }
    expect(lines).toEqual(entries);
    expect(held(previousClosing as { balance: string; reserved: string })).toEqual(chain.at(-1)!.held);
  });

  it('tally statement prints the same statement, as JSON or with --csv; a refusal exits 1 with its code', async () => {
    const [from, to] = [entries[0]!.created_at, entries.at(-1)!.created_at];
    const cli = async (...args: string[]) => {
      const run = runTally(['statement', world.walletId, '--from', from, '--to', to, '--url', server.url, ...args], { TALLY_API_KEY: world.apiKey, TALLY_ADMIN_TOKEN: '' });
      return { exit: await run.exited, output: run.output() };
    };
    const json = await cli();
    expect(json.exit, json.output).toBe(0);
    expect(JSON.parse(json.output)).toEqual((await world.tenant.get(walletPath(world, `/statement?from=${from}&to=${to}`))).body);
    const csv = await cli('--csv');
    expect(csv.exit, csv.output).toBe(0);
    expect(csv.output).toBe((await world.tenant.request('GET', walletPath(world, `/statement?from=${from}&to=${to}`), undefined, { accept: 'text/csv' })).body);
    const closing = await cli('--field', 'closing.balance');
    expect(closing.output.trim()).toMatch(/^-?\d+\.\d{6}$/);
    const refused = runTally(['statement', world.walletId, '--from', to, '--to', from, '--url', server.url], { TALLY_API_KEY: world.apiKey, TALLY_ADMIN_TOKEN: '' });
    expect(await refused.exited).toBe(1);
    expect(refused.output()).toContain('400 invalid_request: to must be after from (param: to)');
  });

  it('entries filters are honoured (entry_type, job_id, created range) and ending_before pages forward', async () => {
    const list = async (query: string) => {
      const answer = await world.tenant.get(walletPath(world, `/entries?${query.includes('limit=') ? '' : 'limit=100&'}${query}`));
      expect(answer.status, `${query}: ${JSON.stringify(answer.body)}`).toBe(200);
      return answer.body;
    };
    const newestFirst = [...entries].reverse();
    expect((await list('entry_type=credit')).data).toEqual(newestFirst.filter((e) => e.entry_type === 'credit').slice(0, 100));
    const jobId = entries.find((e) => e.entry_type === 'adjustment')!.job_id!;
    expect((await list(`job_id=${jobId}`)).data).toEqual(newestFirst.filter((e) => e.job_id === jobId));
    const [gte, lt] = [entries[10]!.created_at, entries[40]!.created_at];
    expect((await list(`created_gte=${gte}&created_lt=${lt}`)).data).toEqual(newestFirst.filter((e) => e.created_at >= gte && e.created_at < lt));
    const before = await list(`ending_before=${entries[5]!.id}&limit=3`);
    expect(before.data.map((e: Entry) => e.sequence)).toEqual([9, 8, 7]);
    expect(before).toMatchObject({ has_more: true, next_cursor: before.data.at(-1).id });
    expect((await list(`cursor=${entries[3]!.id}`)).data.map((e: Entry) => e.sequence)).toEqual([3, 2, 1]);

    for (const [query, param] of [
      ['entry_type=payout', 'entry_type'],
      ['job_id=nope', 'job_id'],
      ['created_gte=yesterday', 'created_gte'],
      ['created_lt=2026-02-31T00:00:00Z', 'created_lt'],
      [`starting_after=${randomUUID()}`, 'starting_after'],
      [`cursor=${entries[3]!.id}&starting_after=${entries[4]!.id}`, 'cursor'],
      ['sort=asc', 'sort'],
    ] as const) {
      const refused = await world.tenant.get(walletPath(world, `/entries?${query}`));
      expect(refused.status, query).toBe(400);
      expect(refused.body.error.param, query).toBe(param);
    }
    for (const [query, param] of [
      ['at=soon', 'at'],
      [`at=${new Date(Date.now() + 3600_000).toISOString()}`, 'at'],
    ] as const) {
      const refused = await world.tenant.get(walletPath(world, `?${query}`));
      expect(refused.status, query).toBe(400);
      expect(refused.body.error.param, query).toBe(param);
    }
    const statement = (query: string) => world.tenant.get(walletPath(world, `/statement?${query}`));
    expect((await statement(`from=${lt}&to=${gte}`)).body.error).toMatchObject({ code: 'invalid_request', param: 'to' });
    expect((await statement(`from=${gte}`)).status).toBe(400);
    expect((await world.tenant.request('GET', walletPath(world, `/statement?from=${gte}&to=${lt}`), undefined, { accept: 'image/png' })).status).toBe(406);
  });

  it("a tenant sees its own wallets; the admin any tenant's (tenant_id filter), and reads any wallet", async () => {
    const other = await createWorld(admin, { credit: '1.00' });
    expect((await other.tenant.get(walletPath(world))).status).toBe(404);
    expect((await other.tenant.get(walletPath(world, '/statement?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z'))).status).toBe(404);
    const own = await other.tenant.get('/v1/wallets');
    expect(own.body).toEqual({ data: [expect.objectContaining({ id: other.walletId, tenant_id: other.tenantId })], has_more: false });
    expect((await other.tenant.get(`/v1/wallets?tenant_id=${world.tenantId}`)).status).toBe(403);
    const byTenant = await admin.get(`/v1/wallets?tenant_id=${world.tenantId}`);
    expect(byTenant.body.data.map((w: { id: string }) => w.id)).toEqual([world.walletId]);
    const all = await admin.get('/v1/wallets?limit=1');
    expect(all.body).toMatchObject({ data: [{ id: other.walletId }], has_more: true });
    const next = await admin.get(`/v1/wallets?limit=1&starting_after=${other.walletId}`);
    expect(next.body.data[0].id).toBe(world.walletId);
    expect((await admin.get(walletPath(world, '/entries?limit=1'))).body.data[0]).toEqual(entries.at(-1));
    expect((await admin.get(`/v1/wallets?currency=EUR`)).body).toEqual({ data: [], has_more: false });
  });
});
