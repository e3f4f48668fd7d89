import type { Queryable } from '../db/pool.js';
import { newId } from '../ids.js';
import { formatAmount } from '../money/index.js';
import { enqueueMessages, type NewMessage } from '../outbound/enqueue.js';
import { keyset, type PageRequest } from '../db/keyset.js';

/**
 * Balance thresholds (migrations/0014): a wallet's amounts that `available` (balance −
 * reserved) should not fall below unnoticed. Evaluated right after the statement that
 * moves the wallet (wallet-entries.ts), under its lock, entry by entry in the wallet's
 * order (crossThresholds): an
 * armed threshold that an entry takes available below is disarmed and announced once
 * (wallet.balance_low, in the same transaction); an entry that lifts available back to
 * it or above re-arms it. So `armed` is always "available ≥ amount", and a crossing is
 * announced exactly once however many writers commit at once or in one batch.
 *
 * Created and deleted under the wallet row's lock too, with the count of the wallet's
 * thresholds kept on that row: created armed exactly when available (as the lock holder
 * left it) is at or above the amount; and a movement statement that waited for the lock
 * sees the count, and then the thresholds, as committed.
 */

/** Enough for a ladder of warnings, few enough that every movement can afford walking them. */
export const MAX_THRESHOLDS_PER_WALLET = 10;

export interface ThresholdRow {
  id: string;
  wallet_id: string;
  tenant_id: string;
  amount: bigint;
  armed: boolean;
  created_at: Date;
}

/** One downward crossing. */
export interface Crossing {
  thresholdId: string;
  threshold: bigint;
  available: bigint;
  /** which of the statement's entries crossed it (1 = the first) */
  position: number;
}

/**
 * Walks each threshold along `availableAfter` (what balance − reserved is after each of a
 * movement's entries, in the wallet's order): armed and below → a crossing, disarmed;
 * disarmed and at or above → re-armed. Pure; `rearmed` holds the thresholds whose `armed`
 * changed, with its new value.
 */
export function crossThresholds(
  thresholds: readonly Pick<ThresholdRow, 'id' | 'amount' | 'armed'>[],
  availableAfter: readonly bigint[],
): { crossings: Crossing[]; armed: Map<string, boolean> } {
  const crossings: Crossing[] = [];
  const armed = new Map<string, boolean>();
  for (const threshold of thresholds) {
    let now = threshold.armed;
    for (const [i, available] of availableAfter.entries()) {
      if (now && available < threshold.amount) {
        crossings.push({ thresholdId: threshold.id, threshold: threshold.amount, available, position: i + 1 });
        now = false;
      } else if (!now && available >= threshold.amount) {
        now = true;
      }
    }
    if (now !== threshold.armed) armed.set(threshold.id, now);
  }
  return { crossings, armed };
}

/**
 * The wallet's thresholds walked along a movement's entries, under the wallet's lock the
 * movement holds. READ COMMITTED: this statement's snapshot is taken after the lock, so a
 * threshold committed while the movement waited for it is seen. Writes `armed` only where
 * it changed, then announces the crossings.
 */
export async function evaluateThresholds(
  tx: Queryable,
  wallet: { walletId: string; tenantId: string; currency: string },
  availableAfter: readonly bigint[],
): Promise<void> {
  const thresholds = await tx.query<Pick<ThresholdRow, 'id' | 'amount' | 'armed'>>({
    name: 'wallet_thresholds_of',
    text: 'select id, amount, armed from wallet_thresholds where wallet_id = $1 order by amount desc, id',
    values: [wallet.walletId],
  });
  const { crossings, armed } = crossThresholds(
    thresholds.rows.map((t) => ({ ...t, amount: BigInt(t.amount) })),
    availableAfter,
  );
  if (armed.size > 0) {
    await tx.query({
      name: 'wallet_thresholds_arm',
      text: `update wallet_thresholds t set armed = a.armed from unnest($1::uuid[], $2::boolean[]) as a(id, armed)
             where t.wallet_id = $3 and t.id = a.id`,
      values: [[...armed.keys()], [...armed.values()], wallet.walletId],
    });
  }
  if (crossings.length > 0) await announceCrossings(tx, wallet, crossings);
}

