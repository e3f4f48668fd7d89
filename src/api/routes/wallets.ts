import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { isUniqueViolationOn } from '../../db/errors.js';
import { withSavepoint } from '../../db/transaction.js';
import { isUuid } from '../../ids.js';
import { findWallet, insertWallet, type AccountRow } from '../../ledger/accounts.js';
import { CREDIT_ROUTE, creditWallet } from '../../ledger/credit.js';
import { StatementChainBroken, type Statement } from '../../ledger/statement.js';
import { ENTRY_TYPES } from '../../ledger/transfers.js';
import { MAX_STATEMENT_LINES, StatementTooLong, balancesAt, entrySequence, isFuture, listWalletEntries, readStatement } from '../../ledger/wallet-history.js';
import { listWalletPage } from '../../ledger/wallet-list.js';
import { parseAmount } from '../../money/index.js';
import type { Queryable } from '../../db/pool.js';
import { requireAccess, requireTenant, tenantScope } from '../auth.js';
import type { ApiApp, ApiContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { creditKeyOf, runIdempotent } from '../idempotency.js';
import { CreatedRangeFields, JobIdFilter, TenantIdFilter, instantQuery, listTenantOf } from '../list-filters.js';
import { literals } from '../list-views.js';
import { ListOf, ListQueryFields, pageOf, pageRequest } from '../pagination.js';
import { STATEMENT_CSV_COLUMNS, statementCsv } from '../statement-csv.js';
import { AmountString, Currency, IdParams, IdempotencyHeader, Metadata, RequiredIdempotencyHeader, SignedAmountString, bearerAuth, errors } from '../schemas.js';
import { entryView, walletView } from '../views.js';
import { formatAmount } from '../../money/index.js';

const WalletView = Type.Object({
  id: Type.String(),
  tenant_id: Type.String(),
  currency: Type.String(),
  metadata: Metadata,
  balance: SignedAmountString,
  reserved: AmountString,
  available: SignedAmountString,
  created_at: Type.String(),
});
const InstantText = Type.String({ description: 'RFC 3339 in UTC, to the microsecond' });
const WalletAtView = Type.Object(
  {
    ...WalletView.properties,
    at: InstantText,
    sequence: Type.Integer({ minimum: 0, description: "how many of the wallet's entries had been posted at that instant (0: none)" }),
  },
  { description: 'the wallet as of `at`: balance, reserved and available from its newest entry at or before that instant' },
);
const EntryView = Type.Object({
  id: Type.String(),
  entry_type: Type.String(),
  amount: SignedAmountString,
  settlement_key: Type.String(),
  job_id: Type.Union([Type.String(), Type.Null()]),
  reference: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ description: "the instant the entry took its place in the wallet's order (RFC 3339, UTC, to the microsecond)" }),
  sequence: Type.Integer({ minimum: 1, description: "its number in the wallet's order: 1, 2, 3 … in the order the entries were posted" }),
  balance_after: SignedAmountString,
  reserved_after: AmountString,
  available_after: SignedAmountString,
});
const Credit = Type.Object({
  amount: AmountString,
  reference: Type.Optional(Type.String({ maxLength: 500, description: 'e.g. the payment id' })),
});

const instantField = (description: string) => Type.Optional(Type.String({ maxLength: 100, description }));

const WalletQuery = Type.Object({
  at: instantField("an RFC 3339 instant, not in the future: the wallet's balance, reserved and available as of then (entries posted at or before it)"),
});
const WalletsQuery = Type.Object({
  ...ListQueryFields,
  currency: Type.Optional(Currency),
  ...TenantIdFilter,
});
const EntriesQuery = Type.Object({
  ...ListQueryFields,
  cursor: Type.Optional(Type.String({ maxLength: 100, description: 'next_cursor of the previous page: the same as starting_after' })),
  entry_type: Type.Optional(literals(ENTRY_TYPES)),
  ...JobIdFilter,
  ...CreatedRangeFields,
});
const StatementQuery = Type.Object({
  from: Type.String({ maxLength: 100, description: 'an RFC 3339 instant: the statement starts here (inclusive)' }),
  to: Type.String({ maxLength: 100, description: 'an RFC 3339 instant after from, not in the future: the statement ends here (exclusive)' }),
});
const Holdings = Type.Object({ balance: SignedAmountString, reserved: AmountString, available: SignedAmountString });
const StatementView = Type.Object(
  {
    wallet_id: Type.String(),
    currency: Type.String(),
    from: InstantText,
    to: InstantText,
    opening: Holdings,
    lines: Type.Array(EntryView, { description: "every entry posted in [from, to), in the wallet's order, each with the holdings after it" }),
    closing: Holdings,
    totals: Type.Array(
      Type.Object({
        entry_type: Type.String(),
        count: Type.Integer({ minimum: 1 }),
        amount: SignedAmountString,
        balance_change: SignedAmountString,
        reserved_change: SignedAmountString,
      }),
      { description: 'per entry type present: how many, their amounts, and what they did to the balance and the reserved amount' },
    ),
  },
  { description: 'opening + the lines = closing; the closing of [a, b) is the opening of [b, c)' },
);

/** Past instants only: an answer about the future could still change. */
async function refuseFuture(db: Queryable, instant: string, param: string): Promise<void> {
  if (await isFuture(db, instant)) throw new ApiError(400, 'invalid_request', `${param} is in the future: ask about an instant that has passed (up to now)`, param);
}

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
      balance_change: formatAmount(t.balanceChange),
      reserved_change: formatAmount(t.reservedChange),
    })),
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

