import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { TALLY_BIN } from './app.js';
import { logOutput } from './output-log.js';
export { freePort } from './free-port.js';
import { peakRssBytes, procStat, runQueueWaitNs } from './procs.js';

/** A `./bin/tally` child: the same built CLI an operator runs, as a real process. */
export interface TallyProcess {
  name: string;
  pid: number;
  child: ChildProcess;
  /** the last lines it printed (for a failure message) */
  tail(): string;
  /** CPU ticks (utime + stime) so far */
  cpuTicks(): number | null;
  /** ns runnable but waiting for a CPU, so far */
  runQueueWaitNs(): number | null;
  peakRssBytes(): number | null;
  stop(): Promise<void>;
}

const STOP_GRACE_MS = 20_000;

/** Children still running: stopped if the harness exits early (an error, Ctrl-C). */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGTERM');
});

export function runTally(name: string, args: string[], env: Record<string, string>, logPath: string): TallyProcess {
  // node itself, not the shebang: the pid we measure is the Tally process. BENCH_NODE_FLAGS
  // adds node flags NODE_OPTIONS refuses (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
  const nodeFlags = (process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter((flag) => flag !== '');
  const child = spawn(process.execPath, [...nodeFlags, TALLY_BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`could not start tally ${args.join(' ')}`);
  const output = logOutput(child, logPath);
  live.add(child);
  const exited = once(child, 'exit').finally(() => live.delete(child));
  const pid = child.pid;
  return {
    name,
    pid,
    child,
    tail: output.tail,
    cpuTicks: () => procStat(pid)?.ticks ?? null,
    runQueueWaitNs: () => runQueueWaitNs(pid),
    peakRssBytes: () => peakRssBytes(pid),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      await output.end();
    },
  };
}


/** Polls a condition that another process makes true (nothing to await across processes). */
export async function waitFor(what: string, condition: () => Promise<boolean>, timeoutMs: number, abort?: () => string | null): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reason = abort?.();
    if (reason) throw new Error(`${what}: ${reason}`);
    if (await condition().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Why a child is no longer usable, if it exited. */
export function exitReason(proc: TallyProcess): string | null {
  const { exitCode, signalCode } = proc.child;
  if (exitCode === null && signalCode === null) return null;
  return `tally ${proc.name} exited (${exitCode ?? signalCode}):\n${proc.tail()}`;
}
