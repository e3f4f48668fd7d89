import type { Queryable } from '../../db/pool.js';
import type { Micros } from '../../funds/posting/index.js';
import { formatAmount } from '../../money/index.js';
import type { Check, CheckRow } from './check.js';
import { eachRow, inOneSnapshot } from './snapshot.js';

/**
 * A job's shares against its hold (CONTRACT.md "Credit grants": holds allocate): the
 * shares together hold what the hold holds (extensions included; a terminal event's
 * extension may hold a part against the debt, `holds.owed`, which counts as one more
 * share, captured as the job's version-0 debt draw); once the capture or release resolved it, what
 * they captured is what it posted and what they returned is what it voided; before, they
 * moved nothing. Reported, never repaired: which side is wrong — the hold, a share, or the
 * entries behind both — is for a person to find (grant_drift and projection_drift say
 * which grants and accounts disagree with their entries), and no keyed path rewrites a
 * share. Read through a cursor in one snapshot; one exception per job.
 */
export const allocationMismatch: Check = {
  class: 'allocation_mismatch',
  covers: 'hold_shares',
  find: (db) => inOneSnapshot(db, findAllocationMismatches),
};

export interface HoldAmounts {
  amount: Micros;
  /** null until resolved */
  posted: Micros | null;
  voided: Micros | null;
}

export interface ShareAmounts {
  held: Micros;
  captured: Micros;
  returned: Micros;
}

export type AllocationFault = 'held' | 'captured' | 'returned' | 'moved_while_open';

/** Where a hold's shares disagree with it (none: they agree). Pure. */
export function allocationFaults(hold: HoldAmounts, shares: readonly ShareAmounts[]): AllocationFault[] {
  const total = (pick: (s: ShareAmounts) => Micros) => shares.reduce((sum, s) => sum + pick(s), 0n);
  const faults: AllocationFault[] = [];
  if (total((s) => s.held) !== hold.amount) faults.push('held');
  if (hold.posted === null) {
    if (total((s) => s.captured) !== 0n || total((s) => s.returned) !== 0n) faults.push('moved_while_open');
  } else {
    if (total((s) => s.captured) !== hold.posted) faults.push('captured');
    if (total((s) => s.returned) !== hold.voided) faults.push('returned');
  }
  return faults;
}

interface HoldShareRow {
  job_id: string;
  owed: bigint;
  owed_captured: bigint;
  tenant_id: string;
  wallet_id: string;
  currency: string;
  amount: bigint;
  posted: bigint | null;
  voided: bigint | null;
  grant_id: string | null;
  held: bigint | null;
  captured: bigint | null;
  returned: bigint | null;
}

/**
 * The holds whose shares allocationFaults must add up, with their shares in allocation
 * order. A hold of one share that is the hold field by field (held = amount; before its
 * resolution nothing captured or returned, after it what was posted and voided) agrees
 * without adding anything, and so does a hold of nothing with no share: the statement
 * leaves those out, so the common hold — one grant — never leaves the database.
 */
const UNSETTLED_ALLOCATIONS = `
  select job_id, tenant_id, wallet_id, currency, amount, posted, voided, grant_id, held, captured, returned, owed,
         case when owed = 0 then 0
              else coalesce((select d.amount from adjustment_draws d where d.tenant_id = a.tenant_id and d.job_id = a.job_id and d.version = 0), 0)
         end as owed_captured
  from (
    select h.job_id, h.tenant_id, h.wallet_id, h.currency, h.amount, h.posted, h.voided, h.owed,
           s.grant_id, s.position, s.held, s.captured, s.returned, count(s.job_id) over (partition by h.job_id) as shares
    from holds h left join hold_shares s on s.job_id = h.job_id
  ) a
  -- (every comparison is of non-null values, so "not" never meets a null and drops a row)
  where not (shares = 1 and held = amount and owed = 0
             and ((posted is null and captured = 0 and returned = 0)
                  or (posted is not null and captured = posted and returned = voided)))
    and not (shares = 0 and amount = 0)
  order by job_id, position`;

async function findAllocationMismatches(tx: Queryable): Promise<CheckRow[]> {
  const found: CheckRow[] = [];
  let hold: HoldShareRow | null = null;
  let shares: (ShareAmounts & { grantId: string })[] = [];
  const finish = () => {
    if (!hold) return;
    const faults = allocationFaults(hold, shares);
    if (faults.length > 0) found.push(finding(hold, shares, faults));
  };
  await eachRow<HoldShareRow>(tx, 'hold_allocations', UNSETTLED_ALLOCATIONS, [], (row) => {
    if (hold?.job_id !== row.job_id) {
      finish();
      hold = row;
      shares = [];
      // the part held against the debt, as one more share (consumed last)
      if (row.owed > 0n) {
        const captured = row.posted === null ? 0n : row.owed_captured;
        shares.push({ grantId: 'debt', held: row.owed, captured, returned: row.posted === null ? 0n : row.owed - captured });
      }
    }
    if (row.grant_id !== null) shares.push({ grantId: row.grant_id, held: row.held!, captured: row.captured!, returned: row.returned! });
  });
  finish();
  return found;
}

function finding(hold: HoldShareRow, shares: readonly (ShareAmounts & { grantId: string })[], faults: AllocationFault[]): CheckRow {
  const maybe = (value: Micros | null) => (value === null ? null : formatAmount(value));
  return {
    key: hold.job_id,
    objects: { job_id: hold.job_id, wallet_id: hold.wallet_id, tenant_id: hold.tenant_id },
    detail: {
      currency: hold.currency,
      disagree: faults,
      hold: { amount: formatAmount(hold.amount), posted: maybe(hold.posted), voided: maybe(hold.voided) },
      shares: shares.map((s) => ({
        grant_id: s.grantId,
        held: formatAmount(s.held),
        captured: formatAmount(s.captured),
        returned: formatAmount(s.returned),
      })),
    },
  };
}
