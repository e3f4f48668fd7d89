import { describe, expect, it } from 'vitest';
import { priceBookOf } from '../../src/catalog/prices.js';
import { migrate } from '../../src/db/migrate.js';
import { type Queryable } from '../../src/db/pool.js';
import { withTransaction } from '../../src/db/transaction.js';
import { walletTotals } from '../../src/funds/posting/index.js';
import { lockWalletFunds } from '../../src/funds/wallet-funds.js';
import { newId } from '../../src/ids.js';
import { submitJob } from '../../src/jobs/submit.js';
import { creditWallet } from '../../src/funds/credit.js';
import { InsufficientFunds } from '../../src/funds/errors.js';
import { entryInstant } from '../../src/funds/entries.js';
import { createGrant, expireGrant, voidGrant } from '../../src/funds/grant-writes.js';
import { settle } from '../../src/ledger/settle.js';
import { balancesAt, readStatement } from '../../src/funds/wallet-history.js';
import type { Statement } from '../../src/funds/statement.js';
import { creditKey, holdKey, settlementKey, type LifecycleEvent } from '../../src/lifecycle/index.js';
import { snapshotOf } from '../../src/pricing/index.js';
import { EXCEPTION_CLASSES, findInconsistencies, projectionFromEntries, type ExceptionClass } from '../../src/reconcile/checks.js';
import { fileDatabase, migrateBefore } from '../support/older-schema.js';
import { ledgerViolations } from '../support/invariants.js';

/**
 * Migration 0019 (credit grants) on a ledger written by the code before it: every
 * wallet's balance becomes one paid grant, its holds shares of that grant, its jobs'
 * past adjustments a draw or a refund, an overdraft with a hold still open a debt — and
 * nothing a client could read about the past changes: no row, no balance, reserved or
 * available amount (nor what the posting module adds up from the grants), no `?at=`
 * answer at any instant of any wallet, no statement of any range. Then the new code
 * carries on over the migrated rows — captures and releases of migrated holds (one of an
 * overdrawn wallet, whose return pays its debt), corrections both ways undoing migrated
 * draws and refunds in order, credits paying the debt first, a void of a migrated grant
 * with a hold on it, new holds and grants drawn before the migrated one, an expiry sweep
 * with nothing to expire — and after each step every ledger invariant
 * (test/support/invariants.ts) holds; reconciliation, every class of it, ends clean.
 */

const GRANTS = 19;

const pool = await fileDatabase('tally_grants_migration');

// ---------------------------------------------------------------------------------------
// The ledger as the code before grants wrote it: the same rows, in plain SQL. Each
// movement is its own transaction (so entries take distinct instants); entries carry no
// place in their wallet's order, which the trigger of 0009/0013 gives them, running
// values included. Projections are rebuilt from the entries at the end. A small model
// follows each wallet's balance and reserved amount, refuses a reservation the old code
// would have refused, and says what the migration must find.
// ---------------------------------------------------------------------------------------

const PROVIDER = 'p';
/** 1.000000 per 1,000,000 input tokens: one micro a token, so usage reads as micros. */
const UNIT_PRICES = { input_tokens: '1.000000' };

interface Wallet {
  id: string;
  tenantId: string;
  currency: string;
  funding: string;
  revenue: string;
  balance: bigint;
  reserved: bigint;
  /** what the old code charged by adjustments (the only way below available zero) */
  adjustmentCharges: bigint;
}

interface Job {
  id: string;
  wallet: Wallet;
  hold: bigint;
  reserveEntry: string | null;
  priceVersionId: string;
  state: 'reserved' | 'running' | 'cancel_requested' | 'captured' | 'released';
  captured: bigint | null;
  adjusted: bigint;
  highestCorrection: number;
  /** what the old code charged for it so far (capture + adjustments) */
  charged: bigint;
  /** per correction: its signed amount */
  corrections: Map<number, bigint>;
}

const prices = new Map<string, { id: string; book: ReturnType<typeof priceBookOf> }>();
const wallets: Wallet[] = [];
const jobs: Job[] = [];

async function priceIn(currency: string) {
  const known = prices.get(currency);
  if (known) return known;
  const id = newId();
  await pool.query(`insert into price_versions (id, model, currency, version, unit_prices) values ($1, 'm', $2, 1, $3)`, [
    id,
    currency,
    JSON.stringify(UNIT_PRICES),
  ]);
  const row = { id, model: 'm', currency, version: 1, unit_prices: UNIT_PRICES };
  const price = { id, book: priceBookOf(row) };
  prices.set(currency, price);
  return price;
}

async function tenant(label: string): Promise<string> {
  const id = newId();
  await pool.query('insert into tenants (id, name) values ($1, $2)', [id, label]);
  return id;
}

async function openWallet(tenantId: string, currency: string): Promise<Wallet> {
  const [id, funding, revenue] = [newId(), newId(), newId()];
  await pool.query(
    `insert into accounts (id, tenant_id, currency, kind) values ($1, $4, $5, 'wallet'), ($2, $4, $5, 'funding'), ($3, $4, $5, 'revenue')`,
    [id, funding, revenue, tenantId, currency],
  );
  const wallet: Wallet = { id, tenantId, currency, funding, revenue, balance: 0n, reserved: 0n, adjustmentCharges: 0n };
  wallets.push(wallet);
  return wallet;
}