export type NewThreshold = { created: ThresholdRow } | { refused: 'not_found' | 'full' | 'exists' };

/**
 * Adds a threshold to the wallet. The wallet's row is locked first (and read as its last
 * writer committed it); the statements after the lock see every committed threshold.
 * Armed when available is at or above the amount. Refused when the wallet is not the
 * tenant's (with a tenant), holds the most thresholds already, or has one at this amount.
 */
export async function insertThreshold(tx: Queryable, walletId: string, tenantId: string | null, amount: bigint): Promise<NewThreshold> {
  const locked = await tx.query<{ threshold_count: number; available: bigint }>(
    `select threshold_count, running_balance - running_reserved as available
     from accounts where id = $1 and kind = 'wallet' and ($2::uuid is null or tenant_id = $2) for no key update`,
    [walletId, tenantId],
  );
  const wallet = locked.rows[0];
  if (!wallet) return { refused: 'not_found' };
  if (wallet.threshold_count >= MAX_THRESHOLDS_PER_WALLET) return { refused: 'full' };
  const inserted = await tx.query<ThresholdRow>(
    `insert into wallet_thresholds (id, wallet_id, tenant_id, amount, armed)
     select $1, id, tenant_id, $3, $4 from accounts where id = $2
     on conflict on constraint wallet_thresholds_wallet_amount_key do nothing
     returning *`,
    [newId(), walletId, amount.toString(), wallet.available >= amount],
  );
  const created = inserted.rows[0];
  if (!created) return { refused: 'exists' };
  await tx.query('update accounts set threshold_count = threshold_count + 1 where id = $1', [walletId]);
  return { created };
}

/** The wallet's thresholds, newest first, keyset-paged on id. */
export async function listThresholds(db: Queryable, walletId: string, page: PageRequest): Promise<ThresholdRow[]> {
  const { where, order } = keyset('id', page, 2);
  const values: unknown[] = [walletId];
  if (page.cursor) values.push(page.cursor.id);
  const result = await db.query<ThresholdRow>(
    `select * from wallet_thresholds where wallet_id = $1 and ${where} order by ${order} limit ${page.limit + 1}`,
    values,
  );
  return result.rows;
}

/**
 * Deletes one threshold of the wallet: locks the wallet's row first, then (in a statement
 * whose snapshot follows the lock) deletes it and counts it off the row. Null: none such.
 */
export async function deleteThreshold(tx: Queryable, walletId: string, thresholdId: string): Promise<ThresholdRow | null> {
  await tx.query(`select 1 from accounts where id = $1 and kind = 'wallet' for no key update`, [walletId]);
  const result = await tx.query<ThresholdRow>(
    `with deleted as (delete from wallet_thresholds where id = $2 and wallet_id = $1 returning *),
          counted as (update accounts set threshold_count = threshold_count - (select count(*) from deleted)
                      where id = $1 and exists (select 1 from deleted))
     select * from deleted`,
    [walletId, thresholdId],
  );
  return result.rows[0] ?? null;
}

/**
 * The messages of a movement's crossings, in this transaction: one wallet.balance_low per
 * threshold crossed, in the order of the entries that crossed them (the higher threshold
 * first when one entry crossed several).
 */
async function announceCrossings(
  tx: Queryable,
  wallet: { walletId: string; tenantId: string; currency: string },
  crossings: Crossing[],
): Promise<void> {
  const ordered = [...crossings].sort((a, b) => a.position - b.position || compareDescending(a.threshold, b.threshold));
  const messages: NewMessage[] = ordered.map((c) => ({
    tenantId: wallet.tenantId,
    type: 'wallet.balance_low',
    data: {
      wallet_id: wallet.walletId,
      currency: wallet.currency,
      threshold: formatAmount(c.threshold),
      available: formatAmount(c.available),
    },
  }));
  await enqueueMessages(tx, messages);
}

function compareDescending(a: bigint, b: bigint): number {
  return a > b ? -1 : a < b ? 1 : 0;
}
