import { resolve } from 'node:path';
import { createPool, type Pool, type PoolOptions } from './pool.js';
import { answers, runningEmbeddedUrl, startEmbedded, type EmbeddedServer } from '../dev-db/server.js';
import { newClient } from './host-selection.js';
import type { Config } from '../config/index.js';

/** What finding the database needs: DATABASE_URL, else the embedded server of TALLY_DATA_DIR. */
export type DatabaseSettings = Pick<Config, 'databaseUrl' | 'dataDir'>;

export interface Database {
  /** where the pool connects; changes when reconnect() follows the server elsewhere */
  url: string;
  pool: Pool;
  embedded: EmbeddedServer | null;
  /**
   * Where the database answers now, or null: DATABASE_URL; a server this process owns;
   * otherwise the embedded server running.json names, which moves to a new port when
   * the `serve` that owned it stops and another starts it.
   */
  locate(): Promise<string | null>;
  /** Ends the pool and opens a new one, with the same options, to `url`. */
  reconnect(url: string): Promise<void>;
  close(): Promise<void>;
}

export function dataDir(settings: Pick<Config, 'dataDir'>): string {
  return resolve(settings.dataDir);
}

/** DATABASE_URL when set; otherwise the shared embedded server of TALLY_DATA_DIR. */
export async function openDatabase(settings: DatabaseSettings, options: PoolOptions & { log?: (message: string) => void } = {}): Promise<Database> {
  const configured = settings.databaseUrl;
  const folder = dataDir(settings);
  const embedded = configured ? null : await startEmbedded({ dataDir: folder, log: options.log });
  const db: Database = {
    url: configured ?? embedded!.url,
    pool: createPool(configured ?? embedded!.url, options),
    embedded,
    locate: async () => {
      if (configured) return (await acceptsConnections(configured)) ? configured : null;
      if (embedded!.owner) return (await answers(embedded!.url)) ? embedded!.url : null;
      return await runningEmbeddedUrl(folder);
    },
    reconnect: async (url) => {
      await db.pool.end().catch(() => {});
      db.pool = createPool(url, options);
      db.url = url;
    },
    close: async () => {
      await db.pool.end().catch(() => {});
      await embedded?.stop();
    },
  };
  return db;
}

/**
 * Whether DATABASE_URL's database answers a query now; for a multi-host URL, whether one
 * of its hosts fits target_session_attrs (a worker waits for the new primary).
 */
async function acceptsConnections(url: string): Promise<boolean> {
  const client = newClient(url, { connectionTimeoutMillis: 2000, application_name: 'tally-locate' });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
