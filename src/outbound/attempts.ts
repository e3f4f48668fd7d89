import type { Queryable } from '../db/pool.js';
import { keyset, type PageRequest } from '../db/keyset.js';

/** One attempt as the endpoint's log shows it: what was sent, what came back. */
export interface AttemptRow {
  id: string;
  delivery_id: bigint;
  message_id: string;
  type: string;
  started_at: Date;
  status: number | null;
  latency_ms: number;
  response_excerpt: string | null;
  error: string | null;
}

/** One page of an endpoint's attempts, newest first (UUIDv7 ids), `limit + 1` rows for pageOf. */
export async function listAttempts(db: Queryable, endpointId: string, page: PageRequest): Promise<AttemptRow[]> {
  const values: unknown[] = [page.limit + 1, endpointId];
  const { where, order } = keyset('a.id', page, values.length + 1);
  if (page.cursor) values.push(page.cursor.id);
  const result = await db.query<AttemptRow>(
    `select a.id, a.delivery_id, d.message_id, m.type, a.started_at, a.status, a.latency_ms, a.response_excerpt, a.error
     from outbound_attempts a
     join outbound_deliveries d on d.id = a.delivery_id
     join outbound_messages m on m.id = d.message_id
     where a.endpoint_id = $2 and ${where}
     order by ${order}
     limit $1`,
    values,
  );
  return result.rows;
}
