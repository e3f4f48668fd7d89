import { keyset, type PageRequest } from '../db/keyset.js';
import type { Queryable } from '../db/pool.js';
import type { GrantCategory, PostingType } from './posting/index.js';
import type { WalletBalances } from './accounts.js';
import { asWalletEntry, entryInstant, type EntryRow, type WalletEntry } from './entries.js';
import { buildStatement, type ChainEntry, type Statement } from './statement.js';

/**
 * The read side of a wallet's order (migrations/0009): its entries newest first, its
 * holdings at an instant, its statement over a range. Every read is over the index
 * (wallet_id, created_at, wallet_seq) or (wallet_id, wallet_seq): one lookup for a
 * balance at any instant, whatever the number of entries.
 */

export interface EntryFilters {
  entryType?: PostingType;
  /** RFC 3339 instants, compared by PostgreSQL to the microsecond */
  createdGte?: string;
  createdLt?: string;
  jobId?: string;
}

/** The wallet number of one of its entries; null when the id is not an entry of this wallet. */
export async function entrySequence(db: Queryable, walletId: string, entryId: string): Promise<bigint | null> {
  const result = await db.query<{ wallet_seq: bigint }>('select wallet_seq from ledger_entries where id = $1 and wallet_id = $2', [
    entryId,
    walletId,
  ]);
  return result.rows[0]?.wallet_seq ?? null;
}

/**
 * Up to `page.limit + 1` entries for pageOf, on the wallet's order: newest first, after or
 * before the cursor's entry (`cursorSequence`, its number: entrySequence). Keyset on the
 * order, so a page costs the same deep in a million entries as at the head.
 */
export async function listWalletEntries(
  db: Queryable,
  walletId: string,
  page: PageRequest,
  cursorSequence: bigint | null = null,
  filters: EntryFilters = {},
): Promise<WalletEntry[]> {
  const values: unknown[] = [walletId, page.limit + 1];
  const where = ['wallet_id = $1'];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  if (filters.entryType !== undefined) where.push(`entry_type = ${param(filters.entryType)}`);
  if (filters.createdGte !== undefined) where.push(`created_at >= ${param(filters.createdGte)}::timestamptz`);
  if (filters.createdLt !== undefined) where.push(`created_at < ${param(filters.createdLt)}::timestamptz`);
  if (filters.jobId !== undefined) where.push(`job_id = ${param(filters.jobId)}::uuid`);
  if (page.cursor && cursorSequence === null) throw new RangeError('a page after or before an entry needs its sequence number');
  const { where: after, order } = keyset('wallet_seq', page, values.length + 1);
  if (page.cursor) values.push(cursorSequence!.toString());
  const result = await db.query<EntryRow>(
    `select *, ${entryInstant()} as created_at_text from ledger_entries
     where ${where.join(' and ')} and ${after} order by ${order} limit $2`,
    values,
  );
  return result.rows.map((row) => asWalletEntry(row, walletId));
}

/** How far back a writer can still be in flight: past this, every entry of an instant has committed. */
const IN_FLIGHT_WINDOW = '5 minutes';

/**
 * An entry's instant is taken under its wallet's lock, a moment before its transaction
 * commits. For an instant that recent, wait until the wallet's lock is free once — every
 * writer that took an instant before now has then committed or rolled back — so the
 * answer for an instant in the past never changes afterwards. FOR SHARE waits for the
 * holder and is released at the end of this statement (the caller is not in a
 * transaction); older instants skip it (the row does not match, nothing is locked).
 */
async function waitForWriters(db: Queryable, walletId: string, instant: string): Promise<void> {
  await db.query({
    name: 'wallet_wait_for_writers',
    text: `select 1 from accounts where id = $1 and $2::timestamptz > clock_timestamp() - interval '${IN_FLIGHT_WINDOW}' for share`,
    values: [walletId, instant],
  });
}

/** True when the instant is later than the database's clock (an answer about it could still change). */
export async function isFuture(db: Queryable, instant: string): Promise<boolean> {
  const result = await db.query<{ future: boolean }>('select $1::timestamptz > clock_timestamp() as future', [instant]);
  return result.rows[0]!.future;
}

/**
 * The wallet's balance, reserved and available amounts at `instant` (inclusive): what its
 * newest entry at or before it says. One index lookup, whatever the number of entries.
 */
export async function balancesAt(db: Queryable, walletId: string, instant: string): Promise<WalletBalances & { sequence: bigint }> {
  await waitForWriters(db, walletId, instant);
  const result = await db.query<{ wallet_seq: bigint; balance_after: bigint; reserved_after: bigint }>({
    name: 'wallet_balances_at',
    text: `select wallet_seq, balance_after, reserved_after from ledger_entries
           where wallet_id = $1 and created_at <= $2::timestamptz
           order by created_at desc, wallet_seq desc limit 1`,
    values: [walletId, instant],
  });
  const row = result.rows[0];
  if (!row) return { balance: 0n, reserved: 0n, available: 0n, sequence: 0n };
  return {
    balance: row.balance_after,
    reserved: row.reserved_after,
    available: row.balance_after - row.reserved_after,
    sequence: row.wallet_seq,
  };
}

/** The most lines one statement holds; a longer range is asked for in parts (statements chain). */
export const MAX_STATEMENT_LINES = 10_000;

export class StatementTooLong extends Error {
  constructor() {
    super(`the range holds more than ${MAX_STATEMENT_LINES} entries`);
    this.name = 'StatementTooLong';
  }
}

/**
 * The statement of [from, to), read in one statement (one snapshot): the newest entry
 * before `from`, then the range's entries in the wallet's order. Built and checked by
 * the pure buildStatement.
 */
export async function readStatement(db: Queryable, walletId: string, from: string, to: string): Promise<Statement> {
  await waitForWriters(db, walletId, to);
  const result = await db.query<EntryRow & { part: 'before' | 'line'; grant_category: GrantCategory | null }>(
    `(select 'before' as part, e.*, ${entryInstant('e.created_at')} as created_at_text, null as grant_category from ledger_entries e
       where e.wallet_id = $1 and e.created_at < $2::timestamptz order by e.created_at desc, e.wallet_seq desc limit 1)
     union all
     (select 'line', e.*, ${entryInstant('e.created_at')}, g.category from ledger_entries e left join grants g on g.id = e.grant_id
       where e.wallet_id = $1 and e.created_at >= $2::timestamptz and e.created_at < $3::timestamptz
       order by e.wallet_seq limit $4)`,
    [walletId, from, to, MAX_STATEMENT_LINES + 1],
  );
  const before = result.rows.find((r) => r.part === 'before');
  const lines = result.rows.filter((r) => r.part === 'line').map((row) => chainEntry(asWalletEntry(row, walletId), row.grant_category));
  if (lines.length > MAX_STATEMENT_LINES) throw new StatementTooLong();
  // union all keeps each part's rows but promises no order between or within them
  lines.sort((a, b) => (a.sequence < b.sequence ? -1 : 1));
  return buildStatement({ from, to }, before ? { balance: before.balance_after!, reserved: before.reserved_after! } : null, lines);
}

function chainEntry(entry: WalletEntry, grantCategory: GrantCategory | null): ChainEntry {
  return {
    id: entry.id,
    sequence: entry.sequence,
    createdAt: entry.createdAt,
    entryType: entry.entryType,
    jobId: entry.jobId,
    settlementKey: entry.settlementKey,
    reference: entry.reference,
    grantId: entry.grantId,
    grantCategory,
    amount: entry.amount,
    change: entry.change,
    balanceAfter: entry.balanceAfter,
    reservedAfter: entry.reservedAfter,
  };
}