function insertEntry(
  tx: Queryable,
  e: {
    id?: string;
    key: string;
    type: string;
    flags: string;
    pending?: string | null;
    debit: string;
    credit: string;
    amount: bigint;
    wallet: Wallet;
    job?: string | null;
  },
) {
  const id = e.id ?? newId();
  return tx
    .query(
      `insert into ledger_entries (id, settlement_key, entry_type, flags, pending_id, debit_account_id, credit_account_id, amount, currency, tenant_id, job_id)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [id, e.key, e.type, e.flags, e.pending ?? null, e.debit, e.credit, e.amount, e.wallet.currency, e.wallet.tenantId, e.job ?? null],
    )
    .then(() => id);
}

async function credit(wallet: Wallet, amount: bigint): Promise<void> {
  await withTransaction(pool, (tx) =>
    insertEntry(tx, {
      key: creditKey(wallet.tenantId, `idem-${newId()}`),
      type: 'credit',
      flags: 'posted',
      debit: wallet.funding,
      credit: wallet.id,
      amount,
      wallet,
    }),
  );
  wallet.balance += amount;
}

async function reserve(wallet: Wallet, hold: bigint, state: Job['state'] = 'reserved'): Promise<Job> {
  // the old code's one funds check: available covers the hold
  if (wallet.balance - wallet.reserved < hold) throw new Error(`populate: the old code would refuse a hold of ${hold}`);
  const price = await priceIn(wallet.currency);
  const job: Job = {
    id: newId(),
    wallet,
    hold,
    reserveEntry: null,
    priceVersionId: price.id,
    state,
    captured: null,
    adjusted: 0n,
    highestCorrection: 0,
    charged: 0n,
    corrections: new Map(),
  };
  await withTransaction(pool, async (tx) => {
    await tx.query(
      `insert into jobs (id, tenant_id, wallet_id, provider, model, currency, price_version_id, limits, state, reserved, hold_expires_at, cancel_requested_at)
       values ($1, $2, $3, $4, 'm', $5, $6, $7, $8, $9, now() + interval '1000 days', $10)`,
      [
        job.id,
        wallet.tenantId,
        wallet.id,
        PROVIDER,
        wallet.currency,
        price.id,
        JSON.stringify({ input_tokens: Number(hold) }),
        state,
        hold,
        state === 'cancel_requested' ? new Date() : null,
      ],
    );
    // a zero hold wrote no entry
    if (hold > 0n) {
      job.reserveEntry = await insertEntry(tx, {
        key: holdKey(wallet.tenantId, job.id),
        type: 'reserve',
        flags: 'pending',
        debit: wallet.id,
        credit: wallet.revenue,
        amount: hold,
        wallet,
        job: job.id,
      });
    }
    await tx.query(
      `insert into holds (job_id, tenant_id, wallet_id, revenue_account_id, currency, amount, pending_entry_id, expires_at)
       values ($1, $2, $3, $4, $5, $6, $7, now() + interval '1000 days')`,
      [job.id, wallet.tenantId, wallet.id, wallet.revenue, wallet.currency, hold, job.reserveEntry],
    );
  });
  wallet.reserved += hold;
  jobs.push(job);
  return job;
}

async function insertSettlement(
  tx: Queryable,
  job: Job,
  charge: 'capture' | 'release' | 'adjustment',
  version: number,
  amount: bigint,
  remainder: bigint,
  usage: bigint | null,
) {
  const snapshot = usage === null ? null : snapshotOf(prices.get(job.wallet.currency)!.book, { input_tokens: Number(usage) }, job.hold);
  const key = settlementKey(job.wallet.tenantId, job.id, charge, version);
  await tx.query(
    `insert into settlements (id, settlement_key, tenant_id, job_id, charge_type, version, amount, remainder, snapshot)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [newId(), key, job.wallet.tenantId, job.id, charge, version, amount, remainder, snapshot === null ? null : JSON.stringify(snapshot)],
  );
  return key;
}

/** A capture of `usage` micros (capped by the hold), the rest of the hold released with it. */
async function capture(job: Job, usage: bigint): Promise<void> {
  const amount = usage < job.hold ? usage : job.hold;
  const remainder = job.hold - amount;
  const { wallet } = job;
  await withTransaction(pool, async (tx) => {
    const key = await insertSettlement(tx, job, 'capture', 1, amount, remainder, usage);
    const side = { key, pending: job.reserveEntry, debit: wallet.id, credit: wallet.revenue, wallet, job: job.id };
    if (amount > 0n) await insertEntry(tx, { ...side, type: 'capture', flags: 'post_pending', amount });
    if (remainder > 0n) await insertEntry(tx, { ...side, type: 'release_remainder', flags: 'void_pending', amount: remainder });
    await tx.query(`update holds set posted = $2, voided = $3, resolved_by = $4, resolved_at = now() where job_id = $1`, [
      job.id,
      amount,
      remainder,
      key,
    ]);
    await tx.query(`update jobs set state = 'captured', captured = $2, released = $3, updated_at = now() where id = $1`, [
      job.id,
      amount,
      remainder,
    ]);
  });
  wallet.balance -= amount;
  wallet.reserved -= job.hold;
  Object.assign(job, { state: 'captured', captured: amount, charged: amount });
}

async function release(job: Job): Promise<void> {
  const { wallet } = job;
  await withTransaction(pool, async (tx) => {
    const key = await insertSettlement(tx, job, 'release', 1, job.hold, 0n, null);
    if (job.hold > 0n)
      await insertEntry(tx, {
        key,
        type: 'release',
        flags: 'void_pending',
        pending: job.reserveEntry,
        debit: wallet.id,
        credit: wallet.revenue,
        amount: job.hold,
        wallet,
        job: job.id,
      });
    await tx.query(`update holds set posted = 0, voided = $2, resolved_by = $3, resolved_at = now() where job_id = $1`, [
      job.id,
      job.hold,
      key,
    ]);
    await tx.query(`update jobs set state = 'released', captured = 0, released = $2, updated_at = now() where id = $1`, [job.id, job.hold]);
  });
  wallet.reserved -= job.hold;
  Object.assign(job, { state: 'released', captured: 0n });
}

