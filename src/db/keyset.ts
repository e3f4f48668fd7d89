/**
 * Keyset paging in SQL, for the list read models of every domain folder (api/pagination.ts
 * reads the query string into a PageRequest and re-exports these; domain folders may not
 * import api/). Newest first on a unique key, so a page costs the same deep in a list as
 * at its head and an object inserted meanwhile never shifts a page.
 */

export interface PageRequest {
  limit: number;
  /** the cursor id and which way it points */
  cursor: { id: string; direction: 'after' | 'before' } | null;
}

/**
 * The keyset condition and order for a page, on `column` (unique, newest = greatest),
 * with the cursor as parameter `$n`. Fetch `limit + 1` rows, then give them to pageOf.
 *
 * With several columns (a key that is unique only together, e.g. `received_at, job_id,
 * seq`), they are compared as one row against parameters `$n, $n+1, …`: the caller passes
 * the cursor object's values of those columns, in that order, instead of its id.
 */
export function keyset(column: string | readonly string[], page: PageRequest, parameterIndex: number): { where: string; order: string } {
  const columns = typeof column === 'string' ? [column] : column;
  const row = (list: readonly string[]) => (list.length === 1 ? list[0]! : `(${list.join(', ')})`);
  const order = (direction: 'asc' | 'desc') => columns.map((c) => `${c} ${direction}`).join(', ');
  if (!page.cursor) return { where: 'true', order: order('desc') };
  const parameters = row(columns.map((_, i) => `$${parameterIndex + i}`));
  return page.cursor.direction === 'after'
    ? { where: `${row(columns)} < ${parameters}`, order: order('desc') }
    : { where: `${row(columns)} > ${parameters}`, order: order('asc') };
}

/** The page's objects, newest first, and whether more follow in the direction asked. */
export function pageOf<T>(rows: T[], page: PageRequest): { data: T[]; has_more: boolean } {
  const has_more = rows.length > page.limit;
  const data = rows.slice(0, page.limit);
  if (page.cursor?.direction === 'before') data.reverse();
  return { data, has_more };
}
