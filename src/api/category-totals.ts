import { Type } from '@sinclair/typebox';
import { STATEMENT_CATEGORIES, type CategoryTotal } from '../funds/index.js';
import { changeFields, changeView } from './entry-changes.js';
import { literals } from './list-views.js';

/** A statement's totals by grant category (funds/statement.ts): the schema and the function that fills it. */

export const CategoryTotalsView = Type.Array(
  Type.Object({
    category: literals(STATEMENT_CATEGORIES),
    count: Type.Integer({ minimum: 0 }),
    ...changeFields,
  }),
  {
    description:
      "per category of the grant an entry names, always paid, promotional and unassigned (no grant: the wallet's debt, or an entry from before grants): how many entries, and what they did to the balance, the reserved amount and balance − reserved. A debt repayment counts in its grant's category, moving it down and unassigned up; the categories add up to the same changes as the per-type totals",
  },
);

export function categoryTotalsView(totals: readonly CategoryTotal[]) {
  return totals.map((t) => ({
    category: t.category,
    count: t.count,
    ...changeView({ balance: t.balanceChange, reserved: t.reservedChange }),
  }));
}
