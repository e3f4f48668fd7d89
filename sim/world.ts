import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';

/**
 * The real processes of a run: one PostgreSQL (embedded by default, DATABASE_URL honoured),
 * `tally serve --workers 0` and K standalone `tally worker`s, each restartable after a
 * SIGKILL. The simulation drives them from outside, as clients and providers do.
 */

pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => BigInt(value));

/** The package root, from dist/sim/ (compiled). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const ADMIN_TOKEN = 'sim-admin-token-0123456789abcdef';
const APPLICATION = 'tally-sim';

export interface Database {
  url: string;
  pool: pg.Pool;
  stop(): Promise<void>;
}

/** An empty database for the run: on DATABASE_URL's server, or on an embedded one in `dataDir`. */
export async function startDatabase(dataDir: string, name: string): Promise<Database> {
  let adminUrl = process.env.DATABASE_URL;
  let embedded: { url: string; stop(): Promise<void> } | null = null;
  if (!adminUrl) {
    const module = (await import(pathToFileURL(join(ROOT, 'dist', 'dev-db', 'server.js')).href)) as {
      startEmbedded(options: { dataDir: string; persistent?: boolean }): Promise<{ url: string; stop(): Promise<void> }>;
    };
    embedded = await module.startEmbedded({ dataDir, persistent: false });
    adminUrl = embedded.url;
  }
  if (!/^tally_sim_[a-z0-9_]+$/.test(name)) throw new Error(`refusing to recreate database ${name}`);
  const admin = new pg.Client({ connectionString: adminUrl, application_name: APPLICATION });
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4, application_name: APPLICATION });
  pool.on('error', () => {});
  return {
    url: url.toString(),
    pool,
    async stop() {
      await pool.end();
      await embedded?.stop();
    },
  };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A `tally` child the run may kill and start again; `bin` is dist/cli/main.js of the build under test. */
export class TallyProcess {
  private child: ChildProcess | null = null;
  private output: string[] = [];
  kills = 0;

  constructor(
    readonly name: string,
    private readonly bin: string,
    private readonly args: string[],
    private readonly env: Record<string, string>,
  ) {}

  /** when it was last started (ms since the epoch) */
  startedAt = 0;

  start(extraEnv: Record<string, string> = {}): void {
    this.startedAt = Date.now();
    this.stopping = false;
    const child = spawn(process.execPath, [this.bin, ...this.args], {
      env: { ...process.env, ...this.env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => {
      this.output.push(chunk.toString());
      if (this.output.length > 200) this.output.splice(0, this.output.length - 200);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    this.child = child;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** whether it died on its own (a failpoint's SIGKILL, a crash), and how */
  get exit(): string | null {
    if (!this.child || this.running) return null;
    return this.child.signalCode ?? `code ${this.child.exitCode}`;
  }

  /** set while the run itself stops or kills the process: any other exit is the process's own */
  private stopping = false;

  /** An exit the run did not cause (a crash; a failpoint's SIGKILL is one the run asked for), with the output before it; null if none. */
  ownExit(): string | null {
    if (this.stopping || this.running || this.child === null) return null;
    return `${this.name} exited on its own (${this.exit}):\n${this.tail()}`;
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    this.stopping = true;
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
    if (signal === 'SIGKILL') this.kills++;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    this.stopping = true;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }

  tail(): string {
    return this.output.join('').split('\n').slice(-30).join('\n');
  }
}

/** The environment every Tally process of the run shares: short leases and intervals, so that a killed worker's claims come back soon. */
export function tallyEnv(databaseUrl: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    TALLY_ADMIN_TOKEN: ADMIN_TOKEN,
    TALLY_SECRET_KEY: '5a1e0f3c9b7d2e4a6c8b0d1f3e5a7c9b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c',
    TALLY_RECONCILE_INTERVAL_SECONDS: '0',
    TALLY_LEASE_SECONDS: '3',
    TALLY_POLL_INTERVAL_MS: '50',
    // a refused capture (the dead_letter op) is dead after 0.5 + 1 + 2 + 4 + 8 s of retries
    TALLY_MAX_ATTEMPTS: '6',
    // a held usage fetch (the usage_fetch_hang fault) times out after 3 s, not 10
    TALLY_USAGE_FETCH_TIMEOUT_MS: '3000',
    LOG_LEVEL: 'warn',
  };
}
