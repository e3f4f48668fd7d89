import type { Queryable } from '../../db/pool.js';
import { replay, type Micros, type PostingType } from '../../funds/posting/index.js';
import { formatAmount } from '../../money/index.js';
import { amount, secondsSince, type Check, type CheckRow } from './check.js';
import { GrantReplay, entryPostings, sharePostings, unnamedPostings, type OpenShare } from './grant-history.js';
import { eachRow, inOneSnapshot } from './snapshot.js';

/**
 * Grants (CONTRACT.md "Credit grants"): each grant's amounts against its history, and
 * expiries the sweep should have posted. Neither is repaired by a value written here:
 * grant_drift needs a person (the grant row or an entry is wrong, and which one only the
 * story of the wallet tells — rewriting the row from the entries could hide a lost
 * posting); grant_expiry_overdue is repaired by the sweep's own keyed writer (repair.ts).
 */

/** A grant past expires_at by more than this with its expiry not posted is overdue (the sweep runs every 2 s). */
export const GRANT_EXPIRY_OVERDUE_SECONDS = 60;

/**
 * Each grant's remaining and held, stored, against what its entries say — its opening, the
 * posted movements naming it, the pending holds on it (and the holds from before grants,
 * whose reserve entries name no grant: grant-history.ts) — replayed by the posting
 * module, and its held against the open shares on it. Every grant, every entry that names
 * one: read through a cursor in one snapshot, one grant at a time. One exception per grant.
 */
export const grantDrift: Check = {
  class: 'grant_drift',
  covers: 'ledger_entries',
  find: (db) => inOneSnapshot(db, findGrantDrift),
};

interface HistoryRow {
  id: string;
  tenant_id: string;
  wallet_id: string;
  currency: string;
  remaining: bigint;
  held: bigint;
  opening: bigint;
  entry_type: PostingType | null;
  flags: 'pending' | 'post_pending' | 'void_pending' | 'posted' | null;
  amount: bigint | null;
  inbound: boolean | null;
  resolves_unnamed: boolean | null;
  /** how many entries of the grant are this one (0: the grant has none) */
  entries: number;
}

/**
 * Every grant with the entries naming it, grant by grant; for the capture or release of a
 * reserve entry, whether that reserve names no grant (a hold opened before grants). Equal
 * entries — same type, flags, amount and direction: the reservations of one price, say —
 * travel as one row with how many there are, so a ledger of millions of entries reaches
 * the replay in thousands of rows; the arithmetic is still replay()'s, entry by entry
 * (counting rows adds up no money).
 */
const GRANT_HISTORY = `
  with unnamed_reserves as materialized (
    -- the holds opened before grants, read once (ledger_entries_unnamed_reserves_idx) and
    -- joined as a set: probing the ledger once per entry was most of this check's time
    select id from ledger_entries where grant_id is null and flags = 'pending'
  )
  select g.id, g.tenant_id, g.wallet_id, g.currency, g.remaining, g.held, g.opening,
         e.entry_type, e.flags, e.amount, e.credit_account_id = g.wallet_id as inbound,
         p.id is not null as resolves_unnamed, count(e.id)::int as entries
  from grants g
  left join ledger_entries e on e.grant_id = g.id and e.tenant_id = g.tenant_id
  left join unnamed_reserves p on p.id = e.pending_id
  group by g.id, g.tenant_id, e.entry_type, e.flags, e.amount, e.credit_account_id = g.wallet_id, p.id is not null
  order by g.id`;

/** The shares of open holds, by grant: what each still holds, and whether its reserve entry names no grant. */
async function openShares(tx: Queryable): Promise<Map<string, OpenShare[]>> {
  const result = await tx.query<{ grant_id: string; held: bigint; captured: bigint; returned: bigint; unnamed_reserve: boolean }>(
    `select s.grant_id, s.held, s.captured, s.returned, (r.id is not null and r.grant_id is null) as unnamed_reserve
     from holds h join hold_shares s on s.job_id = h.job_id
     left join ledger_entries r on r.id = s.pending_entry_id
     where h.resolved_by is null`,
  );
  const byGrant = new Map<string, OpenShare[]>();
  for (const row of result.rows) {
    const shares = byGrant.get(row.grant_id) ?? byGrant.set(row.grant_id, []).get(row.grant_id)!;
    shares.push({ held: row.held, captured: row.captured, returned: row.returned, unnamedReserve: row.unnamed_reserve });
  }
  return byGrant;
}

async function findGrantDrift(tx: Queryable): Promise<CheckRow[]> {
  const shares = await openShares(tx);
  const found: CheckRow[] = [];
  let current: { row: HistoryRow; entries: GrantReplay } | null = null;
  const finish = () => {
    if (!current) return;
    const drift = compare(current.row, current.entries.result(), shares.get(current.row.id) ?? []);
    if (drift) found.push(drift);
  };
  await eachRow<HistoryRow>(tx, 'grant_history', GRANT_HISTORY, [], (row) => {
    if (current?.row.id !== row.id) {
      finish();
      current = { row, entries: new GrantReplay(row.id) };
      current.entries.add(unnamedPostings(row.id, row.opening, shares.get(row.id) ?? []));
    }
    if (row.entries === 0) return; // a grant no entry names yet
    current.entries.add(
      entryPostings(row.id, {
        entryType: row.entry_type!,
        flags: row.flags!,
        amount: row.amount!,
        inbound: row.inbound!,
        resolvesUnnamed: row.resolves_unnamed!,
      }),
      row.entries,
    );
  });
  finish();
  return found;
}

function compare(grant: HistoryRow, entries: { remaining: Micros; held: Micros }, shares: readonly OpenShare[]): CheckRow | null {
  const sharesHeld = replay(shares.flatMap((s) => sharePostings(grant.id, s))).grants.get(grant.id)?.held ?? 0n;
  if (grant.remaining === entries.remaining && grant.held === entries.held && grant.held === sharesHeld) return null;
  return {
    key: grant.id,
    objects: { grant_id: grant.id, wallet_id: grant.wallet_id, tenant_id: grant.tenant_id },
    detail: {
      currency: grant.currency,
      grant: { remaining: formatAmount(grant.remaining), held: formatAmount(grant.held) },
      entries: { remaining: formatAmount(entries.remaining), held: formatAmount(entries.held) },
      shares: { held: formatAmount(sharesHeld) },
    },
  };
}

/**
 * A grant past its expires_at by over a minute, with unheld remaining and its expiry not
 * posted: the sweep (duties/grant-duties.ts) has not run, or fails on it. A walk of
 * grants_expiry_due_idx. Repaired by expireGrant, the sweep's keyed writer (repair.ts).
 */
export const grantExpiryOverdue: Check = {
  class: 'grant_expiry_overdue',
  covers: 'grants',
  sql: `select g.id::text as key, jsonb_build_object('grant_id', g.id, 'wallet_id', g.wallet_id, 'tenant_id', g.tenant_id) as objects,
               jsonb_build_object('currency', g.currency, 'expires_at', g.expires_at, 'overdue_seconds', ${secondsSince('g.expires_at')},
                                  'remaining', ${amount('g.remaining')}, 'held', ${amount('g.held')}) as detail
        from grants g
        where g.expires_at is not null and g.expiry_posted_at is null
          and g.expires_at < now() - make_interval(secs => ${GRANT_EXPIRY_OVERDUE_SECONDS})
          and g.activated_at is not null and g.remaining > g.held`,
};
