import { Type, type TSchema } from '@sinclair/typebox';
import { ApiError } from './errors.js';
import type { PageRequest } from '../db/keyset.js';

export { keyset, pageOf, type PageRequest } from '../db/keyset.js';

/**
 * Lists the Stripe way: newest first, `limit` (default 20, at most 100), and a cursor
 * that is an object's id — `starting_after` (the page after it, older) or
 * `ending_before` (the page before it, newer). Keyset paging on a unique, time-ordered
 * key (UUIDv7 ids), so a page costs the same deep in a list as at its head and an object
 * inserted meanwhile never shifts a page.
 */

export const LIST_PAGE_DEFAULT = 20;
export const LIST_PAGE_MAX = 100;

export const ListQueryFields = {
  limit: Type.Optional(
    Type.String({ pattern: `^[0-9]{1,${String(LIST_PAGE_MAX).length}}$`, description: `a whole number from 1 to ${LIST_PAGE_MAX} (default ${LIST_PAGE_DEFAULT})` }),
  ),
  starting_after: Type.Optional(Type.String({ maxLength: 200, description: 'an object id: the page of objects after it (older)' })),
  ending_before: Type.Optional(Type.String({ maxLength: 200, description: 'an object id: the page of objects before it (newer)' })),
};

/** `{data, has_more}` of the given item schema. */
export function ListOf<T extends TSchema>(item: T, extra: Record<string, TSchema> = {}) {
  return Type.Object({ data: Type.Array(item), has_more: Type.Boolean({ description: 'more objects follow in this direction' }), ...extra });
}

/** Reads limit / starting_after / ending_before; `isValidId` says what an id of this list looks like. */
export function pageRequest(query: { limit?: string; starting_after?: string; ending_before?: string }, isValidId: (id: string) => boolean): PageRequest {
  const limit = query.limit === undefined ? LIST_PAGE_DEFAULT : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_PAGE_MAX) {
    throw new ApiError(400, 'invalid_request', `the query parameter limit must be a whole number from 1 to ${LIST_PAGE_MAX} (default ${LIST_PAGE_DEFAULT})`, 'limit');
  }
  if (query.starting_after !== undefined && query.ending_before !== undefined) {
    throw new ApiError(400, 'invalid_request', 'send starting_after or ending_before, not both', 'ending_before');
  }
  const [param, id, direction] =
    query.starting_after !== undefined ? (['starting_after', query.starting_after, 'after'] as const) : (['ending_before', query.ending_before, 'before'] as const);
  if (id === undefined) return { limit, cursor: null };
  if (!isValidId(id)) throw new ApiError(400, 'invalid_cursor', `${param} must be the id of an object of this list`, param);
  return { limit, cursor: { id, direction } };
}
