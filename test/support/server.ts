import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { freePort } from '../../bench/free-port.js';

// One way to find a free port, the bench's and the drill's too.
export { freePort };

export const TALLY_BIN = fileURLToPath(new URL('../../bin/tally', import.meta.url));
export const ADMIN_TOKEN = 'test-admin-token';

export interface TallyProcess {
  child: ChildProcess;
  output: () => string;
  /** resolves with the exit code (or signal) */
  exited: Promise<number | string>;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/** Runs ./bin/tally (the built CLI) as a real child process against the given database. */
export function runTally(args: string[], env: Record<string, string | undefined>): TallyProcess {
  const child = spawn(process.execPath, [TALLY_BIN, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', TALLY_ADMIN_TOKEN: ADMIN_TOKEN, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string);
  return {
    child,
    output: () => output,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

export interface TallyServer extends TallyProcess {
  url: string;
}

/** `tally serve` on a free port; resolves once /healthz answers 200. Stopped after the file. */
export async function startServer(databaseUrl: string, options: { workers?: number; env?: Record<string, string> } = {}): Promise<TallyServer> {
  const port = await freePort();
  const proc = runTally(['serve', '--port', String(port), '--workers', String(options.workers ?? 1)], {
    DATABASE_URL: databaseUrl,
    HOST: '127.0.0.1',
    ...options.env,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(async () => {
    if (proc.child.exitCode !== null) throw new Error(`tally serve exited: ${proc.output()}`);
    const response = await fetch(`${url}/healthz`).catch(() => null);
    return response?.status === 200;
  }, 30_000);
  afterAll(() => proc.stop('SIGKILL'));
  return { ...proc, url };
}

/**
 * Polls a condition until it holds. Used to await effects in another process (a
 * worker settling) where there is no event to await; the timeout only bounds a failure.
 */
export async function waitUntil(condition: () => Promise<boolean> | boolean, timeoutMs = 20_000, intervalMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
