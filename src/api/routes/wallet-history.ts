import { Type } from '@sinclair/typebox';
import {
  MAX_STATEMENT_LINES,
  StatementChainBroken,
  StatementTooLong,
  entrySequence,
  listWalletEntries,
  readStatement,
  type AccountRow,
  type Statement,
} from '../../funds/index.js';
import { POSTING_TYPES } from '../../funds/posting/index.js';
import { formatAmount } from '../../money/index.js';
import { isUuid } from '../../ids.js';
import { requireAccess } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { CategoryTotalsView, categoryTotalsView } from '../category-totals.js';
import { ApiError } from '../errors.js';
import { CreatedRangeFields, JobIdFilter, instantQuery } from '../list-filters.js';
import { literals } from '../list-views.js';
import { ListOf, ListQueryFields, pageOf, pageRequest } from '../pagination.js';
import { STATEMENT_CSV_COLUMNS, statementCsv } from '../statement-csv.js';
import { AmountString, IdParams, SignedAmountString, bearerAuth, errors } from '../schemas.js';
import { changeFields, changeView } from '../entry-changes.js';
import { entryView } from '../views.js';
import { EntryView, InstantText } from './wallet-schemas.js';
import { refuseFuture, visibleWallet } from './wallet-guards.js';

/**
 * A wallet's history: its entries, paged newest first, and its statement over a range
 * (JSON, or CSV with Accept: text/csv), each entry with the holdings after it.
 */

const EntriesQuery = Type.Object({
  ...ListQueryFields,
  cursor: Type.Optional(Type.String({ maxLength: 100, description: 'next_cursor of the previous page: the same as starting_after' })),
  entry_type: Type.Optional(literals(POSTING_TYPES)),
  ...JobIdFilter,
  ...CreatedRangeFields,
});
const StatementQuery = Type.Object({
  from: Type.String({ maxLength: 100, description: 'an RFC 3339 instant: the statement starts here (inclusive)' }),
  to: Type.String({
    maxLength: 100,
    description: 'an RFC 3339 instant after from, not in the future: the statement ends here (exclusive)',
  }),
});
const Holdings = Type.Object({ balance: SignedAmountString, reserved: AmountString, available: SignedAmountString });
const StatementView = Type.Object(
  {
    wallet_id: Type.String(),
    currency: Type.String(),
    from: InstantText,
    to: InstantText,
    opening: Holdings,
    lines: Type.Array(EntryView, {
      description: "every entry posted in [from, to), in the wallet's order, each with the holdings after it and what it changed",
    }),
    closing: Holdings,
    totals: Type.Array(
      Type.Object({
        entry_type: Type.String(),
        count: Type.Integer({ minimum: 1 }),
        amount: SignedAmountString,
        ...changeFields,
      }),
      {
        description:
          'per entry type present: how many, their amounts, and what they did to the balance, the reserved amount and balance − reserved',
      },
    ),
    totals_by_category: CategoryTotalsView,
  },
  {
    description:
      "opening + Σ the lines' changes = closing (balance, reserved, available = balance − reserved); the closing of [a, b) is the opening of [b, c)",
  },
);

function statementView(wallet: AccountRow, statement: Statement) {
  const holdings = (h: { balance: bigint; reserved: bigint }) => ({
    balance: formatAmount(h.balance),
    reserved: formatAmount(h.reserved),
    available: formatAmount(h.balance - h.reserved),
  });
  return {
    wallet_id: wallet.id,
    currency: wallet.currency,
    from: statement.from,
    to: statement.to,
    opening: holdings(statement.opening),
    lines: statement.lines.map(entryView),
    closing: holdings(statement.closing),
    totals: statement.totals.map((t) => ({
      entry_type: t.entryType,
      count: t.count,
      amount: formatAmount(t.amount),
      ...changeView({ balance: t.balanceChange, reserved: t.reservedChange }),
    })),
    totals_by_category: categoryTotalsView(statement.categoryTotals),
  };
}

/** CSV when the client asks for it (Accept: text/csv), else JSON; 406 for an Accept that takes neither. */
function statementFormat(accept: string | undefined): 'json' | 'csv' {
  if (!accept) return 'json';
  const types = accept.split(',').map((part) => part.split(';')[0]!.trim().toLowerCase());
  if (types.includes('text/csv')) return 'csv';
  if (types.some((t) => t === 'application/json' || t === 'application/*' || t === '*/*')) return 'json';
  throw new ApiError(406, 'not_acceptable', 'the statement is application/json or text/csv: send Accept: text/csv for CSV');
}