/** A wallet the caller may see: its own (tenant), any (admin). Anything else is 404 alike. */
export async function visibleWallet(db: Queryable, request: FastifyRequest, id: string): Promise<AccountRow> {
  const wallet = isUuid(id) ? await findWallet(db, id, tenantScope(request) ?? undefined) : null;
  if (!wallet) throw notFound('wallet');
  return wallet;
}

export function walletRoutes(app: ApiApp, { pool }: ApiContext): void {
  app.post(
    '/v1/wallets',
    {
      onRequest: requireAccess('tenant', pool),
      schema: {
        summary: 'Open the tenant\'s wallet in a currency (one per currency)',
        tags: ['wallets'],
        security: bearerAuth,
        headers: IdempotencyHeader,
        body: Type.Object({ currency: Currency, metadata: Type.Optional(Metadata) }),
        response: { 201: WalletView, ...errors(400, 401, 403, 409) },
      },
    },
    async (request, reply) =>
      runIdempotent(pool, request, reply, { required: false }, async (tx) => {
        const tenantId = requireTenant(request);
        try {
          const row = await withSavepoint(tx, 'open_wallet', () => insertWallet(tx, tenantId, request.body.currency, request.body.metadata));
          return { status: 201, body: walletView(row) };
        } catch (error) {
          if (!isUniqueViolationOn(error, 'accounts_tenant_currency_kind_key')) throw error;
          const existing = await tx.query<{ id: string }>(
            `select id from accounts where tenant_id = $1 and currency = $2 and kind = 'wallet'`,
            [tenantId, request.body.currency],
          );
          throw new ApiError(409, 'wallet_exists', `this tenant already has a ${request.body.currency} wallet: ${existing.rows[0]?.id}`);
        }
      }),
  );

  app.get(
    '/v1/wallets',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: "Wallets, newest first (a tenant's own; the admin's all, or one tenant's); the cursor is a wallet's id",
        tags: ['wallets'],
        security: bearerAuth,
        querystring: WalletsQuery,
        response: { 200: ListOf(WalletView), ...errors(400, 401, 403) },
      },
    },
    async (request) => {
      const page = pageRequest(request.query, isUuid);
      const filter = { tenantId: listTenantOf(request, request.query.tenant_id), currency: request.query.currency ?? null };
      const { data, has_more } = pageOf(await listWalletPage(pool, filter, page), page);
      return { data: data.map(walletView), has_more };
    },
  );

  app.get(
    '/v1/wallets/:id',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: "A wallet's balance, reserved and available amounts, now or (with ?at=) as of an instant",
        tags: ['wallets'],
        security: bearerAuth,
        params: IdParams,
        querystring: WalletQuery,
        response: { 200: Type.Union([WalletAtView, WalletView]), ...errors(400, 401, 404) },
      },
    },
    async (request) => {
      const at = request.query.at === undefined ? null : instantQuery(request.query.at, 'at');
      const wallet = await visibleWallet(pool, request, request.params.id);
      if (at === null) return walletView(wallet);
      await refuseFuture(pool, at, 'at');
      const then = await balancesAt(pool, wallet.id, at);
      return {
        ...walletView(wallet),
        balance: formatAmount(then.balance),
        reserved: formatAmount(then.reserved),
        available: formatAmount(then.available),
        at,
        sequence: Number(then.sequence),
      };
    },
  );

  app.get(
    '/v1/wallets/:id/entries',
    {
      onRequest: requireAccess('tenant_or_admin', pool),
      schema: {
        summary: "The wallet's ledger entries, newest first, each with the wallet's holdings after it (amount signed from the wallet's side)",
        tags: ['wallets'],
        security: bearerAuth,
        params: IdParams,
        querystring: EntriesQuery,
        response: {
          200: ListOf(EntryView, {
            next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'pass as cursor (or starting_after) for the next, older page; null when none is older' }),
          }),
          ...errors(400, 401, 404),
        },
      },
    },
    async (request) => {
      const query = request.query;
      if (query.cursor !== undefined && (query.starting_after !== undefined || query.ending_before !== undefined)) {
        throw new ApiError(400, 'invalid_request', 'send cursor or starting_after / ending_before, not both (cursor is the older name of starting_after)', 'cursor');
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
              'text/csv': { schema: Type.String({ description: `RFC 4180, columns ${STATEMENT_CSV_COLUMNS.join(', ')}; rows opening, entry…, closing, total…` }) },
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
          throw new ApiError(400, 'statement_too_long', `the range holds more than ${MAX_STATEMENT_LINES} entries: ask for shorter ranges (statements chain: the closing of one is the opening of the next)`, 'to');
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

  app.post(
    CREDIT_ROUTE,
    {
      onRequest: requireAccess('admin', pool),
      schema: {
        summary: 'Top up a wallet after a payment (operator only). Idempotency-Key required: a credit is applied once, whenever retried',
        tags: ['admin'],
        security: bearerAuth,
        params: IdParams,
        headers: RequiredIdempotencyHeader,
        body: Credit,
        response: { 201: EntryView, ...errors(400, 401, 403, 404, 422) },
      },
    },
    async (request, reply) =>
      runIdempotent(pool, request, reply, { required: true }, async (tx) => {
        const amount = parseAmount(request.body.amount);
        const wallet = await visibleWallet(tx, request, request.params.id);
        const { entry } = await creditWallet(tx, {
          wallet,
          amount,
          creditKey: creditKeyOf(request, wallet.id),
          reference: request.body.reference ?? null,
        });
        return { status: 201, body: entryView(entry) };
      }),
  );
}
