import type { FastifyRequest } from 'fastify';
import type { Queryable } from '../../db/pool.js';
import { isUuid } from '../../ids.js';
import { findWallet, isFuture, type AccountRow } from '../../funds/index.js';
import { tenantScope } from '../auth.js';
import { ApiError, notFound } from '../errors.js';

/** A wallet the caller may see: its own (tenant), any (admin). Anything else is 404 alike. */
export async function visibleWallet(db: Queryable, request: FastifyRequest, id: string): Promise<AccountRow> {
  const wallet = isUuid(id) ? await findWallet(db, id, tenantScope(request) ?? undefined) : null;
  if (!wallet) throw notFound('wallet');
  return wallet;
}

/** Past instants only: an answer about the future could still change. */
export async function refuseFuture(db: Queryable, instant: string, param: string): Promise<void> {
  if (await isFuture(db, instant))
    throw new ApiError(400, 'invalid_request', `${param} is in the future: ask about an instant that has passed (up to now)`, param);
}
