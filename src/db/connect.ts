import { resolve } from 'node:path';
import { createPool, type Pool, type PoolOptions } from './pool.js';
import { startEmbedded, type EmbeddedServer } from './embedded.js';

export interface Database {
  url: string;
  pool: Pool;
  embedded: EmbeddedServer | null;
  close(): Promise<void>;
}

export function dataDir(): string {
  return resolve(process.env.TALLY_DATA_DIR ?? './.tally');
}

/** DATABASE_URL when set; otherwise the shared embedded server of TALLY_DATA_DIR. */
export async function openDatabase(options: PoolOptions & { log?: (message: string) => void } = {}): Promise<Database> {
  const configured = process.env.DATABASE_URL;
  const embedded = configured ? null : await startEmbedded({ dataDir: dataDir(), log: options.log });
  const url = configured ?? embedded!.url;
  const pool = createPool(url, options);
  return {
    url,
    pool,
    embedded,
    close: async () => {
      await pool.end().catch(() => {});
      await embedded?.stop();
    },
  };
}
