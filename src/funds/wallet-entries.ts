import type { Queryable } from '../db/pool.js';
import { newId } from '../ids.js';
import { entryInstant, type EntryRow } from './entries.js';
import { SpendLimitReached } from './errors.js';
import { evaluateThresholds } from './thresholds.js';
import { projectionDelta, spendDelta, walletDelta } from './posting/index.js';
import { firstOverLimit, type PeriodWithLimit } from './spend-limits.js';
import type { Transfer } from './transfers.js';

/**
 * Posting entries to a wallet: ONE statement moves the wallet's projection, takes the
 * next places in the wallet's order (migrations/0009) and inserts the entries with their
 * running balances. The UPDATE takes the wallet row's lock and, under READ COMMITTED,
 * returns the row as the last writer committed it, so the numbers and the instant come
 * from whoever held the lock before — lock order, which for one wallet is commit order.
 * The entries are inserted in the same statement, under that lock: no extra round trip
 * on the settle path, and no window in which another writer could take a place between
 * them. (A separate "read the last entry" would not do: a statement's snapshot predates
 * its lock wait and misses the entry the previous holder just committed.)
 */

/**
 * Only for a reservation, checked against the tenant's spend limits in this currency.
 * Its funds were checked by the posting module under the wallet's lock (the one check).
 */
export interface SpendGuard {
  currency: string;
  requested: bigint;
}

export interface PostedToWallet {
  /** the inserted entries, in input order (zero amounts are not entries) */
  rows: EntryRow[];
  /** the wallet's posted balance after them, for overdraft checks */
  balance: bigint;
}

const INSERT_COLUMNS = `id, settlement_key, entry_type, flags, pending_id, debit_account_id, credit_account_id,
  amount, currency, tenant_id, job_id, reference, grant_id, created_at, wallet_id, wallet_seq, balance_after, reserved_after`;

/**
 * The statement. `moves` are the entries with their places and running values; what
 * they do to the tenant's spend (the posting module's spendDelta, computed by the caller)
 * goes to spend_periods (migrations/0014): `spend_now` in the period of this
 * transaction's now(), `spend_of_hold` in the period of the resolved hold's creation (its
 * row's created_at, the same now() of the reservation). Periods are UTC days and months.
 * Each period's rows change only under the wallet's lock, which this statement holds by
 * then, so ON CONFLICT adds to the latest committed value. Every amount here was worked
 * out by the caller from the posting module's definitions (walletDelta, projectionDelta,
 * spendDelta): the statement only applies them, it decides nothing about money.
 *
 * The accounts on the other side of the entries (the tenant's revenue or funding account)
 * are locked in this statement, after the wallet (docs/ARCHITECTURE.md "Lock order": `counterparts`
 * joins `head`) and before the entries' foreign-key checks, which run at its end: those
 * then find each row locked by this transaction and add no share lock of their own.
 * Share locks of several transactions on one row are kept as a MultiXact, and on a hot
 * tenant's revenue row their upkeep was PostgreSQL's largest single cost (bench/RESULTS.md).
 * The caller moves those accounts' projections later in the transaction (transfers.ts).
 *
 * Guarded (a reservation): `limits` returns, for each period the reservation counted in,
 * its spend as this statement wrote it beside the tenant's limit for it (exact under any
 * concurrency); the caller compares them (spend-limits.ts firstOverLimit).
 */
function statement(guarded: boolean): string {
  return `with head as (
    update accounts w set debits_pending = debits_pending + $2, debits_posted = debits_posted + $3,
                        credits_pending = credits_pending + $4, credits_posted = credits_posted + $5,
                        entry_seq = entry_seq + $6, running_balance = running_balance + $7, running_reserved = running_reserved + $8,
                        last_entry_at = greatest(clock_timestamp(), last_entry_at)
    where w.tenant_id = $27 and w.id = $1
    returning entry_seq, running_balance, running_reserved, last_entry_at, credits_posted - debits_posted as balance,
              tenant_id, currency, threshold_count
  ), counterparts as materialized (
    select a.id from head, accounts a where a.tenant_id = $27 and a.id = any($25::uuid[]) order by a.id for no key update of a
  ), moves as (
    select e.*, head.last_entry_at as at, head.entry_seq - $6 + e.n as wallet_seq,
           head.running_balance - e.balance_later as balance_after, head.running_reserved - e.reserved_later as reserved_after
    from head cross join (select count(*) from counterparts) as locked cross join unnest($9::uuid[], $10::text[], $11::text[], $12::text[], $13::uuid[], $14::uuid[], $15::uuid[],
                                $16::bigint[], $17::text[], $18::uuid[], $19::uuid[], $20::text[], $21::bigint[], $22::bigint[], $26::uuid[],
                                $23::bigint[], $24::bigint[])
         with ordinality as e(id, settlement_key, entry_type, flags, pending_id, debit_account_id, credit_account_id,
                              amount, currency, tenant_id, job_id, reference, balance_later, reserved_later, grant_id,
                              spend_now, spend_of_hold, n)
  ), inserted as (
    insert into ledger_entries (${INSERT_COLUMNS})
    select id, settlement_key, entry_type, flags, pending_id, debit_account_id, credit_account_id,
           amount, currency, tenant_id, job_id, reference, grant_id, at, $1, wallet_seq, balance_after, reserved_after
    from moves
    returning *
  ), spending as (
    select now() as at, m.spend_now as amount from moves m where m.spend_now <> 0
    union all
    select h.created_at, m.spend_of_hold from moves m join holds h on h.tenant_id = $27 and h.job_id = m.job_id where m.spend_of_hold <> 0
  ), spend as (
    insert into spend_periods (tenant_id, currency, period, starts_on, spent)
    select head.tenant_id, head.currency, p.period, p.starts_on, sum(s.amount)
    from head cross join spending s
    cross join lateral (values ('day', (s.at at time zone 'UTC')::date),
                               ('month', date_trunc('month', s.at at time zone 'UTC')::date)) as p(period, starts_on)
    group by head.tenant_id, head.currency, p.period, p.starts_on
    having sum(s.amount) <> 0 -- a capture in its hold's own period leaves the period as it was
    order by p.period, p.starts_on
    on conflict on constraint spend_periods_pkey do update set spent = spend_periods.spent + excluded.spent
    returning period, starts_on, spent
  )
  select (select balance from head) as wallet_balance, (select threshold_count from head) as threshold_count,
         ${guarded ? LIMITS : 'null::jsonb'} as limits,
         inserted.*, ${entryInstant('inserted.created_at')} as created_at_text
  from inserted order by wallet_seq`;
}