/** Correction N with usage `usage` micros: charges or refunds billable(usage) − what the job was charged so far. */
async function correct(job: Job, version: number, usage: bigint): Promise<void> {
  const billable = usage < job.hold ? usage : job.hold;
  const amount = billable - job.charged;
  if (amount === 0n) throw new Error('populate: a correction that changes nothing writes no adjustment');
  const { wallet } = job;
  await withTransaction(pool, async (tx) => {
    const key = await insertSettlement(tx, job, 'adjustment', version, amount, 0n, usage);
    await insertEntry(tx, {
      key,
      type: 'adjustment',
      flags: 'posted',
      debit: amount > 0n ? wallet.id : wallet.revenue,
      credit: amount > 0n ? wallet.revenue : wallet.id,
      amount: amount > 0n ? amount : -amount,
      wallet,
      job: job.id,
    });
    await tx.query(`update jobs set adjusted = adjusted + $2, highest_correction = $3, updated_at = now() where id = $1`, [
      job.id,
      amount,
      version,
    ]);
    // the old code raised wallet_overdrawn when a charge took the balance below zero
    if (amount > 0n && wallet.balance - amount < 0n) {
      await tx.query(`insert into alerts (id, tenant_id, job_id, class, source, detail) values ($1, $2, $3, 'wallet_overdrawn', $4, $5)`, [
        newId(),
        wallet.tenantId,
        job.id,
        key,
        JSON.stringify({ wallet_id: wallet.id, balance: (wallet.balance - amount).toString() }),
      ]);
    }
  });
  wallet.balance -= amount;
  if (amount > 0n) wallet.adjustmentCharges += amount;
  job.adjusted += amount;
  job.charged += amount;
  job.highestCorrection = version;
  job.corrections.set(version, amount);
}

interface Populated {
  rich: Wallet;
  euro: Wallet;
  overdrawn: Wallet;
  spent: Wallet;
  empty: Wallet;
  /** below zero with no hold open: its grant holds nothing, it owes the rest */
  owing: Wallet;
  /** named jobs the rest of the test acts on */
  named: Record<string, Job>;
}

/** Holds and outcomes of the rich wallet's generated jobs: open, released, captured, adjusted up, down, both. */
const GENERATED = 40;
const holdOf = (i: number) => BigInt(1_000 + ((i * 379) % 4_000));
const captureOf = (i: number) => BigInt((i * 613) % 5_500); // sometimes above the hold (capped), sometimes zero

async function populate(): Promise<Populated> {
  await pool.query(`insert into providers (name, kind, secrets) values ($1, 'generic', '{whsec_eA==}')`, [PROVIDER]);
  const [t1, t2, t3, t4, t5] = [
    await tenant('rich'),
    await tenant('overdrawn'),
    await tenant('spent'),
    await tenant('empty'),
    await tenant('owing'),
  ];
  const rich = await openWallet(t1, 'USD');
  const euro = await openWallet(t1, 'EUR');
  const overdrawn = await openWallet(t2, 'USD');
  const spent = await openWallet(t3, 'USD');
  const empty = await openWallet(t4, 'USD');
  const owing = await openWallet(t5, 'USD');

  // The rich wallet: several credits, named jobs of every kind, and a generated crowd.
  for (const amount of [100_000n, 25_000n, 60_000n]) await credit(rich, amount);
  const named: Record<string, Job> = {};
  named.open = await reserve(rich, 5_000n);
  named.running = await reserve(rich, 3_000n, 'running');
  named.cancelRequested = await reserve(rich, 2_000n, 'cancel_requested');
  named.zeroOpen = await reserve(rich, 0n);
  named.zeroReleased = await reserve(rich, 0n);
  named.released = await reserve(rich, 4_000n);
  named.captured = await reserve(rich, 4_000n);
  named.full = await reserve(rich, 6_000n);
  named.nothing = await reserve(rich, 3_000n);
  named.up = await reserve(rich, 5_000n);
  named.down = await reserve(rich, 5_000n);
  named.upDown = await reserve(rich, 6_000n);
  named.downUp = await reserve(rich, 6_000n);
  named.toZero = await reserve(rich, 2_000n);
  named.ups = await reserve(rich, 9_000n);
  const crowd: Job[] = [];
  for (let i = 0; i < GENERATED; i++) {
    crowd.push(await reserve(rich, holdOf(i), i % 5 === 1 ? 'running' : 'reserved'));
    if (i % 9 === 4) await credit(rich, 7_000n);
  }
  await release(named.zeroReleased);
  await release(named.released);
  await capture(named.captured, 2_500n);
  await capture(named.full, 6_000n);
  await capture(named.nothing, 0n);
  await capture(named.up, 1_000n);
  await capture(named.down, 4_000n);
  await capture(named.upDown, 2_000n);
  await capture(named.downUp, 5_000n);
  await capture(named.toZero, 2_000n);
  await capture(named.ups, 0n);
  for (const [i, job] of crowd.entries()) {
    if (i % 4 === 0) continue; // open
    if (i % 4 === 1) await release(job);
    else await capture(job, captureOf(i));
  }
  await correct(named.up, 1, 3_000n); // +2,000
  await correct(named.down, 1, 1_500n); // −2,500
  await correct(named.upDown, 1, 5_000n); // +3,000
  await correct(named.upDown, 2, 2_500n); // −2,500: net +500
  await correct(named.downUp, 1, 1_000n); // −4,000
  await correct(named.downUp, 2, 4_000n); // +3,000: net −1,000
  await correct(named.toZero, 2, 0n); // −2,000, correction 1 never came
  await correct(named.ups, 1, 1_000n); // +1,000
  await correct(named.ups, 3, 7_000n); // +6,000
  for (const [i, job] of crowd.entries()) {
    if (i % 4 !== 3) continue;
    const charged = job.charged;
    const usage = i % 8 === 3 ? charged + BigInt(1 + (i % 700)) : charged > 0n ? charged - BigInt(1 + (i % Number(charged))) : 1n;
    if ((usage < job.hold ? usage : job.hold) !== charged) await correct(job, 1 + (i % 3), usage);
  }
  await credit(rich, 12_345n);

  // A second currency of the same tenant.
  await credit(euro, 50_000n);
  named.euroCaptured = await reserve(euro, 10_000n);
  named.euroOpen = await reserve(euro, 7_000n);
  await capture(named.euroCaptured, 3_000n);

  // Overdrawn with a hold still open: balance below reserved, and below zero.
  await credit(overdrawn, 10_000n);
  named.overA = await reserve(overdrawn, 9_000n);
  await capture(named.overA, 500n); // balance 9,500
  named.overOpen = await reserve(overdrawn, 5_000n); // reserved 5,000
  named.overC = await reserve(overdrawn, 4_500n);
  await capture(named.overC, 4_500n); // balance 5,000, available 0
  await correct(named.overA, 1, 9_000n); // +8,500: balance −3,500, reserved 5,000

  // Spent to exactly nothing; and a wallet never credited.
  await credit(spent, 4_000n);
  named.spentAll = await reserve(spent, 4_000n);
  await capture(named.spentAll, 4_000n);

  // Below zero with nothing held.
  await credit(owing, 3_000n);
  named.owingA = await reserve(owing, 3_000n);
  await capture(named.owingA, 1_000n); // balance 2,000
  named.owingB = await reserve(owing, 2_000n);
  await capture(named.owingB, 2_000n); // balance 0
  await correct(named.owingA, 1, 3_000n); // +2,000: balance −2,000

  await pool.query(
    `update accounts a set debits_pending = s.debits_pending, debits_posted = s.debits_posted, credits_pending = s.credits_pending, credits_posted = s.credits_posted
     from (${projectionFromEntries()}) s where s.account_id = a.id`,
  );
  return { rich, euro, overdrawn, spent, empty, owing, named };
}

