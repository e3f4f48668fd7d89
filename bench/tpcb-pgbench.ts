import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { cpuWindow } from './cpu-window.js';
import { percentiles } from './load-protocol.js';
import { clockTicks, procStat } from './procs.js';
import { TPCB_SCALE, type TpcbResult, type TpcbRun } from './tpcb-spec.js';

/** How often pgbench's CPU is read from /proc while it runs (its last reading is kept). */
const CPU_SAMPLE_MS = 100;

interface Finished {
  stdout: string;
  stderr: string;
  /** CPU seconds of the pgbench process, as last read before it exited */
  cpuSeconds: number;
}

async function pgbench(binary: string, args: string[], onStderrLine?: (line: string) => void): Promise<Finished> {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PGAPPNAME: 'tally-bench-pgbench' } });
  let stdout = '';
  let stderr = '';
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) onStderrLine?.(line);
  });
  let ticks = 0;
  const sample = setInterval(() => {
    const stat = child.pid === undefined ? null : procStat(child.pid);
    if (stat) ticks = stat.ticks;
  }, CPU_SAMPLE_MS);
  const stop = () => child.kill('SIGTERM');
  process.once('exit', stop);
  try {
    const [code] = (await once(child, 'close')) as [number | null];
    if (code !== 0) throw new Error(`${binary} ${args.filter((a) => !a.includes('://')).join(' ')} exited with ${code}:\n${stderr.slice(-2000)}`);
  } finally {
    clearInterval(sample);
    process.removeListener('exit', stop);
  }
  return { stdout, stderr, cpuSeconds: ticks / clockTicks() };
}

function field(text: string, pattern: RegExp, what: string): number {
  const match = pattern.exec(text);
  if (!match) throw new Error(`pgbench's output has no ${what}:\n${text}`);
  return Number(match[1]);
}

export interface PgbenchSummary {
  perSecond: number;
  transactions: number;
  failed: number;
  meanLatencyMs: number;
}

/** The summary pgbench prints on stdout at the end of a run. */
export function parsePgbenchSummary(out: string): PgbenchSummary {
  return {
    // pgbench 14+: "(without initial connection time)"; before: "(excluding connections establishing)".
    perSecond: field(out, /^tps = ([\d.]+) \((?:without initial connection time|excluding connections establishing)\)/m, 'tps'),
    // "N" with -T; "N/M" with -t
    transactions: field(out, /^number of transactions actually processed: (\d+)/m, 'transaction count'),
    // pgbench 15+ only; before, a failed transaction stopped its client
    failed: Number(/^number of failed transactions: (\d+)/m.exec(out)?.[1] ?? 0),
    meanLatencyMs: field(out, /^latency average = ([\d.]+) ms/m, 'latency average'),
  };
}

/**
 * The real thing: `pgbench -i -s 1`, a CHECKPOINT, then `pgbench -c C -j J -T S` with the
 * built-in tpcb-like script in simple query mode, logging every transaction (-l) for the
 * percentiles. pgbench vacuums the branches and tellers and empties the history first,
 * as it always does.
 */
export async function runPgbench(binary: string, run: TpcbRun): Promise<TpcbResult> {
  const version = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout.trim();
  run.onProgress?.(`initialising with ${binary} -i -s ${TPCB_SCALE}`);
  await pgbench(binary, ['-i', '-s', String(TPCB_SCALE), '-q', run.url]);
  await run.checkpoint();
  const logDir = join(run.workDir, 'pgbench');
  await mkdir(logDir, { recursive: true });
  const threads = Math.max(1, Math.min(availableParallelism(), run.clients));
  const window = cpuWindow(run.postmasterPid);
  const result = await pgbench(
    binary,
    ['-c', String(run.clients), '-j', String(threads), '-T', String(run.seconds), '-P', '1', '-l', `--log-prefix=${join(logDir, 'tx')}`, run.url],
    (line) => {
      if (line.startsWith('progress:')) run.onProgress?.(line.replace(/^progress:\s*/, ''));
    },
  );
  const cpuSeconds = window.end(result.cpuSeconds);
  const { perSecond, transactions, failed, meanLatencyMs } = parsePgbenchSummary(result.stdout);
  // Per-transaction log lines: client_id transaction_no latency_us script_no epoch_s epoch_us …
  const latencies: number[] = [];
  for (const file of await readdir(logDir)) {
    for (const line of (await readFile(join(logDir, file), 'utf8')).split('\n')) {
      const us = Number(line.split(' ')[2]);
      if (line && Number.isFinite(us)) latencies.push(us / 1000);
    }
  }
  return {
    tool: 'pgbench',
    program: version || binary,
    script: 'tpcb-like',
    scale: TPCB_SCALE,
    clients: run.clients,
    threads,
    queryMode: 'simple',
    seconds: transactions / perSecond,
    transactions,
    failed,
    perSecond,
    latencyMs: { ...percentiles(latencies), mean: meanLatencyMs },
    cpuSeconds,
  };
}
