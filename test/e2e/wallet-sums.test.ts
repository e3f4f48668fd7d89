import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/transaction.js';
import { postRefundToPayer, reverseRefund } from '../../src/funds/payments/payment-writes.js';
import { POSTING_TYPES } from '../../src/funds/posting/index.js';
import { Client, deliver, signDelivery, type Answer } from '../support/client.js';
import { freshDatabase } from '../support/database.js';
import { startServer, waitUntil } from '../support/server.js';
import { completion, createWorld, submitJob, type World } from '../support/world.js';

/**
 * The sums docs/CONTRACT.md promises ("Wallets in time"), on one wallet that has seen
 * every kind of entry: a credit and grants (paid and promotional), jobs reserved,
 * captured, released and corrected both ways (a correction above the hold, billed up to
 * it, into debt), a grant expiring (its instant a couple of seconds ahead: the test waits
 * for its expiry to post), a void, money paid back to the payer and returned (refund,
 * refund_reversal, dispute_loss: the ledger's own functions, as the Stripe worker calls
 * them, without Stripe), debt and its repayments. Then, over the HTTP API only: the
 * entries list, statements of consecutive ranges and of everything, as JSON and CSV —
 * Σ balance_change = Δ balance, Σ available_change = Δ (balance − reserved), and over
 * every entry the wallet view's balance and balance − reserved.
 */

const db = await freshDatabase();
const server = await startServer(db.url, { workers: 1, env: { TALLY_POLL_INTERVAL_MS: '50' } });
const admin = new Client(server.url);

const key = () => ({ 'idempotency-key': randomUUID() });

function micros(decimal: string): bigint {
  const negative = decimal.startsWith('-');
  const [whole, fraction = ''] = decimal.replace('-', '').split('.');
  const value = BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
  return negative ? -value : value;
}

/** A canonical instant (…ss.uuuuuuZ) one microsecond later: a range's end that includes that entry. */
function justAfter(instant: string): string {
  const total = BigInt(Date.parse(`${instant.slice(0, 23)}Z`)) * 1000n + BigInt(instant.slice(23, 26)) + 1n;
  return `${new Date(Number(total / 1000n)).toISOString().slice(0, 23)}${(total % 1000n).toString().padStart(3, '0')}Z`;
}

interface Line {
  entry_type: string;
  created_at: string;
  grant_id: string | null;
  balance_after: string;
  reserved_after: string;
  available_after: string;
  balance_change: string;
  reserved_change: string;
  available_change: string;
}

const sum = (lines: Line[], column: 'balance_change' | 'reserved_change' | 'available_change') =>
  lines.reduce((total, line) => total + micros(line[column]), 0n);