// ---------------------------------------------------------------------------------------
// What a client reads about the past.
// ---------------------------------------------------------------------------------------

interface Holdings {
  balance: bigint;
  reserved: bigint;
  available: bigint;
}

async function walletNow(walletId: string): Promise<Holdings & { runningBalance: bigint; runningReserved: bigint; entrySeq: bigint }> {
  const row = (
    await pool.query<{ balance: bigint; reserved: bigint; running_balance: bigint; running_reserved: bigint; entry_seq: bigint }>(
      `select credits_posted - debits_posted as balance, debits_pending as reserved, running_balance, running_reserved, entry_seq
       from accounts where id = $1`,
      [walletId],
    )
  ).rows[0]!;
  return {
    balance: row.balance,
    reserved: row.reserved,
    available: row.balance - row.reserved,
    runningBalance: row.running_balance,
    runningReserved: row.running_reserved,
    entrySeq: row.entry_seq,
  };
}

/** Every instant of a wallet's entries, and a microsecond before each: where `?at=` answers change. */
async function instantsOf(walletId: string): Promise<string[]> {
  const rows = await pool.query<{ at: string; before: string }>(
    `select ${entryInstant()} as at, ${entryInstant("(created_at - interval '1 microsecond')")} as before
     from ledger_entries where wallet_id = $1 order by wallet_seq`,
    [walletId],
  );
  return [...new Set(rows.rows.flatMap((r) => [r.before, r.at]))];
}

/**
 * A statement as far as the past goes: what the wallet held before the range and after
 * it, each entry's place and holdings after it, and per entry type the count and what it
 * did to the balance and the reserved amount. Computed here from the stored entries
 * (the code's readStatement reads tables 0019 creates, so before the migration it cannot
 * run), and after the migration compared with readStatement's own answer too.
 */
interface PastStatement {
  opening: { balance: bigint; reserved: bigint };
  closing: { balance: bigint; reserved: bigint };
  lines: { id: string; sequence: bigint; createdAt: string; entryType: string; balanceAfter: bigint; reservedAfter: bigint }[];
  totals: { entryType: string; count: number; balanceChange: bigint; reservedChange: bigint }[];
}

type Chain = PastStatement['lines'];

async function chainOf(walletId: string): Promise<Chain> {
  const rows = await pool.query<{
    id: string;
    wallet_seq: bigint;
    at: string;
    entry_type: string;
    balance_after: bigint;
    reserved_after: bigint;
  }>(
    `select id, wallet_seq, ${entryInstant()} as at, entry_type, balance_after, reserved_after from ledger_entries where wallet_id = $1 order by wallet_seq`,
    [walletId],
  );
  return rows.rows.map((r) => ({
    id: r.id,
    sequence: r.wallet_seq,
    createdAt: r.at,
    entryType: r.entry_type,
    balanceAfter: r.balance_after,
    reservedAfter: r.reserved_after,
  }));
}

/** [from, to) cut from the wallet's order (instants rise along it; canonical texts compare in time order). */
function statementFromChain(chain: Chain, from: string, to: string): PastStatement {
  const before = chain.filter((e) => e.createdAt < from).at(-1);
  const opening = before ? { balance: before.balanceAfter, reserved: before.reservedAfter } : { balance: 0n, reserved: 0n };
  const lines = chain.filter((e) => e.createdAt >= from && e.createdAt < to);
  const totals = new Map<string, PastStatement['totals'][number]>();
  let held = opening;
  for (const line of lines) {
    const total = totals.get(line.entryType) ?? { entryType: line.entryType, count: 0, balanceChange: 0n, reservedChange: 0n };
    total.count += 1;
    total.balanceChange += line.balanceAfter - held.balance;
    total.reservedChange += line.reservedAfter - held.reserved;
    totals.set(line.entryType, total);
    held = { balance: line.balanceAfter, reserved: line.reservedAfter };
  }
  const byType = [...totals.values()].sort((a, b) => a.entryType.localeCompare(b.entryType));
  return { opening, closing: held, lines, totals: byType };
}

