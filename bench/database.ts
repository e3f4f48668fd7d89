import pg from 'pg';

// bigint columns (money) as bigint, as in Tally itself.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => BigInt(value));

export const BENCH_APPLICATION = 'tally-bench';

export function databaseUrl(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

export function benchPool(url: string, max = 4): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, application_name: BENCH_APPLICATION });
  pool.on('error', () => {});
  return pool;
}

/** A fresh, empty database for one scenario (dropped first if a run left it behind). */
export async function recreateDatabase(adminUrl: string, name: string): Promise<string> {
  if (!/^tally_bench_[a-z]+$/.test(name)) throw new Error(`refusing to recreate database ${name}`);
  const client = new pg.Client({ connectionString: adminUrl, application_name: BENCH_APPLICATION });
  await client.connect();
  try {
    await client.query(`drop database if exists ${name} with (force)`);
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  return databaseUrl(adminUrl, name);
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl, application_name: BENCH_APPLICATION });
  await client.connect();
  try {
    await client.query(`drop database if exists ${name} with (force)`);
  } finally {
    await client.end();
  }
}

export interface ServerInfo {
  version: string;
  settings: Record<string, string>;
  /** the postmaster's pid when PostgreSQL runs on this machine (CPU is read from /proc) */
  postmasterPid: number | null;
  statStatements: boolean;
}

const SETTINGS = ['fsync', 'synchronous_commit', 'wal_sync_method', 'shared_buffers', 'max_wal_size', 'commit_delay', 'max_connections'];

export async function serverInfo(pool: pg.Pool, localPid: (backendPid: number) => number | null): Promise<ServerInfo> {
  const version = (await pool.query<{ v: string }>("select current_setting('server_version') as v")).rows[0]!.v;
  const settings = Object.fromEntries(
    (await pool.query<{ name: string; setting: string; unit: string | null }>('select name, setting, unit from pg_settings where name = any($1)', [SETTINGS])).rows.map((r) => [
      r.name,
      r.unit && /^\d+$/.test(r.setting) && r.unit === '8kB' ? `${(Number(r.setting) * 8) / 1024} MB` : `${r.setting}${r.unit && r.unit !== '8kB' ? ` ${r.unit}` : ''}`,
    ]),
  );
  const backend = (await pool.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const preload = (await pool.query<{ v: string }>("select current_setting('shared_preload_libraries') as v")).rows[0]!.v;
  return { version, settings, postmasterPid: localPid(backend), statStatements: preload.includes('pg_stat_statements') };
}

/** CHECKPOINT before a measured phase, so one phase does not pay for another's dirty pages. */
export async function checkpoint(pool: pg.Pool): Promise<void> {
  await pool.query('checkpoint').catch(() => {});
}
