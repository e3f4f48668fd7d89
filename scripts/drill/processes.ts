import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { logOutput } from '../../bench/output-log.js';

/**
 * The drill's child processes: pg_autoctl (as the `postgres` user) and Tally's own CLI.
 * Each long-running one writes to a log file and runs in its own process group, so a
 * Ctrl-C at the terminal reaches the drill alone and the drill stops them in order.
 */

export interface RunAs {
  uid: number;
  gid: number;
}

export interface SpawnOptions {
  env: Record<string, string | undefined>;
  cwd?: string;
  runAs?: RunAs | null;
}

export interface LoggedProcess {
  name: string;
  pid: number;
  logPath: string;
  running(): boolean;
  /** the last lines it printed */
  tail(): string;
  exited: Promise<void>;
  /** `signal` to it, then SIGKILL to its whole process group if it has not exited within `graceMs` */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

export function startLogged(name: string, program: string, args: string[], logPath: string, options: SpawnOptions): LoggedProcess {
  const child = spawn(program, args, {
    env: options.env,
    cwd: options.cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.runAs ?? {}),
  });
  if (child.pid === undefined) throw new Error(`could not start ${name}: ${program} ${args.join(' ')}`);
  const output = logOutput(child, logPath);
  const exited = once(child, 'exit').then(() => output.end());
  const pid = child.pid;
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    name,
    pid,
    logPath,
    running,
    tail: output.tail,
    exited,
    async stop(signal = 'SIGTERM', graceMs = 20_000) {
      if (!running()) return exited;
      // The process alone first: pg_autoctl then stops its PostgreSQL in order (fast shutdown).
      child.kill(signal);
      const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

/** Runs a program to its end, collecting what it printed. */
export function runToEnd(program: string, args: string[], options: SpawnOptions): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { env: options.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'], ...(options.runAs ?? {}) });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

/** Polls a condition another process makes true (there is nothing to await across processes). */
export async function waitFor(
  what: string,
  condition: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 100,
  /** why waiting is pointless now (a process it waits for died), or null */
  abort: () => string | null = () => null,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reason = abort();
    if (reason) throw new Error(`${what}: ${reason}`);
    if (await condition().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