function shapeOf(s: Statement): PastStatement {
  return {
    opening: s.opening,
    closing: s.closing,
    lines: s.lines.map((l) => ({
      id: l.id,
      sequence: l.sequence,
      createdAt: l.createdAt,
      entryType: l.entryType,
      balanceAfter: l.balanceAfter,
      reservedAfter: l.reservedAfter,
    })),
    totals: s.totals
      .map((t) => ({ entryType: t.entryType, count: t.count, balanceChange: t.balanceChange, reservedChange: t.reservedChange }))
      .sort((a, b) => a.entryType.localeCompare(b.entryType)),
  };
}

interface PastView {
  at: Map<string, Map<string, Holdings>>;
  statements: Map<string, PastStatement[]>;
}

/** `?at=` at every instant, and the statement of every range, by wallet; `byCode`: the statements by readStatement. */
async function readPast(
  ids: string[],
  ranges: Map<string, [string, string][]>,
  instants: Map<string, string[]>,
  byCode = false,
): Promise<PastView> {
  const view: PastView = { at: new Map(), statements: new Map() };
  for (const id of ids) {
    const at = new Map<string, Holdings>();
    for (const instant of instants.get(id)!) {
      const b = await balancesAt(pool, id, instant);
      at.set(instant, { balance: b.balance, reserved: b.reserved, available: b.available });
    }
    view.at.set(id, at);
    const chain = await chainOf(id);
    const statements: PastStatement[] = [];
    for (const [from, to] of ranges.get(id)!)
      statements.push(byCode ? shapeOf(await readStatement(pool, id, from, to)) : statementFromChain(chain, from, to));
    view.statements.set(id, statements);
  }
  return view;
}

/** Ranges: the whole history up to `cutoff` (before the migration), each stretch between every 7th instant, and single entries. */
function rangesOf(instants: string[], cutoff: string): [string, string][] {
  const ranges: [string, string][] = [['2000-01-01T00:00:00.000000Z', cutoff]];
  for (let i = 0; i + 7 < instants.length; i += 7) ranges.push([instants[i]!, instants[i + 7]!]);
  for (let i = 0; i + 1 < instants.length; i += 11) ranges.push([instants[i]!, instants[i + 1]!]);
  return ranges;
}

/** Every pre-existing row a client or reconciliation reads, as text: unchanged means unchanged. */
const FINGERPRINTS: Record<string, string> = {
  ledger_entries: `select md5(string_agg(row(id, settlement_key, entry_type, flags, pending_id, debit_account_id, credit_account_id, amount, currency,
                          tenant_id, job_id, reference, created_at, wallet_id, wallet_seq, balance_after, reserved_after)::text, ',' order by id)) from ledger_entries`,
  accounts: `select md5(string_agg(row(id, tenant_id, currency, kind, debits_pending, debits_posted, credits_pending, credits_posted,
                    entry_seq, running_balance, running_reserved, last_entry_at)::text, ',' order by id)) from accounts`,
  // the columns later migrations add (0032: a hold's owed part, a job's growth) are new, not changed
  holds: `select md5(string_agg((to_jsonb(h) - 'owed')::text, ',' order by job_id)) from holds h`,
  settlements: `select md5(string_agg(s::text, ',' order by id)) from settlements s`,
  jobs: `select md5(string_agg((to_jsonb(j) - array['auto_extend', 'usage_so_far', 'extension_count', 'hold_exhausted', 'exhausted_announced'])::text, ',' order by id)) from jobs j`,
};

async function fingerprints(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [table, sql] of Object.entries(FINGERPRINTS)) out[table] = (await pool.query<{ md5: string }>(sql)).rows[0]!.md5;
  return out;
}

// ---------------------------------------------------------------------------------------

async function invariants(step: string): Promise<void> {
  const found = await ledgerViolations(pool);
  expect(found, `ledger invariants after: ${step}`).toEqual({});
}

/**
 * Reconciliation: before the migration, the classes that existed before grants (the
 * others read tables 0019 creates, and wallet_overdrawn names the debt, its column);
 * after it, every class. Spend periods are left out throughout: this populate writes no
 * spend counters.
 */
const BEFORE_GRANTS: ExceptionClass[] = [
  'terminal_job_without_settlement',
  'settlement_without_entries',
  'hold_captured_and_released',
  'hold_open_past_expiry',
  'event_stuck',
  'event_dead',
  'projection_drift',
  'currency_sum_nonzero',
  'usage_mismatch',
  'event_key_conflict',
  'event_mismatch',
  'late_success_after_release',
  'late_usage_after_release',
  'usage_exceeds_reservation',
  'running_balance_drift',
];

