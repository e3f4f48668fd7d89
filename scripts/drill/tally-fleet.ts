import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { TALLY_BIN } from './app.js';
import type { Cleanup } from './cleanup.js';
import { freePort } from '../../bench/free-port.js';
import { runToEnd, startLogged, waitFor, type LoggedProcess } from './processes.js';

/**
 * Tally as an operator runs it against the formation: `tally migrate` once, then one
 * `tally serve` (the HTTP API, no in-process worker) and two `tally worker` processes,
 * every one given the formation's multi-host DATABASE_URL and left to find the primary
 * by itself — before, during and after the failover.
 */

export interface TallyFleet {
  baseUrl: string;
  adminToken: string;
  databaseUrl: string;
  processes: LoggedProcess[];
  /** processes that exited on their own: a failed drill */
  crashed(): string[];
}

export async function startFleet(databaseUrl: string, workDir: string, logDir: string, cleanup: Cleanup): Promise<TallyFleet> {
  const adminToken = randomBytes(24).toString('hex');
  await mkdir(join(workDir, 'tally'), { recursive: true });
  const env = {
    // The drill's settings and nothing inherited: a TALLY_* or DATABASE_URL of the shell it
    // runs in must not change what it measures. Everything it does not set is as deployed —
    // the claim lease (60 s) and the statement timeout derived from it (20 s) included.
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(TALLY_|DATABASE_URL$|PORT$|HOST$|LOG_LEVEL$)/.test(name))),
    DATABASE_URL: databaseUrl,
    HOST: '127.0.0.1',
    TALLY_ADMIN_TOKEN: adminToken,
    // Every serve of one database shares it (it seals stored idempotent answers).
    TALLY_SECRET_KEY: randomBytes(32).toString('hex'),
    TALLY_DATA_DIR: join(workDir, 'tally'),
    LOG_LEVEL: 'info',
  };
  const migrate = await runToEnd(process.execPath, [TALLY_BIN, 'migrate'], { env });
  if (migrate.code !== 0) throw new Error(`tally migrate failed:\n${migrate.output}`);

  const port = await freePort();
  const processes: LoggedProcess[] = [];
  const start = (name: string, args: string[]) => {
    const proc = startLogged(name, process.execPath, [TALLY_BIN, ...args], join(logDir, `tally-${name}.log`), { env });
    processes.push(proc);
    // SIGTERM: serve and worker stop gracefully (claims finished or released).
    cleanup.add(`stop tally ${name}`, () => proc.stop('SIGTERM', 15_000));
  };
  start('serve', ['serve', '--port', String(port), '--workers', '0']);
  start('worker-1', ['worker', '--concurrency', '2']);
  start('worker-2', ['worker', '--concurrency', '2']);
  const baseUrl = `http://127.0.0.1:${port}`;
  const crashed = () => processes.filter((p) => !p.running()).map((p) => `tally ${p.name} exited:\n${p.tail()}`);
  await waitFor(
    'tally serve answering /healthz with 200',
    async () => (await fetch(`${baseUrl}/healthz`)).status === 200,
    60_000,
    100,
    () => (crashed().length > 0 ? crashed().join('\n') : null),
  );
  return { baseUrl, adminToken, databaseUrl, processes, crashed };
}

/** Tally's standalone workers listening on a node (each holds one LISTEN connection there). */
export const LISTENING_WORKERS_SQL = `select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'tally-worker-listen'`;