/** The periods a reservation counted in, with the tenant's limit of each (exact bigints as text). */
const LIMITS = `(select jsonb_agg(jsonb_build_object('period', l.period, 'limit', l.amount::text, 'starts_on', s.starts_on,
                                             'spent', s.spent::text))
     from spend s join spend_limits l on l.tenant_id = $27 and l.currency = $28 and l.period = s.period)`;

/**
 * Posts `transfers` (each with `walletId` on one side) to the wallet: projection, order,
 * entries and the tenant's spend in one statement, then the wallet's thresholds (one
 * more statement, only for a wallet that has some; a crossing writes its
 * wallet.balance_low message). With a guard (a reservation), over one of the tenant's
 * spend limits it throws SpendLimitReached. Null: no such wallet of the tenant. Transfers
 * of zero are skipped (an entry always moves money); at least one must move some.
 */
export async function postWalletEntries(
  tx: Queryable,
  walletId: string,
  transfers: Transfer[],
  guard?: SpendGuard,
): Promise<PostedToWallet | null> {
  const moving = transfers.filter((t) => t.amount !== 0n);
  if (moving.length === 0) throw new RangeError(`nothing to post to wallet ${walletId}: every transfer is zero`);
  const projection = { debitsPending: 0n, debitsPosted: 0n, creditsPending: 0n, creditsPosted: 0n };
  const deltas = moving.map((t) => {
    const delta = projectionDelta(t);
    const sides = [t.debitAccountId === walletId ? delta.debit : null, t.creditAccountId === walletId ? delta.credit : null];
    if (!sides[0] && !sides[1]) throw new RangeError(`a transfer of ${t.settlementKey} posted to wallet ${walletId} does not touch it`);
    for (const side of sides) {
      if (!side) continue;
      projection.debitsPending += side.debitsPending;
      projection.debitsPosted += side.debitsPosted;
      projection.creditsPending += side.creditsPending;
      projection.creditsPosted += side.creditsPosted;
    }
    return walletDelta(t, walletId);
  });
  const spends = moving.map((t) => spendDelta(t, walletId));
  // What the entries after each one move: its running value is the head's minus that.
  const balanceLater: bigint[] = new Array(moving.length);
  const reservedLater: bigint[] = new Array(moving.length);
  let balance = 0n;
  let reserved = 0n;
  for (let i = moving.length - 1; i >= 0; i--) {
    balanceLater[i] = balance;
    reservedLater[i] = reserved;
    balance += deltas[i]!.balance;
    reserved += deltas[i]!.reserved;
  }
  const counterparts = new Set(moving.flatMap((t) => [t.debitAccountId, t.creditAccountId]).filter((account) => account !== walletId));
  const values: unknown[] = [
    walletId,
    projection.debitsPending.toString(),
    projection.debitsPosted.toString(),
    projection.creditsPending.toString(),
    projection.creditsPosted.toString(),
    moving.length,
    balance.toString(),
    reserved.toString(),
    moving.map(() => newId()),
    moving.map((t) => t.settlementKey),
    moving.map((t) => t.entryType),
    moving.map((t) => t.flags),
    moving.map((t) => t.pendingId ?? null),
    moving.map((t) => t.debitAccountId),
    moving.map((t) => t.creditAccountId),
    moving.map((t) => t.amount.toString()),
    moving.map((t) => t.currency),
    moving.map((t) => t.tenantId),
    moving.map((t) => t.jobId ?? null),
    moving.map((t) => t.reference ?? null),
    balanceLater.map(String),
    reservedLater.map(String),
    spends.map((d) => d.now.toString()),
    spends.map((d) => d.ofHold.toString()),
    [...counterparts].sort(),
    moving.map((t) => t.grantId ?? null),
    // the wallet's tenant (every transfer's)
    moving[0]!.tenantId,
  ];
  if (guard) values.push(guard.currency);
  const result = await tx.query<EntryRow & { wallet_balance: bigint; threshold_count: number; limits: PeriodWithLimit[] | null }>({
    name: guard ? 'post_wallet_entries_guarded' : 'post_wallet_entries',
    text: statement(guard !== undefined),
    values,
  });
  const first = result.rows[0];
  if (!first) return null;
  // Refused by a spend limit: the caller's transaction rolls back, as for InsufficientFunds.
  const over = guard && first.limits ? firstOverLimit(first.limits, guard.requested) : null;
  if (over) throw new SpendLimitReached(over, guard!.currency, guard!.requested);
  if (first.threshold_count > 0)
    await evaluateThresholds(
      tx,
      { walletId, tenantId: moving[0]!.tenantId, currency: moving[0]!.currency },
      result.rows.map((r) => r.balance_after! - r.reserved_after!),
    );
  return { rows: result.rows, balance: first.wallet_balance };
}
