import { stringify } from 'csv-stringify/sync';
import { formatAmount } from '../money/index.js';
import { availableDelta } from '../funds/posting/index.js';
import type { Statement } from '../funds/index.js';

/**
 * A statement as CSV (RFC 4180: comma separated, CRLF line ends, a field quoted when it
 * holds a comma, quote or line break). One header, then one row per part, told apart by
 * the first column: `opening` (at `from`), one `entry` per line in the wallet's order,
 * `closing` (at `to`), and one `total` per entry type (`count` entries, their `amount`,
 * and what they did to the balance and the reserved amount). Amounts are the API's
 * decimal strings, signed from the wallet's side.
 *
 * An entry row also says what it did (`balance_change`, `reserved_change`, and
 * `available_change`, the change of balance − reserved): summed over the entry rows they
 * give closing − opening, which `amount` does not (a reservation moves what is available
 * and not the balance, a capture the reverse). `available_change` came after the other
 * columns and is appended at the end, so a reader of the older columns reads them as
 * before; the total rows fill it too. Sum a column over one kind of row: the entry rows
 * and the total rows each add up to the whole range.
 *
 * Written by csv-stringify with `escape_formulas`: a text cell that starts with `=`, `+`,
 * `-`, `@`, a tab or a carriage return (or a full-width `=`, `+`, `-`, `@`) gets a leading
 * `'`, so a spreadsheet shows it instead of running it — a reference is whatever the
 * operator typed, `=HYPERLINK(…)` included. A number is never escaped, and the amounts are
 * handed over as numbers: bigint micro-units, formatted by the cast (formatAmount writes
 * only an optional `-`, digits, a point and six digits), so `-0.000150` stays a negative
 * amount a spreadsheet can add up, and cannot be anything else.
 */

export const STATEMENT_CSV_COLUMNS = [
  'row',
  'created_at',
  'entry_type',
  'job_id',
  'settlement_key',
  'reference',
  'amount',
  'balance_after',
  'reserved_after',
  'available_after',
  'sequence',
  'entry_id',
  'count',
  'balance_change',
  'reserved_change',
  'available_change',
] as const;

/** One row: text, or an amount in micro-units (every bigint is one). */
type Row = Partial<Record<(typeof STATEMENT_CSV_COLUMNS)[number], string | bigint | null>>;

const changes = (change: { balance: bigint; reserved: bigint }) => ({
  balance_change: change.balance,
  reserved_change: change.reserved,
  available_change: availableDelta(change),
});

export function statementCsv(statement: Statement): string {
  const holdings = (h: { balance: bigint; reserved: bigint }) => ({
    balance_after: h.balance,
    reserved_after: h.reserved,
    available_after: h.balance - h.reserved,
  });
  const rows: Row[] = [
    { row: 'opening', created_at: statement.from, ...holdings(statement.opening) },
    ...statement.lines.map((line): Row => ({
      row: 'entry',
      created_at: line.createdAt,
      entry_type: line.entryType,
      job_id: line.jobId,
      settlement_key: line.settlementKey,
      reference: line.reference,
      amount: line.amount,
      ...holdings({ balance: line.balanceAfter, reserved: line.reservedAfter }),
      sequence: line.sequence.toString(),
      entry_id: line.id,
      ...changes(line.change),
    })),
    { row: 'closing', created_at: statement.to, ...holdings(statement.closing) },
    ...statement.totals.map((t): Row => ({
      row: 'total',
      entry_type: t.entryType,
      amount: t.amount,
      count: String(t.count),
      ...changes({ balance: t.balanceChange, reserved: t.reservedChange }),
    })),
  ];
  return stringify(rows, {
    header: true,
    columns: [...STATEMENT_CSV_COLUMNS],
    record_delimiter: 'windows',
    escape_formulas: true,
    cast: { bigint: (micros) => formatAmount(micros) },
  });
}