async function wallet(world: World) {
  const answer = await world.tenant.get(`/v1/wallets/${world.walletId}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

async function grant(world: World, body: Record<string, unknown>) {
  const answer = await admin.post(`/v1/wallets/${world.walletId}/grants`, body, key());
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body as { id: string };
}

async function send(world: World, jobId: string, usage: Record<string, number>, type = 'job.completed', extra = {}) {
  const answer = await deliver(server.url, world.provider, signDelivery(completion(world, jobId, usage, type, extra)));
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
}

async function job(world: World, id: string) {
  return (await world.tenant.get(`/v1/jobs/${id}`)).body;
}

const settled = (world: World, id: string, key: string) =>
  waitUntil(async () => (await job(world, id)).settlements.some((s: { key: string }) => s.key.endsWith(key)));

/** Every entry, oldest first, page by page (limit 7, to walk the cursor). */
async function allEntries(world: World, query = ''): Promise<Line[]> {
  const newestFirst: Line[] = [];
  let after: string | null = null;
  for (;;) {
    const page: Answer = await world.tenant.get(`/v1/wallets/${world.walletId}/entries?limit=7${query}${after ? `&starting_after=${after}` : ''}`);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    newestFirst.push(...page.body.data);
    if (!page.body.has_more) return newestFirst.reverse();
    after = page.body.next_cursor;
  }
}

/** The wallet's newest instant, one microsecond on: a cut after everything posted so far. */
async function cut(world: World): Promise<string> {
  const newest = await world.tenant.get(`/v1/wallets/${world.walletId}/entries?limit=1`);
  return justAfter(newest.body.data[0].created_at);
}

describe('what the entries of a wallet add up to', () => {
  it('every documented identity, on a wallet with grants, voids, an expiry, refunds, corrections and debt', { timeout: 90_000 }, async () => {
    const world = await createWorld(admin, { credit: '0' });
    const cuts = ['2000-01-01T00:00:00.000000Z'];
    const credit = await admin.post(`/v1/wallets/${world.walletId}/credits`, { amount: '0.05' }, key());
    expect(credit.status, JSON.stringify(credit.body)).toBe(201);
    const paid = credit.body.grant_id as string;
    await grant(world, { amount: '0.03', category: 'promotional', priority: 10 });
    const voided = await grant(world, { amount: '0.02', category: 'paid', priority: 60 });
    const expiring = await grant(world, {
      amount: '0.01',
      category: 'promotional',
      priority: 100,
      expires_at: new Date(Date.now() + 2_000).toISOString(),
    });

    // A job captured, corrected up (to its hold) and down (a refund to the wallet); one released.
    const a = await submitJob(world, { input_tokens: 10_000, output_tokens: 5_000 }); // 0.02
    await send(world, a.id, { input_tokens: 5_000, output_tokens: 2_000 }); // 0.009
    await settled(world, a.id, ':capture:1');
    await send(world, a.id, { input_tokens: 10_000, output_tokens: 5_000 }, 'job.usage_corrected', { correction: 1 }); // +0.011
    await settled(world, a.id, ':adjustment:1');
    await send(world, a.id, { input_tokens: 1_000 }, 'job.usage_corrected', { correction: 2 }); // −0.019
    await settled(world, a.id, ':adjustment:2');
    const b = await submitJob(world, { input_tokens: 20_000 });
    await send(world, b.id, {}, 'job.failed');
    await settled(world, b.id, ':release:1');
    cuts.push(await cut(world));

    // The expiry posts (the worker's duty), then a void.
    await waitUntil(async () => (await world.tenant.get(`/v1/grants/${expiring.id}`)).body.expired_amount === '0.010000');
    const void_ = await admin.post(`/v1/grants/${voided.id}/void`, { note: 'given by mistake' });
    expect(void_.status, JSON.stringify(void_.body)).toBe(200);

    // Paid back to the payer beyond what the grant holds (debt), a credit paying some of it, the refund returned.
    const refund = { grantId: paid, amount: 70_000n, settlementKey: `${world.tenantId}:refund:re_${randomUUID()}` };
    await withTransaction(db.pool, (tx) => postRefundToPayer(tx, { ...refund, entry: 'refund' }));
    expect((await wallet(world)).debt).toBe('0.020000');
    expect((await admin.post(`/v1/wallets/${world.walletId}/credits`, { amount: '0.01' }, key())).status).toBe(201);
    await withTransaction(db.pool, (tx) => reverseRefund(tx, refund));
    expect((await wallet(world)).debt).toBe('0.000000');
    cuts.push(await cut(world));

    // A correction beyond every grant's unheld money goes into debt; a release then repays it.
    const available = micros((await wallet(world)).available);
    const d = await submitJob(world, { input_tokens: Number(available) });
    await send(world, d.id, { input_tokens: Number(available / 2n) });
    await settled(world, d.id, ':capture:1');
    const e = await submitJob(world, { input_tokens: Number(micros((await wallet(world)).available)) });
    await send(world, d.id, { input_tokens: Number(available), output_tokens: 10_000 }, 'job.usage_corrected', { correction: 1 });
    await settled(world, d.id, ':adjustment:1');
    expect(micros((await wallet(world)).debt)).toBeGreaterThan(0n);
    await send(world, e.id, {}, 'job.failed');
    await settled(world, e.id, ':release:1');
    // A lost dispute larger than everything: the wallet ends in debt.
    await withTransaction(db.pool, (tx) =>
      postRefundToPayer(tx, { grantId: paid, amount: 1_000_000n, settlementKey: `${world.tenantId}:dispute:dp_${randomUUID()}`, entry: 'dispute_loss' }),
    );
    cuts.push(await cut(world));

    const view = await wallet(world);
    expect(micros(view.debt)).toBeGreaterThan(0n);
    expect(micros(view.balance)).toBeLessThan(0n);
    const [balance, reserved] = [micros(view.balance), micros(view.reserved)];

    // The entries list: every type there, each filter answering exactly its type.
    const entries = await allEntries(world);
    expect(new Set(entries.map((l) => l.entry_type))).toEqual(new Set(POSTING_TYPES));
    expect(entries.some((l) => l.entry_type === 'adjustment' && l.grant_id === null)).toBe(true); // the job's debt
    for (const type of POSTING_TYPES) {
      const only = await allEntries(world, `&entry_type=${type}`);
      expect(only.length, type).toBe(entries.filter((l) => l.entry_type === type).length);
      expect(only.every((l) => l.entry_type === type)).toBe(true);
    }
    // Over all of it: the wallet view's balance, and its balance − reserved (not its `available`, which grants narrow).
    expect(sum(entries, 'balance_change')).toBe(balance);
    expect(sum(entries, 'reserved_change')).toBe(reserved);
    expect(sum(entries, 'available_change')).toBe(balance - reserved);
    // Entry by entry, the change is the step of the running values.
    let before = { balance: 0n, reserved: 0n, available: 0n };
    for (const line of entries) {
      const after = { balance: micros(line.balance_after), reserved: micros(line.reserved_after), available: micros(line.available_after) };
      expect([micros(line.balance_change), micros(line.reserved_change), micros(line.available_change)]).toEqual([
        after.balance - before.balance,
        after.reserved - before.reserved,
        after.available - before.available,
      ]);
      before = after;
    }

    // Statements of consecutive ranges, and of everything: JSON lines and totals, and the CSV's entry and total rows.
    const ranges = [...cuts.slice(1).map((to, i) => [cuts[i]!, to]), [cuts[0]!, cuts.at(-1)!]] as [string, string][];
    let lines = 0;
    for (const [from, to] of ranges) {
      const query = `/v1/wallets/${world.walletId}/statement?from=${from}&to=${to}`;
      const json = await world.tenant.get(query);
      expect(json.status, JSON.stringify(json.body)).toBe(200);
      const { opening, closing } = json.body;
      const moved = {
        balance_change: micros(closing.balance) - micros(opening.balance),
        reserved_change: micros(closing.reserved) - micros(opening.reserved),
        available_change: micros(closing.available) - micros(opening.available),
      };
      expect(micros(closing.available)).toBe(micros(closing.balance) - micros(closing.reserved));
      for (const column of ['balance_change', 'reserved_change', 'available_change'] as const) {
        expect(sum(json.body.lines, column), `${column} of the lines of [${from}, ${to})`).toBe(moved[column]);
        expect(sum(json.body.totals, column), `${column} of the totals`).toBe(moved[column]);
        expect(sum(json.body.totals_by_category, column), `${column} by category`).toBe(moved[column]);
      }

      const csv = await world.tenant.request('GET', query, undefined, { accept: 'text/csv' });
      expect(csv.status).toBe(200);
      const rows = parse(csv.body as string, { columns: true }) as Record<string, string>[];
      const [first, last] = [rows.find((r) => r.row === 'opening')!, rows.find((r) => r.row === 'closing')!];
      for (const kind of ['entry', 'total']) {
        const of = rows.filter((r) => r.row === kind) as unknown as Line[];
        expect(sum(of, 'balance_change'), `CSV ${kind} rows`).toBe(micros(last.balance_after!) - micros(first.balance_after!));
        expect(sum(of, 'available_change'), `CSV ${kind} rows`).toBe(micros(last.available_after!) - micros(first.available_after!));
      }
      expect(rows.filter((r) => r.row === 'entry').map((r) => [r.entry_id, r.balance_change, r.available_change])).toEqual(
        json.body.lines.map((l: Line & { id: string }) => [l.id, l.balance_change, l.available_change]),
      );
      if (from !== cuts[0] || to !== cuts.at(-1)) lines += json.body.lines.length;
      else {
        // Everything: from nothing to the wallet as it is.
        expect(opening).toEqual({ balance: '0.000000', reserved: '0.000000', available: '0.000000' });
        expect([micros(closing.balance), micros(closing.reserved)]).toEqual([balance, reserved]);
        expect(json.body.lines).toHaveLength(entries.length);
      }
    }
    expect(lines).toBe(entries.length); // the consecutive ranges hold every entry once
  });
});