export function walletHistoryRoutes(app: ApiApp, { pool }: ApiContext): void {
  app.get(
    '/v1/wallets/:id/entries',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary:
          "The wallet's ledger entries, newest first, each with the wallet's holdings after it and what it changed (amount signed from the wallet's side; balance_change and available_change are what add up)",
        tags: ['wallets'],
        security: bearerAuth,
        params: IdParams,
        querystring: EntriesQuery,
        response: {
          200: ListOf(EntryView, {
            next_cursor: Type.Union([Type.String(), Type.Null()], {
              description: 'pass as cursor (or starting_after) for the next, older page; null when none is older',
            }),
          }),
          ...errors(400, 401, 404),
        },
      },
    },
    async (request) => {
      const query = request.query;
      if (query.cursor !== undefined && (query.starting_after !== undefined || query.ending_before !== undefined)) {
        throw new ApiError(
          400,
          'invalid_request',
          'send cursor or starting_after / ending_before, not both (cursor is the older name of starting_after)',
          'cursor',
        );
      }
      const page = pageRequest(query.cursor !== undefined ? { ...query, starting_after: query.cursor } : query, isUuid);
      const filters = {
        ...(query.entry_type !== undefined ? { entryType: query.entry_type } : {}),
        ...(query.job_id !== undefined ? { jobId: query.job_id } : {}),
        ...(query.created_gte !== undefined ? { createdGte: instantQuery(query.created_gte, 'created_gte') } : {}),
        ...(query.created_lt !== undefined ? { createdLt: instantQuery(query.created_lt, 'created_lt') } : {}),
      };
      const wallet = await visibleWallet(pool, request, request.params.id);
      let cursorSequence: bigint | null = null;
      if (page.cursor) {
        const param = query.cursor !== undefined ? 'cursor' : page.cursor.direction === 'after' ? 'starting_after' : 'ending_before';
        cursorSequence = await entrySequence(pool, wallet.id, page.cursor.id);
        if (cursorSequence === null) throw new ApiError(400, 'invalid_cursor', `${param} must be the id of an entry of this wallet`, param);
      }
      const { data, has_more } = pageOf(await listWalletEntries(pool, wallet.id, page, cursorSequence, filters), page);
      // Older entries follow the page when more were found going back, or when it was
      // reached going forward from an entry (which is older than all of it).
      const olderFollow = page.cursor?.direction === 'before' ? data.length > 0 : has_more;
      return { data: data.map(entryView), has_more, next_cursor: olderFollow ? data.at(-1)!.id : null };
    },
  );

  app.get(
    '/v1/wallets/:id/statement',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: `The wallet's statement over [from, to): opening, every entry with the running balance, closing, totals per type; CSV with Accept: text/csv (at most ${MAX_STATEMENT_LINES} entries; a longer range in parts, which chain)`,
        tags: ['wallets'],
        security: bearerAuth,
        params: IdParams,
        querystring: StatementQuery,
        response: {
          200: {
            description: 'the statement',
            content: {
              'application/json': { schema: StatementView },
              'text/csv': {
                schema: Type.String({
                  description: `RFC 4180, columns ${STATEMENT_CSV_COLUMNS.join(', ')}; rows opening, entry…, closing, total…`,
                }),
              },
            },
          },
          ...errors(400, 401, 404, 406),
        },
      },
    },
    async (request, reply) => {
      const from = instantQuery(request.query.from, 'from');
      const to = instantQuery(request.query.to, 'to');
      if (from >= to) throw new ApiError(400, 'invalid_request', 'to must be after from', 'to');
      const format = statementFormat(request.headers.accept);
      const wallet = await visibleWallet(pool, request, request.params.id);
      await refuseFuture(pool, to, 'to');
      let statement: Statement;
      try {
        statement = await readStatement(pool, wallet.id, from, to);
      } catch (error) {
        if (error instanceof StatementTooLong) {
          throw new ApiError(
            400,
            'statement_too_long',
            `the range holds more than ${MAX_STATEMENT_LINES} entries: ask for shorter ranges (statements chain: the closing of one is the opening of the next)`,
            'to',
          );
        }
        if (error instanceof StatementChainBroken) throw new ApiError(500, 'ledger_inconsistent', error.message);
        throw error;
      }
      if (format === 'csv') {
        return reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="statement-${wallet.id}-${from.slice(0, 10)}-${to.slice(0, 10)}.csv"`)
          .send(statementCsv(statement));
      }
      return statementView(wallet, statement);
    },
  );
}
