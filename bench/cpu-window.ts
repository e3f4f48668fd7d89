import { loadavg } from 'node:os';
import { clockTicks, machineTicks, postgresCpu, postgresCpuDelta } from './procs.js';

/** CPU seconds in a measured window: PostgreSQL, the client side, everything else on the machine, and what there was. */
export interface WindowCpu {
  postgres: number | null;
  /** this process, plus any client process it ran (pgbench) */
  harness: number;
  otherProcesses: number | null;
  available: number | null;
  loadAverage: number;
}

/**
 * Starts counting CPU now; `end(extraHarness)` returns the window's seconds, where
 * extraHarness is the CPU of a client process this one ran (pgbench), which the
 * machine's busy time includes and "other processes" must not.
 */
export function cpuWindow(postmasterPid: number | null): { end(extraHarness?: number): WindowCpu } {
  const before = { postgres: postmasterPid ? postgresCpu(postmasterPid) : null, machine: machineTicks(), harness: process.cpuUsage() };
  return {
    end(extraHarness = 0) {
      const hz = clockTicks();
      const postgresAfter = postmasterPid ? postgresCpu(postmasterPid) : null;
      const machineAfter = machineTicks();
      const usage = process.cpuUsage(before.harness);
      const harness = (usage.user + usage.system) / 1e6 + extraHarness;
      let postgres: number | null = null;
      if (before.postgres && postgresAfter) {
        const delta = postgresCpuDelta(before.postgres, postgresAfter);
        postgres = [...delta.byPid.values()].reduce((a, b) => a + b, 0) + delta.exited + delta.postmaster;
      }
      const busy = before.machine && machineAfter ? (machineAfter.busy - before.machine.busy) / hz : null;
      return {
        postgres,
        harness,
        otherProcesses: busy !== null && postgres !== null ? Math.max(0, busy - postgres - harness) : null,
        available: before.machine && machineAfter ? (machineAfter.total - before.machine.total) / hz : null,
        loadAverage: loadavg()[0] ?? 0,
      };
    },
  };
}
