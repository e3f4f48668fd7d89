import pg from 'pg';
import { hostSelectingClient, selectorFor } from './host-selection.js';
import { countStatements } from './statement-count.js';

// bigint columns come back as strings by default; money is bigint, so parse to bigint.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => BigInt(value));

/**
 * Hot-path queries are named ({ name, text, values }): node-pg then prepares each once
 * per connection, and PostgreSQL stops parsing and planning it on every call — which
 * cost as much as executing it (bench/RESULTS.md, "Profile").
 */
export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that runs a query: the pool or a client inside a transaction. */
export type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export interface PoolOptions {
  max?: number;
  /** milliseconds; every statement of ours is short, a long one is a bug or a lock pile-up */
  statementTimeout?: number;
  /** milliseconds; a session stalled inside a transaction (a paused process) is cut off and its locks freed */
  idleInTransactionTimeout?: number;
  /** milliseconds the client waits for any answer; default statementTimeout + 5 s */
  queryTimeout?: number;
  applicationName?: string;
}

/**
 * A pool on `url`. A URL with several hosts or a target_session_attrs (libpq's syntax,
 * which node-postgres does not read) gets clients that connect to the host accepting
 * writes and follow it when it fails over (host-selection.ts); any other URL goes to
 * node-postgres unchanged, with no extra check or round trip.
 */
export function createPool(url: string, options: PoolOptions = {}): Pool {
  const selector = selectorFor(url);
  const pool = new pg.Pool({
    ...(selector
      ? { connectionString: selector.list.urlFor(selector.list.hosts[0]!), Client: hostSelectingClient(selector) }
      : { connectionString: url }),
    max: options.max ?? 10,
    statement_timeout: options.statementTimeout ?? 30_000,
    // The server enforces statement_timeout only while it is alive: a socket to a server
    // that vanished (a restart behind a proxy) would wait for ever. The client gives up a
    // little later and the connection is dropped (ConnectionLost: read back, retry).
    query_timeout: options.queryTimeout ?? (options.statementTimeout ?? 30_000) + 5_000,
    keepAlive: true,
    idle_in_transaction_session_timeout: options.idleInTransactionTimeout ?? 30_000,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    application_name: options.applicationName ?? 'tally',
  });
  // An idle client losing its connection must not crash the process; the pool drops it.
  pool.on('error', () => {});
  // Nor may a checked-out one: pg emits 'error' on the client when its connection ends
  // (a COMMIT cut off, a restarted server), and pg-pool listens only while the client
  // is idle. The failure still reaches the caller through the query that rejects
  // (ConnectionLost), and the client, no longer queryable, is discarded on release.
  pool.on('connect', (client) => {
    client.on('error', () => {});
    countStatements(client);
  });
  urls.set(pool, url);
  return pool;
}

const urls = new WeakMap<Pool, string>();

/** The DATABASE_URL a pool of createPool was made for (migrations open their own connection to it). */
export function urlOf(pool: Pool): string | undefined {
  return urls.get(pool);
}
