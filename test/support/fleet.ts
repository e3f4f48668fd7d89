import { afterAll } from 'vitest';
import type { Queryable } from '../../src/db/pool.js';
import { freePort, runTally, waitUntil, type TallyProcess } from './server.js';

/**
 * The tally processes of one chaos test file, each a real `./bin/tally` child: started
 * here, SIGKILLed by the test (or by a failpoint) at will, and all killed after the
 * file. An exit nobody asked for is a crash, and fails the scenario.
 */
export interface FleetProcess extends TallyProcess {
  name: string;
  /** set before the test kills it, so that its exit is not taken for a crash */
  killedOnPurpose: boolean;
}

/** What `tally worker` logs (at info level) once it has migrated and started claiming. */
const WORKER_STARTED = '"msg":"worker started"';

export class Fleet {
  private readonly processes = new Set<FleetProcess>();
  /** processes that died unasked once running (a worker after it started): always a failure */
  readonly crashes: string[] = [];
  /** workers that died unasked while starting (migrating under a loaded machine's timeouts) */
  readonly startupFailures: string[] = [];

  constructor(private readonly databaseUrl: string) {
    afterAll(async () => {
      await Promise.all([...this.processes].map((p) => p.stop('SIGKILL')));
    });
  }

  /**
   * `tally worker --concurrency N` with extra environment (TALLY_LEASE_SECONDS,
   * TALLY_FAILPOINTS, …). It logs at info level, so that workerStarted() can tell when
   * it has migrated and started claiming.
   */
  worker(options: { concurrency?: number; env?: Record<string, string>; name?: string; expectExit?: boolean } = {}): FleetProcess {
    return this.spawn(
      options.name ?? 'worker',
      ['worker', '--concurrency', String(options.concurrency ?? 2)],
      { LOG_LEVEL: 'info', ...options.env },
      options.expectExit ?? false,
    );
  }

  /** The worker has logged that it started: migrations done, claim loops running. */
  workerStarted(proc: FleetProcess): boolean {
    return this.alive(proc) && proc.output().includes(WORKER_STARTED);
  }

  /** `tally serve` on `port` (fresh when omitted); resolves once /healthz answers 200. */
  async server(options: { port?: number; workers?: number; env?: Record<string, string>; name?: string; expectExit?: boolean } = {}): Promise<FleetProcess & { url: string; port: number }> {
    const port = options.port ?? (await freePort());
    const proc = this.spawn(
      options.name ?? 'server',
      ['serve', '--port', String(port), '--workers', String(options.workers ?? 0)],
      { HOST: '127.0.0.1', ...options.env },
      options.expectExit ?? false,
    );
    const url = `http://127.0.0.1:${port}`;
    await waitUntil(async () => {
      if (proc.child.exitCode !== null || proc.child.signalCode !== null) throw new Error(`tally serve exited: ${proc.output()}`);
      const response = await fetch(`${url}/healthz`).catch(() => null);
      return response?.status === 200;
    }, 60_000);
    return Object.assign(proc, { url, port });
  }

  /** SIGKILL, and the exit it caused. */
  async kill(proc: FleetProcess): Promise<number | string> {
    proc.killedOnPurpose = true;
    proc.child.kill('SIGKILL');
    return proc.exited;
  }

  /** SIGTERM: a graceful stop (claims finished or released); resolves with the exit code. */
  async stop(proc: FleetProcess): Promise<number | string> {
    proc.killedOnPurpose = true;
    return proc.stop('SIGTERM');
  }

  /** The process's exit; fails with its output if it is still running after `timeoutMs` (a bound on failure only). */
  async exitOf(proc: FleetProcess, timeoutMs = 30_000): Promise<number | string> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${proc.name} still runs after ${timeoutMs} ms: ${proc.output().slice(-2000)}`)), timeoutMs);
    });
    try {
      return await Promise.race([proc.exited, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Died without being asked to (a crash, or a failed start). */
  diedUnasked(proc: FleetProcess): boolean {
    return !this.alive(proc) && !proc.killedOnPurpose;
  }

  alive(proc: FleetProcess): boolean {
    return proc.child.exitCode === null && proc.child.signalCode === null;
  }

  private spawn(name: string, args: string[], env: Record<string, string>, expectExit: boolean): FleetProcess {
    const proc: FleetProcess = Object.assign(runTally(args, { DATABASE_URL: this.databaseUrl, TALLY_POLL_INTERVAL_MS: '200', ...env }), {
      name,
      killedOnPurpose: expectExit,
    });
    this.processes.add(proc);
    void proc.exited.then((how) => {
      this.processes.delete(proc);
      if (proc.killedOnPurpose) return;
      const record = `${name} exited with ${how}: ${proc.output().slice(-2000)}`;
      const startingWorker = args[0] === 'worker' && !proc.output().includes(WORKER_STARTED);
      (startingWorker ? this.startupFailures : this.crashes).push(record);
    });
    return proc;
  }
}

/** Worker processes (their LISTEN connections) connected to the database `db` is in. */
export async function listeningWorkers(db: Queryable): Promise<number> {
  const result = await db.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'tally-worker-listen'`,
  );
  return result.rows[0]!.n;
}

/** Resolves once `count` workers listen for events, i.e. have migrated and started. */
export async function waitForWorkers(db: Queryable, count: number, timeoutMs = 30_000): Promise<void> {
  await waitUntil(async () => (await listeningWorkers(db)) >= count, timeoutMs);
}
