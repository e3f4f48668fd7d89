import { formatAmount } from '../money/index.js';
import type { Statement } from '../ledger/statement.js';

/**
 * A statement as CSV (RFC 4180: comma separated, CRLF line ends, a field quoted when it
 * holds a comma, quote or line break). One header, then one row per part, told apart by
 * the first column: `opening` (at `from`), one `entry` per line in the wallet's order,
 * `closing` (at `to`), and one `total` per entry type (`count` entries, their `amount`,
 * and what they did to the balance and the reserved amount). Amounts are the API's
 * decimal strings, signed from the wallet's side.
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
] as const;

type Column = (typeof STATEMENT_CSV_COLUMNS)[number];

function field(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

function row(values: Partial<Record<Column, string | null>>): string {
  return STATEMENT_CSV_COLUMNS.map((c) => field(values[c] ?? '')).join(',');
}

export function statementCsv(statement: Statement): string {
  const holdings = (h: { balance: bigint; reserved: bigint }) => ({
    balance_after: formatAmount(h.balance),
    reserved_after: formatAmount(h.reserved),
    available_after: formatAmount(h.balance - h.reserved),
  });
  const rows = [
    STATEMENT_CSV_COLUMNS.join(','),
    row({ row: 'opening', created_at: statement.from, ...holdings(statement.opening) }),
    ...statement.lines.map((line) =>
      row({
        row: 'entry',
        created_at: line.createdAt,
        entry_type: line.entryType,
        job_id: line.jobId,
        settlement_key: line.settlementKey,
        reference: line.reference,
        amount: formatAmount(line.amount),
        ...holdings({ balance: line.balanceAfter, reserved: line.reservedAfter }),
        sequence: line.sequence.toString(),
        entry_id: line.id,
      }),
    ),
    row({ row: 'closing', created_at: statement.to, ...holdings(statement.closing) }),
    ...statement.totals.map((t) =>
      row({
        row: 'total',
        entry_type: t.entryType,
        amount: formatAmount(t.amount),
        count: String(t.count),
        balance_change: formatAmount(t.balanceChange),
        reserved_change: formatAmount(t.reservedChange),
      }),
    ),
  ];
  return `${rows.join('\r\n')}\r\n`;
}