async function reconciled(
  classes: readonly ExceptionClass[] = EXCEPTION_CLASSES.filter((c) => c !== 'spend_period_drift'),
): Promise<[string, unknown][]> {
  const found = (await findInconsistencies(pool, classes)).map((f): [string, unknown] => [f.class, f.objects.wallet_id ?? f.objects]);
  return found.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

async function grantOf(walletId: string) {
  const rows = await pool.query<{
    id: string;
    category: string;
    priority: number;
    source: string;
    amount: bigint;
    remaining: bigint;
    held: bigint;
    opening: bigint;
    expires_at: Date | null;
    active: boolean;
    debt: bigint;
  }>(
    `select g.id, g.category, g.priority, g.source, g.amount, g.remaining, g.held, g.opening, g.expires_at,
            g.activated_at is not null and g.voided_at is null and g.canceled_at is null as active, a.debt
     from grants g join accounts a on a.id = g.wallet_id where g.wallet_id = $1 order by g.created_at, g.id`,
    [walletId],
  );
  return rows.rows;
}

async function shareOf(jobId: string) {
  const rows = await pool.query<{ grant_id: string; held: bigint; captured: bigint; returned: bigint; refunded: bigint }>(
    'select grant_id, held, captured, returned, refunded from hold_shares where job_id = $1 order by position',
    [jobId],
  );
  return rows.rows;
}

async function drawsOf(jobId: string) {
  const rows = await pool.query<{ version: number; grant_id: string | null; amount: bigint; refunded: bigint }>(
    'select version, grant_id, amount, refunded from adjustment_draws where job_id = $1 order by version, position',
    [jobId],
  );
  return rows.rows;
}

async function debtOf(walletId: string): Promise<bigint> {
  return (await pool.query<{ debt: bigint }>('select debt from accounts where id = $1', [walletId])).rows[0]!.debt;
}

function settleJob(job: Job, event: LifecycleEvent) {
  return settle(pool, { jobId: job.id, event });
}

describe('migration 0019 on a ledger written before grants', () => {
  it(
    'makes each wallet one paid grant and changes nothing a client reads about the past; the new code carries on',
    { timeout: 120_000 },
    async () => {
      const started = performance.now();
      await migrateBefore(pool, GRANTS);
      const { rich, euro, overdrawn, spent, empty, owing, named } = await populate();
      const overdrafts = [overdrawn.id, owing.id].sort().map((id) => ['wallet_overdrawn', id]);
      const ids = wallets.map((w) => w.id);

      // The model agrees with the ledger the old code left (and the overdraft is what it should be).
      for (const w of wallets) {
        const now = await walletNow(w.id);
        expect({ balance: now.balance, reserved: now.reserved }, `wallet ${w.id}`).toEqual({ balance: w.balance, reserved: w.reserved });
      }
      expect(await walletNow(overdrawn.id)).toMatchObject({ balance: -3_500n, reserved: 5_000n, available: -8_500n });
      expect(await reconciled(BEFORE_GRANTS)).toEqual([]);
      const below: string[] = [];
      for (const w of wallets) if ((await walletNow(w.id)).balance < 0n) below.push(w.id);
      expect(below.sort().map((id) => ['wallet_overdrawn', id])).toEqual(overdrafts);

      // Before: what a client can read about every wallet, now and in the past.
      const instants = new Map<string, string[]>();
      const ranges = new Map<string, [string, string][]>();
      const cutoff = (await pool.query<{ at: string }>(`select ${entryInstant('clock_timestamp()')} as at`)).rows[0]!.at;
      for (const id of ids) {
        const all = await instantsOf(id);
        instants.set(id, ['2000-01-01T00:00:00.000000Z', ...all, cutoff]);
        ranges.set(id, rangesOf(all, cutoff));
      }
      const nowBefore = new Map<string, Awaited<ReturnType<typeof walletNow>>>();
      for (const id of ids) nowBefore.set(id, await walletNow(id));
      const pastBefore = await readPast(ids, ranges, instants);
      const rowsBefore = await fingerprints();
      const entryCount = (await pool.query<{ n: number }>('select count(*)::int as n from ledger_entries')).rows[0]!.n;
      const pointCount = [...instants.values()].reduce((n, l) => n + l.length, 0);
      const rangeCount = [...ranges.values()].reduce((n, l) => n + l.length, 0);

      const applied = await migrate(pool);
      expect(applied[0]).toMatch(/^0019_/);

      // Nothing of the past changed: rows, balances now, every `?at=` answer, every statement.
      expect(await fingerprints()).toEqual(rowsBefore);
      for (const id of ids) expect(await walletNow(id), `wallet ${id} now`).toEqual(nowBefore.get(id));
      const pastAfter = await readPast(ids, ranges, instants);
      expect(pastAfter.at).toEqual(pastBefore.at);
      expect(pastAfter.statements).toEqual(pastBefore.statements);
      // … and the code's own statements of those ranges say the same
      expect((await readPast(ids, ranges, instants, true)).statements).toEqual(pastBefore.statements);
      const namingGrants = await pool.query<{ n: number }>('select count(*)::int as n from ledger_entries where grant_id is not null');
      expect(namingGrants.rows[0]!.n).toBe(0);

      // One paid grant per wallet: remaining − debt = balance, held = reserved.
      const grantCount = await pool.query<{ n: number }>('select count(*)::int as n from grants');
      expect(grantCount.rows[0]!.n).toBe(wallets.length);
      for (const w of wallets) {
        const grants = await grantOf(w.id);
        expect(grants, `the grants of wallet ${w.id}`).toHaveLength(1);
        const g = grants[0]!;
        expect({ category: g.category, priority: g.priority, source: g.source, expires: g.expires_at, active: g.active }).toEqual({
          category: 'paid',
          priority: 50,
          source: 'credit',
          expires: null,
          active: true,
        });
        expect(g.remaining - g.debt).toBe(w.balance);
        expect(g.held).toBe(w.reserved);
        expect(g.opening).toBe(g.remaining);
        // What the wallet view adds up from its grants is what it showed before.
        const totals = await withTransaction(pool, async (tx) => {
          const locked = (await lockWalletFunds(tx, w.id))!;
          return walletTotals(locked.funds, locked.now);
        });
        expect({ balance: totals.balance, reserved: totals.reserved, available: totals.available, debt: totals.debt }).toEqual({
          balance: w.balance,
          reserved: w.reserved,
          available: w.balance - w.reserved,
          debt: g.debt,
        });
      }
      // The overdraft: the open hold stays on the grant, the wallet owes the rest.
      expect(await grantOf(overdrawn.id)).toMatchObject([{ remaining: 5_000n, held: 5_000n, debt: 8_500n }]);
      expect(await grantOf(spent.id)).toMatchObject([{ remaining: 0n, held: 0n, debt: 0n }]);
      expect(await grantOf(empty.id)).toMatchObject([{ remaining: 0n, held: 0n, debt: 0n }]);
      expect(await grantOf(owing.id)).toMatchObject([{ remaining: 0n, held: 0n, debt: 2_000n }]);
      for (const w of wallets.filter((x) => x !== overdrawn && x !== owing)) expect(await debtOf(w.id)).toBe(0n);

      // Each hold one share; each job's past adjustments a draw (net charge) or refunded (net refund).
      for (const job of jobs) {
        const [grant] = await grantOf(job.wallet.id);
        const shares = await shareOf(job.id);
        const net = job.adjusted;
        expect(shares, `the share of job ${job.id}`).toEqual([
          {
            grant_id: grant!.id,
            held: job.hold,
            captured: job.captured ?? 0n,
            returned: job.state === 'captured' || job.state === 'released' ? job.hold - (job.captured ?? 0n) : 0n,
            refunded: net < 0n ? -net : 0n,
          },
        ]);
        expect(await drawsOf(job.id), `the draws of job ${job.id}`).toEqual(
          net > 0n ? [{ version: job.highestCorrection, grant_id: grant!.id, amount: net, refunded: 0n }] : [],
        );
      }
      await invariants('migration');
      expect(await reconciled()).toEqual(overdrafts);

      // ---- The new code on the migrated ledger ----
      const step = async (label: string, action: () => Promise<unknown>) => {
        await action();
        await invariants(label);
      };
      const richGrant = (await grantOf(rich.id))[0]!.id;

      // An open migrated hold captured: the share posts its reserve entry from before grants.
      await step('capture an open migrated hold', () => settleJob(named.open!, { type: 'job.completed', usage: { input_tokens: 1_200 } }));
      expect(await shareOf(named.open!.id)).toMatchObject([{ held: 5_000n, captured: 1_200n, returned: 3_800n }]);
      await step('release a running migrated hold', () => settleJob(named.running!, { type: 'job.failed' }));
      await step('release after the cancel grace', () => settleJob(named.cancelRequested!, { type: 'cancel.grace_elapsed' }));
      await step('capture a zero hold', () => settleJob(named.zeroOpen!, { type: 'job.completed', usage: { input_tokens: 0 } }));
      // A migrated grant voided with a hold still on it: the unheld part leaves now, the hold's return when it comes.
      const euroGrant = (await grantOf(euro.id))[0]!.id;
      await step('void the euro wallet’s migrated grant', () =>
        withTransaction(pool, (tx) => voidGrant(tx, euroGrant, 'test: an operator voids it')),
      );
      expect(await grantOf(euro.id)).toMatchObject([{ remaining: 7_000n, held: 7_000n }]);
      await step('release its expired hold', () => settleJob(named.euroOpen!, { type: 'hold.expired' }));
      expect(await grantOf(euro.id)).toMatchObject([{ remaining: 0n, held: 0n }]);
      expect(await walletNow(euro.id)).toMatchObject({ balance: 0n, reserved: 0n });

      // Corrections on migrated jobs: refunds undo draws latest first, then the capture's share; charges draw anew.
      await step('refund a migrated capture', () =>
        settleJob(named.captured!, { type: 'job.usage_corrected', correction: 1, usage: { input_tokens: 500 } }),
      );
      expect(await shareOf(named.captured!.id)).toMatchObject([{ captured: 2_500n, refunded: 2_000n }]);
      await step('refund a migrated downward correction further', () =>
        settleJob(named.down!, { type: 'job.usage_corrected', correction: 2, usage: { input_tokens: 500 } }),
      );
      expect(await shareOf(named.down!.id)).toMatchObject([{ captured: 4_000n, refunded: 3_500n }]);
      await step('refund a migrated upward correction to nothing', () =>
        settleJob(named.up!, { type: 'job.usage_corrected', correction: 2, usage: { input_tokens: 0 } }),
      );
      expect(await drawsOf(named.up!.id)).toEqual([{ version: 1, grant_id: richGrant, amount: 2_000n, refunded: 2_000n }]);
      expect(await shareOf(named.up!.id)).toMatchObject([{ captured: 1_000n, refunded: 1_000n }]);
      await step('charge again after a migrated net charge', () =>
        settleJob(named.upDown!, { type: 'job.usage_corrected', correction: 3, usage: { input_tokens: 6_000 } }),
      );
      await step('then refund past the draws into the share', () =>
        settleJob(named.upDown!, { type: 'job.usage_corrected', correction: 4, usage: { input_tokens: 1_000 } }),
      );
      expect(await drawsOf(named.upDown!.id)).toEqual([
        { version: 2, grant_id: richGrant, amount: 500n, refunded: 500n },
        { version: 3, grant_id: richGrant, amount: 3_500n, refunded: 3_500n },
      ]);
      expect(await shareOf(named.upDown!.id)).toMatchObject([{ captured: 2_000n, refunded: 1_000n }]);
      await step('refund a migrated net refund to zero', () =>
        settleJob(named.downUp!, { type: 'job.usage_corrected', correction: 3, usage: { input_tokens: 0 } }),
      );
      expect(await shareOf(named.downUp!.id)).toMatchObject([{ captured: 5_000n, refunded: 5_000n }]);
      await step('a stale correction changes nothing', () =>
        settleJob(named.ups!, { type: 'job.usage_corrected', correction: 2, usage: { input_tokens: 0 } }),
      );
      await step('refund part of a migrated draw', () =>
        settleJob(named.ups!, { type: 'job.usage_corrected', correction: 4, usage: { input_tokens: 3_000 } }),
      );
      expect(await drawsOf(named.ups!.id)).toEqual([{ version: 3, grant_id: richGrant, amount: 7_000n, refunded: 4_000n }]);

      // The overdrawn wallet: a credit pays the debt first; a return from the migrated hold pays it too.
      await step('credit the overdrawn wallet', () =>
        withTransaction(pool, (tx) =>
          creditWallet(tx, {
            wallet: { id: overdrawn.id, tenant_id: overdrawn.tenantId, currency: 'USD' },
            amount: 3_000n,
            creditKey: 'after-0019-a',
          }),
        ),
      );
      expect(await debtOf(overdrawn.id)).toBe(5_500n);
      expect((await grantOf(overdrawn.id)).map((g) => [g.remaining, g.held])).toEqual([
        [5_000n, 5_000n],
        [0n, 0n],
      ]);
      expect(await walletNow(overdrawn.id)).toMatchObject({ balance: -500n, reserved: 5_000n });
      await step('capture the overdrawn wallet’s migrated hold', () =>
        settleJob(named.overOpen!, { type: 'job.completed', usage: { input_tokens: 1_000 } }),
      );
      expect(await debtOf(overdrawn.id)).toBe(1_500n);
      expect(await walletNow(overdrawn.id)).toMatchObject({ balance: -1_500n, reserved: 0n });
      await step('credit it out of debt', () =>
        withTransaction(pool, (tx) =>
          creditWallet(tx, {
            wallet: { id: overdrawn.id, tenant_id: overdrawn.tenantId, currency: 'USD' },
            amount: 10_000n,
            creditKey: 'after-0019-b',
          }),
        ),
      );
      expect(await debtOf(overdrawn.id)).toBe(0n);
      expect(await walletNow(overdrawn.id)).toMatchObject({ balance: 8_500n, reserved: 0n, available: 8_500n });
      await step('refund a migrated overdrawing charge', () =>
        settleJob(named.overA!, { type: 'job.usage_corrected', correction: 2, usage: { input_tokens: 500 } }),
      );
      expect(await walletNow(overdrawn.id)).toMatchObject({ balance: 17_000n });

      // Owing with nothing held: no hold is funded; a refund of the charge that overdrew it pays the debt first.
      const owingAccount = { id: owing.id, tenant_id: owing.tenantId, currency: 'USD' };
      await expect(
        withTransaction(pool, (tx) =>
          submitJob(tx, {
            tenantId: owing.tenantId,
            wallet: owingAccount,
            provider: { name: PROVIDER, policies: {} },
            model: 'm',
            limits: { input_tokens: 1 },
          }),
        ),
      ).rejects.toBeInstanceOf(InsufficientFunds);
      await step('refund the owing wallet’s migrated charge', () =>
        settleJob(named.owingA!, { type: 'job.usage_corrected', correction: 2, usage: { input_tokens: 1_000 } }),
      );
      expect(await debtOf(owing.id)).toBe(0n);
      expect(await grantOf(owing.id)).toMatchObject([{ remaining: 0n, held: 0n }]);
      expect(await walletNow(owing.id)).toMatchObject({ balance: 0n, reserved: 0n });
      expect(await drawsOf(named.owingA!.id)).toMatchObject([{ version: 1, amount: 2_000n, refunded: 2_000n }]);

      // New holds on the migrated grant, and on a new grant drawn first.
      const richAccount = { id: rich.id, tenant_id: rich.tenantId, currency: 'USD' };
      const submitted = await withTransaction(pool, (tx) =>
        submitJob(tx, {
          tenantId: rich.tenantId,
          wallet: richAccount,
          provider: { name: PROVIDER, policies: {} },
          model: 'm',
          limits: { input_tokens: 4_000 },
        }),
      );
      await invariants('a new hold on the migrated grant');
      expect((await shareOf(submitted.id)).map((s) => [s.grant_id, s.held])).toEqual([[richGrant, 4_000n]]);
      const promo = await withTransaction(pool, (tx) =>
        createGrant(tx, {
          wallet: richAccount,
          amount: 1_500n,
          category: 'promotional',
          priority: 10,
          grantKey: `${rich.tenantId}:grant:after-0019`,
        }),
      );
      await invariants('a promotional grant');
      const second = await withTransaction(pool, (tx) =>
        submitJob(tx, {
          tenantId: rich.tenantId,
          wallet: richAccount,
          provider: { name: PROVIDER, policies: {} },
          model: 'm',
          limits: { input_tokens: 2_000 },
        }),
      );
      await invariants('a hold across the new and the migrated grant');
      expect((await shareOf(second.id)).map((s) => [s.grant_id, s.held])).toEqual([
        [promo.grant.id, 1_500n],
        [richGrant, 500n],
      ]);
      await step('capture it across both', () =>
        settle(pool, { jobId: second.id, event: { type: 'job.completed', usage: { input_tokens: 1_800 } } }),
      );

      // The expiry sweep finds nothing to expire: a migrated grant never expires.
      for (const w of wallets) {
        const [g] = await grantOf(w.id);
        expect(await withTransaction(pool, (tx) => expireGrant(tx, g!.id))).toBeNull();
      }
      expect((await pool.query(`select 1 from ledger_entries where entry_type = 'grant_expiry'`)).rowCount).toBe(0);
      await invariants('the expiry sweep');
      expect(await reconciled()).toEqual([]);

      // And the past still reads as it did before the migration.
      const pastLater = await readPast(ids, ranges, instants, true);
      expect(pastLater.at).toEqual(pastBefore.at);
      expect(pastLater.statements).toEqual(pastBefore.statements);

      console.log(
        `migration 0019: ${wallets.length} wallets, ${jobs.length} jobs, ${entryCount} entries; ${pointCount} ?at= instants and ${rangeCount} statements unchanged; ` +
          `${((performance.now() - started) / 1000).toFixed(2)} s`,
      );
    },
  );
});
