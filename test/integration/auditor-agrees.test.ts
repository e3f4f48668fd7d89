import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  POSTING_FLAGS,
  POSTING_TYPES,
  projectionDelta,
  spendDelta,
  walletDelta,
  type PostingFlags,
  type PostingType,
} from '../../src/funds/posting/index.js';
import { AUDITOR_PENDING_CHANGE, AUDITOR_POSTED_CHANGE } from '../../src/funds/projection.js';
import { AUDITOR_BALANCE_CHANGE, AUDITOR_RESERVED_CHANGE } from '../../src/reconcile/checks/running-balances.js';
import { AUDITOR_SPEND_NOW, AUDITOR_SPEND_OF_HOLD } from '../../src/reconcile/checks/spend-periods.js';
import { freshDatabase } from '../support/database.js';

/**
 * The reconciliation keeps its own SQL reading of what an entry does (the auditor,
 * src/reconcile/checks/running-balances.ts and spend-periods.ts), apart from the posting
 * module's (walletDelta, spendDelta) on purpose. They must agree on every entry type ×
 * every flag × the wallet on the debited or the credited side (both sides: a debt
 * repayment, a grant paying the wallet's debt), each combination the schema accepts,
 * with random amounts, evaluated by PostgreSQL.
 */

const db = await freshDatabase({ max: 2 });

const SIDES = ['debit', 'credit', 'both'] as const;
const WALLET = '00000000-0000-4000-8000-000000000001';
const OTHER = '00000000-0000-4000-8000-000000000002';

interface Shape {
  type: PostingType;
  flags: PostingFlags;
  side: (typeof SIDES)[number];
  amount: bigint;
}

const accountsOf = (shape: Shape) => ({
  debitAccountId: shape.side === 'credit' ? OTHER : WALLET,
  creditAccountId: shape.side === 'debit' ? OTHER : WALLET,
});

async function auditorSays(shapes: Shape[]): Promise<{ balance: bigint; reserved: bigint; now: bigint; ofHold: bigint }[]> {
  const result = await db.pool.query<{ balance: bigint; reserved: bigint; now: bigint; of_hold: bigint }>(
    `select (${AUDITOR_BALANCE_CHANGE})::bigint as balance, (${AUDITOR_RESERVED_CHANGE})::bigint as reserved,
            (${AUDITOR_SPEND_NOW})::bigint as now, (${AUDITOR_SPEND_OF_HOLD})::bigint as of_hold
     from unnest($1::text[], $2::text[], $3::uuid[], $4::uuid[], $5::bigint[], $6::uuid[]) with ordinality
          as e(entry_type, flags, debit_account_id, credit_account_id, amount, wallet_id, n)
     order by e.n`,
    [
      shapes.map((s) => s.type),
      shapes.map((s) => s.flags),
      shapes.map((s) => accountsOf(s).debitAccountId),
      shapes.map((s) => accountsOf(s).creditAccountId),
      shapes.map((s) => s.amount.toString()),
      shapes.map(() => WALLET),
    ],
  );
  return result.rows.map((r) => ({ balance: r.balance, reserved: r.reserved, now: r.now, ofHold: r.of_hold }));
}

describe('the auditor and the kernel', () => {
  it("agree on what every flag does to an account's pending and posted columns", async () => {
    const result = await db.pool.query<{ flags: PostingFlags; pending: bigint; posted: bigint }>(
      `select flags, (${AUDITOR_PENDING_CHANGE})::bigint as pending, (${AUDITOR_POSTED_CHANGE})::bigint as posted
       from unnest($1::text[]) as e(flags), (select 7::bigint as amount) a`,
      [POSTING_FLAGS],
    );
    expect(result.rows).toHaveLength(POSTING_FLAGS.length);
    for (const row of result.rows) {
      const kernel = projectionDelta({ flags: row.flags, amount: 7n });
      // the debited side's columns and the credited side's move alike (the auditor sums each side with the same two)
      expect({ pending: row.pending, posted: row.posted }, row.flags).toEqual({
        pending: kernel.debit.debitsPending,
        posted: kernel.debit.debitsPosted,
      });
      expect({ pending: row.pending, posted: row.posted }, row.flags).toEqual({
        pending: kernel.credit.creditsPending,
        posted: kernel.credit.creditsPosted,
      });
    }
  });

  it('agree on what every entry type × flags × side does to the wallet and to the spend', async () => {
    // The wallet on both sides only for a debt repayment (the schema's ledger_entries_distinct_accounts).
    const every: Shape[] = POSTING_TYPES.flatMap((type) =>
      POSTING_FLAGS.flatMap((flags) =>
        SIDES.filter((side) => (side === 'both') === (type === 'debt_repayment')).map((side) => ({ type, flags, side, amount: 1n })),
      ),
    );
    expect(every).toHaveLength((POSTING_TYPES.length - 1) * POSTING_FLAGS.length * 2 + POSTING_FLAGS.length);
    await fc.assert(
      fc.asyncProperty(fc.bigInt({ min: 1n, max: 10n ** 18n }), async (amount) => {
        const shapes = every.map((s) => ({ ...s, amount }));
        const auditor = await auditorSays(shapes);
        for (const [i, shape] of shapes.entries()) {
          const entry = { flags: shape.flags, amount, entryType: shape.type, ...accountsOf(shape) };
          const kernel = { ...walletDelta(entry, WALLET), ...spendDelta(entry, WALLET) };
          expect(auditor[i], `${shape.type} ${shape.flags} wallet on the ${shape.side} side`).toEqual(kernel);
        }
      }),
      { numRuns: 20 },
    );
  });
});
